/**
 * Every Lean 4 extension of LSP that the project uses, declared once.
 *
 * Sources: leanprover/lean4 src/Lean/Data/Lsp/Extra.lean, Diagnostics.lean, InitShutdown.lean,
 * src/Lean/Server/Watchdog.lean, FileWorker.lean, and ../shared/LEAN_PROTOCOL.md.
 * The simulator and the bridge both import from here, so a field can only be spelled one way.
 */
import { NotificationType, RequestType } from "vscode-jsonrpc";
import type {
  DiagnosticSeverity,
  DocumentUri,
  Position,
  Range,
  TextDocumentIdentifier,
  TextDocumentItem,
  VersionedTextDocumentIdentifier,
  DidChangeTextDocumentParams,
  DidCloseTextDocumentParams,
} from "./lsp";

/** `LeanDiagnosticTag`: 1 = unsolved goals, 2 = goals accomplished. */
export const LeanDiagnosticTag = { unsolvedGoals: 1, goalsAccomplished: 2 } as const;
export type LeanDiagnosticTag = (typeof LeanDiagnosticTag)[keyof typeof LeanDiagnosticTag];

/** Standard LSP diagnostic tags: 1 unnecessary, 2 deprecated. */
export type DiagnosticTag = 1 | 2;

/** Lean's `DiagnosticWith String` as it goes over the wire. */
export interface LeanDiagnostic {
  /** The range shown in the editor; Lean cuts it to the first line (plus one). */
  range: Range;
  /** Extension: the full semantic range before Lean cut it for display. */
  fullRange?: Range;
  severity?: DiagnosticSeverity;
  /** Extension: not shown as a squiggle in VS Code, still listed under "Messages". */
  isSilent?: boolean;
  /** e.g. "lean.unknownIdentifier" in newer Lean; an integer in some tools. */
  code?: string | number;
  /** "Lean 4" from the real server. */
  source?: string;
  message: string;
  tags?: DiagnosticTag[];
  /** Extension: Lean-specific tags, see `LeanDiagnosticTag`. */
  leanTags?: LeanDiagnosticTag[];
  relatedInformation?: { location: { uri: DocumentUri; range: Range }; message: string }[];
}

export interface LeanPublishDiagnosticsParams {
  uri: DocumentUri;
  version?: number;
  diagnostics: LeanDiagnostic[];
  /**
   * Lean >= 4.31 with `incrementalDiagnosticSupport`: false (or absent) means "this is the whole set for the
   * version", true means "append these to what you already have for the version".
   */
  isIncremental?: boolean;
}

/** `LeanFileProgressKind`: 1 processing, 2 fatal error (the whole rest of the file failed). */
export const LeanFileProgressKind = { processing: 1, fatalError: 2 } as const;
export type LeanFileProgressKind = (typeof LeanFileProgressKind)[keyof typeof LeanFileProgressKind];

export interface LeanFileProgressProcessingInfo {
  range: Range;
  /** Absent in older servers; defaults to processing. */
  kind?: LeanFileProgressKind;
}

export interface LeanFileProgressParams {
  textDocument: VersionedTextDocumentIdentifier;
  /** Ranges still being elaborated; `[]` means done (but see the ordering trap in LEAN_PROTOCOL.md). */
  processing: LeanFileProgressProcessingInfo[];
}

export interface WaitForDiagnosticsParams {
  uri: DocumentUri;
  version: number;
}

/** The reply is an empty object; its only meaning is "every diagnostic of that version was sent before me". */
export type WaitForDiagnosticsResult = Record<string, never>;

export interface PlainGoalParams {
  textDocument: TextDocumentIdentifier;
  position: Position;
}

export interface PlainGoal {
  /** Markdown; "no goals" when accomplished. */
  rendered: string;
  /** Pretty-printed goals; empty when accomplished. */
  goals: string[];
}

export interface PlainTermGoal {
  goal: string;
  range: Range;
}

/** `didOpen` with Lean's extra field. */
export interface LeanDidOpenTextDocumentParams {
  textDocument: TextDocumentItem;
  /** always (default) | once | never: whether the worker may run `lake build` for the imports. */
  dependencyBuildMode?: "always" | "once" | "never";
}

/** Capabilities the client announces under `capabilities.lean` in `initialize`. */
export interface LeanClientCapabilities {
  incrementalDiagnosticSupport?: boolean;
  silentDiagnosticSupport?: boolean;
  rpcWireFormat?: "v0" | "v1";
}

/** Lean's server-specific JSON-RPC error codes (Lean.JsonRpc.ErrorCode). */
export const LeanErrorCode = {
  RpcNeedsReconnect: -32900,
  /** The file worker exited ("Server process for {uri} crashed, see stderr for exception."). */
  WorkerExited: -32901,
  /** The file worker crashed ("...crashed, likely due to a stack overflow or a bug."). */
  WorkerCrashed: -32902,
} as const;

/** The string id Lean's watchdog gives its `client/registerCapability` request. */
export const LEAN_WATCHER_REGISTRATION_ID = "register_lean_watcher";

export const DidOpen = new NotificationType<LeanDidOpenTextDocumentParams>("textDocument/didOpen");
export const DidChange = new NotificationType<DidChangeTextDocumentParams>("textDocument/didChange");
export const DidClose = new NotificationType<DidCloseTextDocumentParams>("textDocument/didClose");
export const PublishDiagnostics = new NotificationType<LeanPublishDiagnosticsParams>(
  "textDocument/publishDiagnostics",
);
export const FileProgress = new NotificationType<LeanFileProgressParams>("$/lean/fileProgress");
export const WaitForDiagnostics = new RequestType<WaitForDiagnosticsParams, WaitForDiagnosticsResult, void>(
  "textDocument/waitForDiagnostics",
);
export const PlainGoalRequest = new RequestType<PlainGoalParams, PlainGoal | null, void>("$/lean/plainGoal");
export const PlainTermGoalRequest = new RequestType<PlainGoalParams, PlainTermGoal | null, void>(
  "$/lean/plainTermGoal",
);

/** Messages whose text the verifier recognises, in every spelling Lean has used. */
export const LeanMessages = {
  /**
   * Older Lean: "declaration uses 'sorry'"; newer: "declaration uses `sorry`"; newest names the
   * declaration: "declaration `foo` uses `sorry`".
   */
  sorryWarning: /declaration (?:`[^`\n]*` )?uses ['`]sorry['`]/,
  unsolvedGoals: /^unsolved goals/,
  /** `#print axioms` output; the list may wrap over several lines, and names may contain primes (`foo'`). */
  axioms: /'(.+?)' depends on axioms:\s*\[([^\]]*)\]/,
  noAxioms: /'(.+?)' does not depend on any axioms/,
  heartbeats: /\(deterministic\) timeout/,
  importsOutOfDate: /Imports are out of date and must be rebuilt/,
  /** src/Lean/Elab/Print.lean: `#print axioms` in a file with a `module` header. */
  axiomsInModule: /cannot use `#print axioms` in a `module`/,
} as const;
