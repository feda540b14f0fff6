/**
 * The trainer process: `<python> -m fim_rlvr --stdio` with the trainer's sources on PYTHONPATH (so only its
 * dependencies need installing), JSON-RPC over its stdin/stdout, stderr kept for error reports. It runs in
 * its own process group so that killing it also ends anything it started (tokenizer threads, data loaders).
 * Under `accelerate launch` this process is the launcher; its ranks run in sessions of their own (torchrun's
 * choice) and end with it (each rank asks the kernel to kill it when its parent dies).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { delimiter } from "node:path";
import { createMessageConnection, StreamMessageWriter, type MessageConnection } from "vscode-jsonrpc/node";
import { streamReader } from "../util/messageReaders";
import { trainerArgs, type TrainerLauncher } from "./launcher";

export interface TrainerLaunch {
  python: string;
  /** The folder that holds the `fim_rlvr` package (the repository's or the extension's trainer/). */
  trainerRoot: string;
  cwd: string;
  env?: NodeJS.ProcessEnv;
  /** One process (default), or `accelerate launch` of N ranks; only rank 0 speaks on stdin/stdout. */
  launcher?: TrainerLauncher;
}

export interface TrainerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export type TrainerSpawn =
  { kind: "ok"; trainer: TrainerProcess } | { kind: "error"; message: string; hint: string };

const STDERR_TAIL_CHARS = 16 * 1024;

export class TrainerProcess {
  private tail = "";
  private partialLine = "";
  private exitInfo: TrainerExit | undefined;
  private readonly lineListeners: ((line: string) => void)[] = [];
  /** Settles when the process has exited (never rejects). */
  readonly exited: Promise<TrainerExit>;

  private constructor(
    private readonly child: ChildProcess,
    readonly connection: MessageConnection,
  ) {
    this.exited = new Promise((resolve) => {
      child.once("exit", (code, signal) => {
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
    child.stderr?.setEncoding("utf8");
    child.stderr?.on("data", (chunk: string) => {
      this.tail = (this.tail + chunk).slice(-STDERR_TAIL_CHARS);
      const lines = (this.partialLine + chunk).split("\n");
      this.partialLine = lines.pop() ?? "";
      for (const line of lines) for (const listener of this.lineListeners) listener(line);
    });
    // A write after the trainer died would otherwise be an unhandled 'error' event (EPIPE).
    child.stdin?.on("error", () => undefined);
  }

  static async spawn(launch: TrainerLaunch): Promise<TrainerSpawn> {
    const env = {
      ...(launch.env ?? process.env),
      PYTHONPATH: [launch.trainerRoot, (launch.env ?? process.env).PYTHONPATH]
        .filter(Boolean)
        .join(delimiter),
      PYTHONUNBUFFERED: "1",
      PYTHONIOENCODING: "utf-8",
    };
    let child: ChildProcess;
    try {
      child = spawn(launch.python, await trainerArgs(launch.launcher ?? { kind: "single" }), {
        cwd: launch.cwd,
        env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true,
      });
    } catch (error) {
      return failedSpawn(launch.python, error);
    }
    const spawnError = await new Promise<Error | undefined>((resolve) => {
      child.once("error", resolve);
      child.once("spawn", () => resolve(undefined));
    });
    if (spawnError) return failedSpawn(launch.python, spawnError);
    const connection = createMessageConnection(
      streamReader(child.stdout!),
      new StreamMessageWriter(child.stdin!),
    );
    return { kind: "ok", trainer: new TrainerProcess(child, connection) };
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last 16 KB the trainer wrote to stderr. */
  get stderrTail(): string {
    return this.tail + this.partialLine;
  }

  /** The exit status, once it has exited. */
  get exit(): TrainerExit | undefined {
    return this.exitInfo;
  }

  /** Called with each complete line the trainer writes to stderr. */
  onStderrLine(listener: (line: string) => void): void {
    this.lineListeners.push(listener);
  }

  /** Kills the trainer's whole process group (no-op once it has exited). */
  kill(signal: NodeJS.Signals = "SIGKILL"): void {
    if (this.exitInfo || this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      this.child.kill(signal); // The group is gone already, or was never made.
    }
  }

  /** Ends the connection, then waits for the process to exit, killing it after `graceMs`. */
  async dispose(graceMs: number): Promise<TrainerExit> {
    const timer = setTimeout(() => this.kill(), graceMs);
    const exit = await this.exited;
    clearTimeout(timer);
    this.connection.dispose();
    return exit;
  }
}

function failedSpawn(python: string, error: unknown): TrainerSpawn {
  const message = error instanceof Error ? error.message : String(error);
  return {
    kind: "error",
    message: `could not start the trainer with ${python}: ${message}`,
    hint: "Check the interpreter given with --python (or the fimRlvr.trainer.python setting), or leave it out to use the managed environment.",
  };
}

/** "exit code 3" / "killed by SIGKILL", for messages. */
export function describeExit(exit: TrainerExit): string {
  return exit.signal ? `killed by ${exit.signal}` : `exit code ${exit.code ?? "?"}`;
}
