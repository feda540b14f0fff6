/**
 * The compiled prefix modules of the prefix-import form (prefixForm.ts): each is the file's own text up to a
 * hole's declaration, compiled once by the verifier's Lean into a folder on the server's search path, and named
 * by the hash of what it was compiled from. Checks never wait for a compile: a plan whose module is not built
 * yet starts its compile in the background (one at a time, so checks keep the CPU) and the check uses the whole
 * file meanwhile. A compile that fails is remembered, and that declaration keeps the whole file.
 *
 * The module is compiled from the workspace's text alone, never a candidate's, by a process of its own; its
 * folder is the verifier's, outside what candidate code may write (the sandbox binds it read-only).
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Declaration, ParsedFile } from "../lean/commands";
import { planPrefix, type PrefixPlan } from "./prefixForm";

/**
 * Declarations above a hole from which its checks stand on a compiled prefix. Measured on the embedded Lean 4.35
 * (bench:verify's real-Lean section): with 10 one-line theorems above, a check of the whole file costs about as
 * much as one of the import form, and the compile (a fresh process) would not pay for itself.
 */
export const DEFAULT_PREFIX_MIN_DECLARATIONS = 16;
/** A prefix compile longer than this is stopped; that declaration keeps the whole file. */
export const PREFIX_COMPILE_TIMEOUT_MS = 300_000;
/** Lean's `-M` for a prefix compile at least: it is the workspace's own code, not a candidate's (as for its build). */
export const PREFIX_COMPILE_MEMORY_MB = 4096;

export interface PrefixCompiler {
  /** The `lean` binary that compiles (the verifier's own). */
  lean: string;
  /** Where the modules are written: a root of the server's LEAN_PATH. */
  root: string;
  /** LEAN_PATH for the compile: the workspace's build, the toolchain's library, `root`. */
  leanPath: string;
  /** Names what else a module depends on (the Lean version): part of every module's key. */
  salt: string;
  /** Fewer declarations than this above a hole keep the whole file. */
  minDeclarations: number;
  /** A compile running longer is stopped and that prefix keeps the whole file. */
  timeoutMs: number;
  /** `lean -M`: the compile's memory limit in MB. */
  memoryMb: number;
}

export type PrefixAnswer =
  { kind: "ready"; blanked: string; module: string } | { kind: "whole"; reason: string };

/** Counts of what the form did, for the verifier's metrics. */
export interface PrefixCounts {
  compiled: number;
  failed: number;
  /** Checks that took the whole file while their module compiled. */
  waited: number;
}

export class PrefixModules {
  private readonly ready = new Map<string, string>();
  private readonly failedKeys = new Map<string, string>();
  private readonly queue: PrefixPlan[] = [];
  private readonly queued = new Set<string>();
  private running: Promise<void> | undefined;
  private stopped = false;
  readonly counts: PrefixCounts = { compiled: 0, failed: 0, waited: 0 };
  /** Told each time a module has been compiled (the holes it serves check in the prefix form from then on). */
  private readonly compiledListeners: (() => void)[] = [];

  constructor(private readonly compiler: PrefixCompiler) {
    mkdirSync(compiler.root, { recursive: true });
  }

  /**
   * What the check of a hole in `decl` should stand on now. Never waits. `look`: only what stands now (no
   * compile asked for, nothing counted), for what is not a check.
   */
  forDeclaration(file: ParsedFile, decl: Declaration, look = false): PrefixAnswer {
    const plan = planPrefix(file, decl, this.compiler.salt, this.compiler.minDeclarations);
    if (plan.kind === "whole") return plan;
    if (this.ready.has(plan.key)) return { kind: "ready", blanked: plan.blanked, module: plan.module };
    const failed = this.failedKeys.get(plan.key);
    if (failed !== undefined) return { kind: "whole", reason: failed };
    if (this.alreadyBuilt(plan)) return { kind: "ready", blanked: plan.blanked, module: plan.module };
    if (look) return { kind: "whole", reason: `the prefix module ${plan.module} is not compiled` };
    this.enqueue(plan);
    this.counts.waited++;
    return { kind: "whole", reason: `the prefix module ${plan.module} is being compiled` };
  }

