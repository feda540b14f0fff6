/**
 * Runs an export in a child process (dist/exportWorker.js) so the extension host's thread stays free while
 * a large workspace is mined. Progress and the result come back over IPC; cancel asks the child to stop
 * (it discards its staging folder) and kills it if it does not end within a grace period.
 */
import { fork, type ChildProcess } from "node:child_process";
import type { ExportProgress, ExportResult } from "../lean-bridge/dataset/exporter";
import type {
  ExportRunner,
  WorkerExportOptions,
  WorkerReply,
  WorkerRequest,
} from "../lean-bridge/dataset/workerProtocol";

export type { ExportRunner } from "../lean-bridge/dataset/workerProtocol";

/** How long a cancelled child may take to clean up before it is killed. */
const CANCEL_GRACE_MS = 10_000;

export class ExportChild {
  readonly result: Promise<ExportResult>;
  private readonly child: ChildProcess;
  private cancelled = false;

  private constructor(
    workerPath: string,
    options: WorkerExportOptions,
    onProgress: (p: ExportProgress) => void,
    env: NodeJS.ProcessEnv,
  ) {
    // In VS Code, process.execPath is Electron: ELECTRON_RUN_AS_NODE makes it a plain Node for the child.
    this.child = fork(workerPath, [], {
      env: { ...env, ELECTRON_RUN_AS_NODE: "1" },
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      execArgv: [],
    });
    let stderr = "";
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
    });
    this.result = new Promise<ExportResult>((resolve) => {
      let result: ExportResult | undefined;
      this.child.on("message", (reply: WorkerReply) => {
        if (reply.type === "progress") onProgress(reply.progress);
        else result = reply.result;
      });
      this.child.on("error", (error) =>
        resolve({
          kind: "error",
          message: `could not start the export process (${workerPath}): ${error.message}`,
        }),
      );
      this.child.on("exit", (code, signal) => {
        if (result) resolve(result);
        else if (this.cancelled) resolve({ kind: "cancelled" });
        else
          resolve({
            kind: "error",
            message:
              `the export process ended without a result (${signal ?? `exit code ${code}`})` +
              (stderr.trim() ? `: ${stderr.trim().split("\n").slice(-5).join(" / ")}` : "") +
              ". The previous dataset, if any, is unchanged; try again, or run `fim-rlvr export` in a terminal to see more.",
          });
      });
    });
    this.send({ type: "start", options });
  }

  /** `env`: the child's environment (the editor's Lean toolchain in its PATH; default this process's). */
  static start(
    workerPath: string,
    options: WorkerExportOptions,
    onProgress: (p: ExportProgress) => void,
    env: NodeJS.ProcessEnv = process.env,
  ): ExportChild {
    return new ExportChild(workerPath, options, onProgress, env);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  cancel(): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.send({ type: "cancel" });
    const timer = setTimeout(() => this.child.kill("SIGKILL"), CANCEL_GRACE_MS);
    void this.result.finally(() => clearTimeout(timer));
  }

  private send(request: WorkerRequest): void {
    if (this.child.connected) this.child.send(request);
  }
}

/**
 * The runner the editor uses for the export command and for mining before training: each export in its own
 * child process. `onChild` sees each child as it starts (tests check that it is a separate process).
 */
export function childProcessRunner(
  workerPath: string,
  onChild?: (child: ExportChild) => void,
  env: () => NodeJS.ProcessEnv = () => process.env,
): ExportRunner {
  return (options, onProgress, signal) => {
    const child = ExportChild.start(workerPath, options, onProgress, env());
    onChild?.(child);
    if (signal.aborted) child.cancel();
    else signal.addEventListener("abort", () => child.cancel(), { once: true });
    return child.result;
  };
}
