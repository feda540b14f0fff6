/**
 * The messages between the editor and the export child process (dataset/exportWorker.ts), over Node's IPC
 * channel. The editor runs the export in a child process so that mining a large workspace never blocks
 * the extension host's thread; only progress and the result cross the channel.
 */
import type { ExportOptions, ExportProgress, ExportResult } from "./exporter";

/** The verifier the export child starts for itself to verify each hole's own middle (`fim-rlvr export --verify`). */
export type WorkerVerifier = { kind: "simulator" } | { kind: "lean"; serverCommand?: string[] };

/**
 * What can cross a process boundary of `ExportOptions` (no pool, signal or callbacks). `verifier` asks the
 * export child (dataset/exportWorker.ts) to verify with a pool of its own; the in-process runner refuses it.
 */
export type WorkerExportOptions = Omit<ExportOptions, "pool" | "signal" | "onProgress"> & {
  verifier?: WorkerVerifier;
};

export type WorkerRequest = { type: "start"; options: WorkerExportOptions } | { type: "cancel" };

export type WorkerReply =
  { type: "progress"; progress: ExportProgress } | { type: "result"; result: ExportResult };

/**
 * How a caller runs an export: in this process (the CLI), or in a child process (the editor, see
 * extension/exportProcess.ts) so that mining never blocks its thread. Aborting `signal` cancels it.
 */
export type ExportRunner = (
  options: WorkerExportOptions,
  onProgress: (p: ExportProgress) => void,
  signal: AbortSignal,
) => Promise<ExportResult>;
