/**
 * What a toolchain gives the kernel gate (leanKernelGate.ts): how it compiles a document, runs the replay and
 * checks itself once, with Lake (lakeGateRunner.ts) or on the embedded Lean (embeddedGateRunner.ts). The gate's
 * protocol (the run's folders, the header alone, the statement's reference, reading the answers) is the gate's;
 * a runner only starts processes, each able to write the folder it is given alone.
 */
import type { Limits } from "../server/launch";
import { which } from "../server/launch";
import { sandboxed } from "../server/sandbox";
import type { ProcessResult } from "./gateProcess";
import type { GateReport, GateRequest } from "./kernelGate";

/** What every runner needs of the project. */
export interface GateContext {
  projectRoot: string;
  /** The verifier's limits: Lean's -M, the CPU limit, the sandbox. */
  limits: Limits;
  /** The environment the gate's processes start from. */
  env: NodeJS.ProcessEnv;
}

/**
 * Who a compile is for: `candidate` (the check document, which holds the candidate's text) or `trusted` (what
 * holds none: the statement's reference, the header alone), which a runner may compile where no candidate
 * compile reaches.
 */
export type CompileFor = "candidate" | "trusted";

export interface GateRunner {
  /** How a report names this Lean when it cannot be started ("`lake`", "the embedded Lean"). */
  readonly label: string;
  /**
   * The runner's check, once, before any candidate: undefined when the gate can run here, else the
   * `unavailable` report every proof gets. `check` runs the whole gate on a request of the runner's own.
   */
  selfTest(
    check: (request: GateRequest) => Promise<GateReport>,
    timeoutMs: number,
    started: number,
  ): Promise<GateReport | undefined>;
  /**
   * Lean's command line `args` (a compile), able to write beneath `dir` alone, within `timeoutMs`. `header`: the
   * text the document begins with up to the end of its header (the workspace's imports, no candidate's text),
   * which a runner may import once for every document that begins with it.
   */
  compile(
    args: readonly string[],
    dir: string,
    timeoutMs: number,
    forWhom: CompileFor,
    header?: string,
  ): Promise<ProcessResult>;
  /**
   * The replay step with its arguments (`target`), its output (if any) in `dir`, within `timeoutMs`. `header`: the
   * check document's header (as for `compile`), whose import a runner may use to look up the imported constants.
   */
  replay(target: readonly string[], dir: string, timeoutMs: number, header?: string): Promise<ProcessResult>;
  /**
   * A candidate's compile and, once it succeeded, its replay, without a pause between the two where the runner
   * can chain them (the embedded Lean's candidate compile server); undefined where it cannot (the caller then
   * runs the two steps itself). `replayed` is undefined when the compile failed or the replay could not start
   * there.
   */
  compileThenReplay?(
    compile: { args: readonly string[]; dir: string; timeoutMs: number; header?: string },
    replay: { target: readonly string[]; dir: string; timeoutMs: number },
  ): Promise<{ compiled: ProcessResult; replayed: Promise<ProcessResult | undefined> } | undefined>;
  /** A header (as for `compile`) the runner may import now, ahead of the documents that begin with it. */
  prepare?(header: string): void;
  /** Stops what the runner keeps running between proofs. */
  stop(): void;
}

/**
 * A command line wrapped in the verifier's CPU limit and sandbox, as the server's own (launch.ts): everything
 * read-only to it (the replay program, the check document, the workspace's imports) but `writable`; `readable`
 * names what it must read inside a folder the sandbox hides (the embedded Lean's install, under the home).
 */
export function gateCommand(
  base: readonly string[],
  context: GateContext,
  processEnv: NodeJS.ProcessEnv,
  paths: { writable?: readonly string[]; readable?: readonly string[] } = {},
): string[] {
  const { cpuSeconds } = context.limits;
  const limited =
    cpuSeconds > 0 && which("prlimit", context.env)
      ? ["prlimit", `--cpu=${cpuSeconds}`, "--", ...base]
      : [...base];
  return gateSandboxed(limited, context, processEnv, paths);
}

/** A command line inside the verifier's sandbox (server/sandbox.ts), where the pool uses it; else as it is. */
export function gateSandboxed(
  base: readonly string[],
  context: GateContext,
  processEnv: NodeJS.ProcessEnv,
  paths: { writable?: readonly string[]; readable?: readonly string[] } = {},
): string[] {
  if (!context.limits.sandbox || !which("bwrap", context.env)) return [...base];
  return sandboxed(base, context.projectRoot, {
    writable: paths.writable ?? [],
    readable: paths.readable ?? [],
    env: processEnv,
  });
}