  /** `listener` runs each time a module has been compiled, from then on. */
  onCompiled(listener: () => void): void {
    this.compiledListeners.push(listener);
  }

  /** Resolves when every compile asked for so far has finished (tests and benchmarks wait on it). */
  async settled(): Promise<void> {
    while (this.running) await this.running;
  }

  stop(): void {
    this.stopped = true;
    this.queue.length = 0;
  }

  /** A module compiled by an earlier run: its key file must name the same key, or the name is taken. */
  private alreadyBuilt(plan: Extract<PrefixPlan, { kind: "import" }>): boolean {
    const keyFile = join(this.compiler.root, `${plan.module}.key`);
    if (!existsSync(join(this.compiler.root, `${plan.module}.olean`)) || !existsSync(keyFile)) return false;
    const stored = readFileSync(keyFile, "utf8").trim();
    if (stored !== plan.key) {
      this.failedKeys.set(plan.key, `the module name ${plan.module} is taken by another prefix`);
      return false;
    }
    this.ready.set(plan.key, plan.module);
    return true;
  }

  private enqueue(plan: PrefixPlan): void {
    if (plan.kind !== "import" || this.queued.has(plan.key) || this.stopped) return;
    this.queued.add(plan.key);
    this.queue.push(plan);
    if (!this.running)
      this.running = this.drain().finally(() => {
        this.running = undefined;
      });
  }

  private async drain(): Promise<void> {
    for (let plan = this.queue.shift(); plan && !this.stopped; plan = this.queue.shift()) {
      if (plan.kind !== "import") continue;
      const outcome = await this.compile(plan);
      this.queued.delete(plan.key);
      if (outcome.kind === "ok") {
        this.ready.set(plan.key, plan.module);
        this.counts.compiled++;
        for (const listener of this.compiledListeners) listener();
      } else {
        this.failedKeys.set(plan.key, `the prefix module did not compile: ${outcome.message}`);
        this.counts.failed++;
      }
    }
  }

  /**
   * Compiles in a staging folder of its own and renames the `.olean` into place, key file last: a module is
   * on the search path whole or not at all, and a key file always names a complete module.
   */
  private compile(
    plan: Extract<PrefixPlan, { kind: "import" }>,
  ): Promise<{ kind: "ok" } | { kind: "error"; message: string }> {
    const { root, lean, leanPath, timeoutMs, memoryMb } = this.compiler;
    const stage = mkdtempSync(join(root, ".compile-"));
    const source = join(stage, `${plan.module}.lean`);
    writeFileSync(source, plan.moduleText);
    return new Promise((resolve) => {
      let said = "";
      const child = spawn(lean, [`-M${memoryMb}`, "-o", join(stage, `${plan.module}.olean`), source], {
        cwd: stage,
        env: { ...process.env, LEAN_PATH: leanPath },
        stdio: ["ignore", "pipe", "pipe"],
      });
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      const keep = (b: Buffer) => {
        if (said.length < 4000) said += b.toString("utf8");
      };
      child.stdout.on("data", keep);
      child.stderr.on("data", keep);
      const finish = (result: { kind: "ok" } | { kind: "error"; message: string }) => {
        clearTimeout(timer);
        rmSync(stage, { recursive: true, force: true });
        resolve(result);
      };
      child.on("error", (e) => finish({ kind: "error", message: `${lean} could not start: ${e.message}` }));
      child.on("close", (code, signal) => {
        if (code !== 0) {
          const why = signal ? `stopped by ${signal} (over ${timeoutMs} ms?)` : `exit ${code}`;
          finish({ kind: "error", message: `${why}: ${said.trim().split("\n").slice(0, 3).join(" / ")}` });
          return;
        }
        try {
          renameSync(join(stage, `${plan.module}.olean`), join(root, `${plan.module}.olean`));
          writeFileSync(join(root, `${plan.module}.key.tmp`), plan.key + "\n");
          renameSync(join(root, `${plan.module}.key.tmp`), join(root, `${plan.module}.key`));
          finish({ kind: "ok" });
        } catch (e) {
          finish({ kind: "error", message: (e as Error).message });
        }
      });
    });
  }
}
