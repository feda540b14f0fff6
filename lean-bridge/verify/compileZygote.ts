/**
 * The embedded gate's compile step without Lean's start-up cost, nor the header's import (most of a small
 * compile's time): the native tool's `--compile-server` (compileServerSource.ts) initializes Lean once, imports
 * each document's header once (`--header`, or a `warm` line ahead of the compiles), and forks a fresh child per
 * compile, which elaborates the rest of the check document on that import (or runs Lean's own command line on
 * it, where the server could not import the header). Each child is a new process in its own session (so
 * a deadline kills it with what it started), its output in files of its own request, under a CPU limit set in
 * the child; the server never elaborates a document itself. A server that holds as many headers as it may says
 * so, and is replaced once its compiles have ended. Each child is confined (Landlock) before it runs
 * anything: it may write beneath its request's own folder only, and cannot signal, trace or open the file
 * descriptors of the server or of any other child. A server or a child that cannot be confined runs nothing,
 * and this server is not used again: `run` answers undefined and the caller starts a fresh sandboxed Lean
 * whose only writable folder is the same one. This module speaks its line protocol and answers as
 * gateProcess.ts does, so the gate reads both alike. The replay step runs there too (`--replay …`, the tool's
 * replay in a forked child), since the server never ran a candidate's code. A server that dies takes its
 * compiles with it (each is reported `signalled`, as a dead gate process is) and is started again for the next
 * compile.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readSync, fstatSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { ProcessResult } from "./gateProcess";

/** Output kept per stream: its end, where Lean's last messages are (as gateProcess.ts keeps). */
const KEEP_BYTES = 1 << 20;

