/**
 * The export child process (bundled as dist/exportWorker.js): waits for one "start" request, runs the
 * exporter, reports progress, honours "cancel", sends the result and exits. An internal error becomes an
 * error result, so the editor always hears how the export ended.
 */
import { startVerifier } from "../verifiers/startVerifier";
import { exportDataset, type ExportResult } from "./exporter";
import type { WorkerExportOptions, WorkerReply, WorkerRequest } from "./workerProtocol";

const abort = new AbortController();

function send(reply: WorkerReply): Promise<void> {
  return new Promise((resolve) => process.send!(reply, undefined, undefined, () => resolve()));
}

/** Progress messages are throttled: the editor needs a few per second, not one per file. */
let lastProgress = 0;

process.on("message", (message: WorkerRequest) => {
  if (message.type === "cancel") {
    abort.abort();
    return;
  }
  void (async () => {
    const result = await exportWith(message.options).catch((error: unknown) => ({
      kind: "error" as const,
      message: `internal error in the exporter: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    }));
    await send({ type: "result", result });
    process.disconnect();
  })();
});

/** Runs the export, with a verifier pool of this process's own when asked to verify (stopped afterwards). */
async function exportWith({ verifier, ...options }: WorkerExportOptions): Promise<ExportResult> {
  // A dataset's proofs are results: every one goes through the kernel gate, whatever the caller asked.
  const started = verifier
    ? await startVerifier(options.workspace, { ...verifier, kernelGate: { kind: "all" } })
    : undefined;
  if (started?.kind === "error") return { kind: "error", message: `${started.message}. ${started.hint}` };
  try {
    return await exportDataset({
      ...options,
      ...(started ? { pool: started.pool } : {}),
      signal: abort.signal,
      onProgress: (progress) => {
        const now = performance.now();
        if (now - lastProgress < 100 && progress.done !== progress.total) return;
        lastProgress = now;
        void send({ type: "progress", progress });
      },
    });
  } finally {
    await started?.pool.stop();
  }
}

// The editor went away (window closed): stop and leave the previous dataset as it was.
process.on("disconnect", () => abort.abort());
