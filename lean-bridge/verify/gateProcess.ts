/**
 * One process of the kernel gate (a `lake env lean` compile or replay): run in its own process group under a
 * deadline, killed with the whole group when the deadline passes or when it ends (a candidate's metaprogram may
 * leave children behind: none outlives the step that ran it), its output kept up to a bound.
 */
import { spawn } from "node:child_process";

export type ProcessResult =
  | { kind: "exited"; code: number; stdout: string; stderr: string }
  /** Killed by a signal it did not get from us (out of memory, a crash). */
  | { kind: "signalled"; signal: string; stdout: string; stderr: string }
  | { kind: "timeout"; stdout: string; stderr: string }
  /** It could not be started (the program is missing or not executable). */
  | { kind: "not-started"; message: string };

/** Output kept per stream: the end of it, where Lean's verdict and its last errors are. */
const KEEP_BYTES = 1 << 20;

function keepTail(chunks: Buffer[], bytes: number): { chunks: Buffer[]; bytes: number } {
  while (bytes > KEEP_BYTES && chunks.length > 1) bytes -= chunks.shift()!.length;
  return { chunks, bytes };
}

/** Kills a process group, ignoring one that is already gone. */
function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // The group is gone already.
  }
}

export function runGateProcess(
  command: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs: number },
): Promise<ProcessResult> {
  return new Promise((resolve) => {
    let child: ReturnType<typeof spawn>;
    try {
      child = spawn(command[0]!, command.slice(1), {
        cwd: options.cwd,
        env: options.env ?? process.env,
        stdio: ["ignore", "pipe", "pipe"],
        detached: true, // Its own process group, so the deadline kills what it started too.
      });
    } catch (error) {
      resolve({ kind: "not-started", message: error instanceof Error ? error.message : String(error) });
      return;
    }
    let out = { chunks: [] as Buffer[], bytes: 0 };
    let err = { chunks: [] as Buffer[], bytes: 0 };
    child.stdout?.on("data", (c: Buffer) => {
      out.chunks.push(c);
      out = keepTail(out.chunks, out.bytes + c.length);
    });
    child.stderr?.on("data", (c: Buffer) => {
      err.chunks.push(c);
      err = keepTail(err.chunks, err.bytes + c.length);
    });
    let timedOut = false;
    let settled = false;
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup(child.pid);
    }, options.timeoutMs);
    const text = () => ({
      stdout: Buffer.concat(out.chunks).toString("utf8"),
      stderr: Buffer.concat(err.chunks).toString("utf8"),
    });
    child.on("error", (error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ kind: "not-started", message: error.message });
    });
    // A child it left holding the pipes would keep them open: once it exits, its group goes too.
    child.on("exit", () => killGroup(child.pid));
    child.on("close", (code, signal) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (timedOut) resolve({ kind: "timeout", ...text() });
      else if (code === null) resolve({ kind: "signalled", signal: signal ?? "unknown", ...text() });
      else resolve({ kind: "exited", code, ...text() });
    });
  });
}