/** The end of a file's text, or "" when it cannot be read. */
function readTail(path: string): string {
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    const size = fstatSync(fd).size;
    const length = Math.min(size, KEEP_BYTES);
    const buffer = Buffer.alloc(length);
    readSync(fd, buffer, 0, length, size - length);
    return buffer.toString("utf8");
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** One request to the server: its command line, the folder it may write, its time limit. */
export interface ServerStep {
  args: readonly string[];
  dir: string;
  timeoutMs: number;
}

interface Pending {
  /** undefined: the child could not be confined, so it ran nothing (the caller starts Lean itself). */
  resolve: (result: ProcessResult | undefined) => void;
  stdoutFile: string;
  stderrFile: string;
  pid?: number;
  timedOut: boolean;
  timer: NodeJS.Timeout;
}

export class CompileZygote {
  private child: ChildProcess | undefined;
  private ready: Promise<boolean> | undefined;
  private readonly pending = new Map<string, Pending>();
  private readonly byPid = new Map<number, string>();
  private nextId = 0;
  /** Why this server's children cannot be confined here, once it said so: it is not used again. */
  private unconfined: string | undefined;
  /**
   * The server holds as many imported headers as it may (it never frees one): no request goes to it again, and
   * once its compiles have ended a fresh server takes its place.
   */
  private retiring = false;
  private replacing: Promise<void> | undefined;
  private drained: (() => void) | undefined;

  /**
   * `command`: the server's command line, already wrapped in the verifier's sandbox (never in its CPU limit,
   * which counts per process and is set in each child instead).
   */
  constructor(
    private readonly command: readonly string[],
    private readonly options: { cwd: string; env: NodeJS.ProcessEnv; cpuSeconds: number },
  ) {}

  /** Starts the server once (again after it died); false when it cannot start. */
  private start(): Promise<boolean> {
    if (this.ready) return this.ready;
    this.ready = new Promise<boolean>((resolve) => {
      let child: ChildProcess;
      try {
        child = spawn(this.command[0]!, this.command.slice(1), {
          cwd: this.options.cwd,
          env: this.options.env,
          stdio: ["pipe", "pipe", "ignore"],
          detached: true,
        });
      } catch {
        resolve(false);
        return;
      }
      this.child = child;
      const timer = setTimeout(() => resolve(false), 60_000);
      const lines = createInterface({ input: child.stdout! });
      lines.on("line", (line) => {
        if (line === "FIMRLVR-ZYGOTE ready") {
          clearTimeout(timer);
          resolve(true);
        } else if (line === "FIMRLVR-ZYGOTE full") {
          this.retiring = true;
        } else if (line.startsWith("FIMRLVR-ZYGOTE unconfined ")) {
          this.refuse(line.slice("FIMRLVR-ZYGOTE unconfined ".length));
          clearTimeout(timer);
          resolve(false);
        } else this.answer(line);
      });
      const gone = () => {
        clearTimeout(timer);
        resolve(false);
        if (this.child === child) {
          this.child = undefined;
          this.ready = undefined;
        }
        for (const [id, p] of this.pending)
          this.finish(id, p, { kind: "signalled", signal: "the compile server died" });
      };
      child.on("error", gone);
      child.on("exit", gone);
      child.stdin!.on("error", () => {});
      this.hold(false);
    });
    return this.ready;
  }

  /**
   * Keeps this process alive while compiles are under way, and only then: an idle server must not keep the
   * verifier from exiting (it ends by itself when its input closes).
   */
  private hold(busy: boolean): void {
    const child = this.child;
    const stream = child?.stdout as unknown as { ref?: () => void; unref?: () => void } | undefined;
    if (busy) {
      child?.ref();
      stream?.ref?.();
    } else {
      child?.unref();
      stream?.unref?.();
    }
  }

  private finish(
    id: string,
    p: Pending,
    result: { kind: "exited"; code: number } | { kind: "signalled"; signal: string },
  ): void {
    clearTimeout(p.timer);
    this.pending.delete(id);
    if (p.pid !== undefined) this.byPid.delete(p.pid);
    if (this.pending.size === 0) {
      this.hold(false);
      this.drained?.();
    }
    const output = { stdout: readTail(p.stdoutFile), stderr: readTail(p.stderrFile) };
    if (p.timedOut) p.resolve({ kind: "timeout", ...output });
    else if (result.kind === "exited") p.resolve({ kind: "exited", code: result.code, ...output });
    else p.resolve({ kind: "signalled", signal: result.signal, ...output });
  }

  /**
   * Why the children of this tool's server cannot be confined on this machine, once a server or a child said
   * so (the gate then compiles in fresh processes); undefined while nothing says so.
   */
  get confinementRefused(): string | undefined {
    return this.unconfined;
  }

  /** Asks the server to kill a child's process group: its pids are of its own PID namespace, only it can name them. */
  private kill(pid: number): void {
    this.child?.stdin?.write(`kill\t${pid}\n`);
  }

  /** No compile goes to this server again; said once, since every gate compile is slower from now on. */
  private refuse(reason: string): void {
    if (this.unconfined !== undefined) return;
    this.unconfined = reason;
    process.stderr.write(
      `fim-rlvr: the kernel gate's compile server cannot confine its compiles here (${reason}): each compile runs as a fresh sandboxed Lean process instead (as safe, slower)\n`,
    );
  }

  private answer(line: string): void {
    const [what, a, b] = line.split(" ");
    if (what === "started" && a !== undefined && b !== undefined) {
      const p = this.pending.get(a);
      if (!p) return;
      p.pid = Number(b);
      this.byPid.set(p.pid, a);
      if (p.timedOut) this.kill(p.pid);
    } else if (what === "unconfined" && a !== undefined) {
      // The child ran nothing. A machine where one child cannot be confined is one where none is trusted to be.
      this.refuse(line.split(" ").slice(2).join(" ") || "a compile could not be confined");
      const p = this.pending.get(a);
      if (!p) return;
      clearTimeout(p.timer);
      this.pending.delete(a);
      if (this.pending.size === 0) {
        this.hold(false);
        this.drained?.();
      }
      p.resolve(undefined);
    } else if ((what === "exited" || what === "signalled") && a !== undefined && b !== undefined) {
      const id = this.byPid.get(Number(a));
      const p = id !== undefined ? this.pending.get(id) : undefined;
      if (id === undefined || !p) return;
      this.finish(
        id,
        p,
        what === "exited"
          ? { kind: "exited", code: Number(b) }
          : { kind: "signalled", signal: `signal ${b}` },
      );
    } else if (what === "refused" && a !== undefined) {
      const p = this.pending.get(a);
      if (p)
        this.finish(a, p, { kind: "signalled", signal: "the compile server could not start the compile" });
    }
  }

  /**
   * Lean's command line `args` in a fresh child that may write beneath `dir` alone (its output goes there
   * too), within `timeoutMs`; undefined when the server cannot run here, or cannot confine the child (the
   * caller then starts Lean itself, in a sandbox of its own).
   */
  async run(args: readonly string[], dir: string, timeoutMs: number): Promise<ProcessResult | undefined> {
    if (!(await this.usable([{ args, dir, timeoutMs }]))) return undefined;
    const step = this.pend({ args, dir, timeoutMs });
    this.child!.stdin!.write(`${step.fields.join("\t")}\n`);
    return step.result;
  }

  /**
   * `first` as `run` runs it, and `then` (its replay) started by the server the moment `first` exits with 0,
   * without a round trip through this process: `then` answers undefined where it could not be confined, and
   * `signalled` where the server refused it (`first` did not succeed). Undefined when the server cannot run.
   */
  async runThen(
    first: ServerStep,
    then: ServerStep,
  ): Promise<{ first: ProcessResult | undefined; then: Promise<ProcessResult | undefined> } | undefined> {
    if (!(await this.usable([first, then]))) return undefined;
    const one = this.pend(first);
    const two = this.pend(then);
    // The second request's fields but its CPU limit, which the server gives it from the first's.
    const [id, , ...rest] = two.fields;
    this.child!.stdin!.write(`${[...one.fields, "--then", id!, ...rest].join("\t")}\n`);
    return { first: await one.result, then: two.result };
  }

  /** Whether requests for these steps can go to the server now (started, or started again after it retired). */
  private async usable(steps: readonly ServerStep[]): Promise<boolean> {
    const fields = steps.flatMap((s) => [s.dir, ...s.args]);
    if (this.unconfined !== undefined || fields.some((a) => /[\t\n]/.test(a) || a === "--then")) return false;
    if (this.retiring) await this.replace();
    return (await this.start()) && this.child?.stdin !== undefined && this.unconfined === undefined;
  }

  /** A request's fields and the answer it will get, registered before the request is written. */
  private pend(step: ServerStep): { fields: string[]; result: Promise<ProcessResult | undefined> } {
    const id = String(++this.nextId);
    const stdoutFile = join(step.dir, `compile-${id}.out`);
    const stderrFile = join(step.dir, `compile-${id}.err`);
    const result = new Promise<ProcessResult | undefined>((resolve) => {
      const p: Pending = {
        resolve,
        stdoutFile,
        stderrFile,
        timedOut: false,
        timer: setTimeout(() => {
          p.timedOut = true;
          if (p.pid !== undefined) this.kill(p.pid);
        }, step.timeoutMs),
      };
      this.pending.set(id, p);
    });
    this.hold(true);
    const fields = [id, String(this.options.cpuSeconds), step.dir, stdoutFile, stderrFile, ...step.args];
    return { fields, result };
  }

  /**
   * Asks a running server to import a header now (`--header <hex>`), ahead of the compiles that begin with it;
   * nothing is answered. A server not started yet, or on its way out, is left alone.
   */
  warm(header: readonly string[]): void {
    if (!this.child?.stdin || this.unconfined !== undefined || this.retiring) return;
    if (header.length !== 2 || header[0] !== "--header" || /[\t\n]/.test(header[1]!)) return;
    this.child.stdin.write(`warm\t${header[1]}\n`);
  }

  /** Once the retiring server's compiles have ended, stops it: the next compile starts a fresh one. */
  private replace(): Promise<void> {
    this.replacing ??= (async () => {
      if (this.pending.size > 0) await new Promise<void>((resolve) => (this.drained = resolve));
      this.drained = undefined;
      this.stop();
      this.retiring = false;
      this.replacing = undefined;
    })();
    return this.replacing;
  }

  /** Stops the server (its children are killed by their deadlines or have ended). */
  stop(): void {
    const child = this.child;
    this.child = undefined;
    this.ready = undefined;
    if (child?.pid !== undefined) killGroup(child.pid);
  }
}

function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // Gone already.
  }
}
