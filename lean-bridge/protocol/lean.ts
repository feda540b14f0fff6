/**
 * Lean 4's extensions of LSP, declared once. Everything standard comes from vscode-languageserver-protocol
 * (types and typed request objects); only what Lean adds or changes is here.
 *
 * Sources: leanprover/lean4 src/Lean/Data/Lsp/Extra.lean, Diagnostics.lean, InitShutdown.lean,
 * src/Lean/Server/Watchdog.lean, FileWorker.lean, and ../shared/LEAN_PROTOCOL.md.
 * The simulator and the bridge both import from here, so a field can only be spelled one way.
 */
import { NotificationType, RequestType } from "vscode-jsonrpc";
import type {
  Diagnostic,
  DidOpenTextDocumentParams,
  DocumentUri,
  PublishDiagnosticsParams,
  Range,
  TextDocumentPositionParams,
  VersionedTextDocumentIdentifier,
} from "vscode-languageserver-protocol";

/** `LeanDiagnosticTag`: 1 = unsolved goals, 2 = goals accomplished. */
export const LeanDiagnosticTag = { unsolvedGoals: 1, goalsAccomplished: 2 } as const;
export type LeanDiagnosticTag = (typeof LeanDiagnosticTag)[keyof typeof LeanDiagnosticTag];

/**
 * Lean's `DiagnosticWith String` as it goes over the wire: an LSP diagnostic whose message is always
 * plain text, with Lean's extra fields.
 */
export interface LeanDiagnostic extends Omit<Diagnostic, "message"> {
  /** Lean's message, rendered as plain text. */
  message: string;
  /** Extension: the full semantic range before Lean cut it for display (`range` is its first line). */
  fullRange?: Range;
  /** Extension: not shown as a squiggle in VS Code, still listed under "Messages". */
  isSilent?: boolean;
  /** Extension: Lean-specific tags, see `LeanDiagnosticTag`. */
  leanTags?: LeanDiagnosticTag[];
}

export interface LeanPublishDiagnosticsParams extends Omit<PublishDiagnosticsParams, "diagnostics"> {
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

/**
 * `$/lean/plainGoal` and `$/lean/plainTermGoal` take a plain text-document position. The verifier never sends
 * them (it reads goals from Lean's messages about its own `done` probe: verify/goals.ts, goalAtHole.ts); the
 * simulator answers them as Lean does, and the real-Lean tier asks the embedded Lean through them.
 */
export type PlainGoalParams = TextDocumentPositionParams;

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
export interface LeanDidOpenTextDocumentParams extends DidOpenTextDocumentParams {
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

/**
 * `$/cancelRequest`'s parameters. Standard JSON-RPC, but vscode-jsonrpc keeps its own declaration internal
 * and vscode-languageserver-protocol does not re-export one, so the simulator (which answers cancels) reads it here.
 */
export interface CancelParams {
  id: number | string;
}

/** The string id Lean's watchdog gives its `client/registerCapability` request. */
export const LEAN_WATCHER_REGISTRATION_ID = "register_lean_watcher";

/** Lean's didOpen (with `dependencyBuildMode`); didChange and didClose are the library's. */
export const DidOpen = new NotificationType<LeanDidOpenTextDocumentParams>("textDocument/didOpen");
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
  /**
   * The sticky information a worker publishes when an import changed while the file was open
   * (src/Lean/Server/FileWorker.lean, `handleStaleDependency`): it keeps elaborating against the old
   * imports. Range 0:0–1:0, `fullRange` to the end of the file, severity information.
   */
  importsStale: /Imports are out of date and should be rebuilt/,
  /** src/Lean/Elab/Print.lean: `#print axioms` in a file with a `module` header. */
  axiomsInModule: /cannot use `#print axioms` in a `module`/,
} as const;
