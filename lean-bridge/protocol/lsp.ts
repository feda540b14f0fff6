/**
 * The subset of standard LSP 3.17 that the bridge and the simulator speak.
 * Lean's own additions live in `lean.ts`; nothing else in the project declares protocol shapes.
 */
import { NotificationType, RequestType, RequestType0, NotificationType0 } from "vscode-jsonrpc";

/** A position in a document: 0-based line, and character counted in UTF-16 code units (Lean has no positionEncoding). */
export interface Position {
  line: number;
  character: number;
}

/** A half-open range [start, end). */
export interface Range {
  start: Position;
  end: Position;
}

export type DocumentUri = string;

/** 1 error, 2 warning, 3 information, 4 hint. */
export type DiagnosticSeverity = 1 | 2 | 3 | 4;

export interface TextDocumentIdentifier {
  uri: DocumentUri;
}

export interface VersionedTextDocumentIdentifier extends TextDocumentIdentifier {
  version: number;
}

export interface TextDocumentItem {
  uri: DocumentUri;
  languageId: string;
  version: number;
  text: string;
}

/** An incremental change (with range) or a full-text replacement (without). */
export type TextDocumentContentChangeEvent = { range: Range; text: string } | { text: string };

export interface DidChangeTextDocumentParams {
  textDocument: VersionedTextDocumentIdentifier;
  contentChanges: TextDocumentContentChangeEvent[];
}

export interface DidCloseTextDocumentParams {
  textDocument: TextDocumentIdentifier;
}

export interface InitializeResult {
  capabilities: Record<string, unknown>;
  serverInfo?: { name: string; version?: string };
}

export interface Registration {
  id: string;
  method: string;
  registerOptions?: unknown;
}

export interface RegistrationParams {
  registrations: Registration[];
}

export interface CancelParams {
  id: number | string;
}

export const Initialize = new RequestType<Record<string, unknown>, InitializeResult, void>("initialize");
export const Initialized = new NotificationType<Record<string, never>>("initialized");
export const Shutdown = new RequestType0<null, void>("shutdown");
export const Exit = new NotificationType0("exit");
export const RegisterCapability = new RequestType<RegistrationParams, null, void>(
  "client/registerCapability",
);
export const SemanticTokensRefresh = new RequestType0<null, void>("workspace/semanticTokens/refresh");
export const InlayHintRefresh = new RequestType0<null, void>("workspace/inlayHint/refresh");
export const CancelRequest = new NotificationType<CancelParams>("$/cancelRequest");
export const DidChangeWatchedFiles = new NotificationType<{ changes: unknown[] }>(
  "workspace/didChangeWatchedFiles",
);

/** Standard JSON-RPC / LSP error codes the bridge must recognise. */
export const LspErrorCode = {
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ServerNotInitialized: -32002,
  RequestCancelled: -32800,
  ContentModified: -32801,
} as const;
