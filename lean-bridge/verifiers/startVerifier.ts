/**
 * Builds the verifier, the one place every command does it: `verify`, `verify-batch`, `export --verify`, `serve`,
 * `train` and the editor's training all describe what they want as a `VerifierSpec` and get a started pool or an
 * error that says what to do. Which verifier checks candidates is `VerifierChoice`: the pool over a Lean
 * language server (or the simulator), or a Kimina Lean Server (kimina/verifier.ts), both behind `Verifier`.
 */
import { availableParallelism } from "node:os";
import {
  DEFAULT_LIMITS,
  buildLaunch,
  readToolchain,
  which,
  type Limits,
  type ServerChoice,
} from "../server/launch";
import { prepareEmbedded, type LeanRequest } from "../embedded/choose";
import { KiminaVerifier } from "../kimina/verifier";
import { prefixModulesPath } from "../util/projectLayout";
import {
  DEFAULT_PREFIX_MIN_DECLARATIONS,
  PREFIX_COMPILE_MEMORY_MB,
  PREFIX_COMPILE_TIMEOUT_MS,
  PrefixModules,
} from "../verify/prefixModules";
import { API_KEY_VARIABLE } from "../kimina/protocol";
import { kernelGateFor } from "./gateConfig";
import { DEFAULT_KERNEL_GATE, type KernelGateMode } from "../verify/gateStage";
import { localGateToolchain } from "../verify/leanKernelGate";
import { DEFAULT_POLICY, withTacticWords, type CandidatePolicy } from "../verify/policy";
import { workspaceTactics } from "../verify/workspaceTactics";
import { VerifierPool } from "../verify/pool";
import type { VerifierIdentity } from "../verify/verdict";
import type { Verifier } from "../verify/verifier";

/**
 * Which verifier: the simulator (a test double, never Lean), Lean (`lake serve`, or the user's command line),
 * or a Kimina Lean Server at `url` (its key from LEAN_SERVER_API_KEY).
 */
export type VerifierChoice =
  | { kind: "simulator"; oracle?: string; extraArgs?: string[] }
  | {
      kind: "lean";
      serverCommand?: string[];
      /** Which Lean without a server command: `auto` (default), the `embedded` Lean, or the `toolchain`'s. */
      lean?: LeanRequest;
    }
  | { kind: "kimina"; url: string };

/** The choice and its limits; every limit has the default the CLI documents. */
export type VerifierSpec = VerifierChoice & {
  /** Documents checked in parallel (default: up to 4, one per core); the memory budget may allow fewer. */
  slots?: number;
  /** Time limit of one check, ms (default 60 s). */
  timeoutMs?: number;
  /** Changes to the candidate policy (docs/POLICY.md). */
  policy?: CandidatePolicy;
  /** Lean's `-M` per worker, MB. */
  memoryMb?: number;
  /** CPU-time limit of the server process, s (0: none). */
  cpuSeconds?: number;
  /** Run Lean inside bubblewrap when it is installed (default: on for Lean; the simulator never is). */
  sandbox?: boolean;
  /** Memory all Lean workers together may use, MB (default: three quarters of this machine's). */
  memoryBudgetMb?: number;
  /**
   * Which proofs the kernel gate confirms (gateStage.ts; default `auto`). Commands whose proofs are results
   * (eval, export --verify, Fill Hole) set `all`.
   */
  kernelGate?: KernelGateMode;
  /**
   * The environment Lean runs in, its PATH finding `lake` (default: this process's). The editor passes the
   * toolchain the user set up for the Lean 4 extension here, never by changing its shared `process.env`.
   */
  env?: NodeJS.ProcessEnv;
  /**
   * The embedded Lean checks a hole through a compiled module of the declarations above it once that many stand
   * above (verify/prefixForm.ts; default DEFAULT_PREFIX_MIN_DECLARATIONS); 0 for every hole, Infinity for none.
   */
  prefixMinDeclarations?: number;
};

export const DEFAULT_CHECK_TIMEOUT_MS = 60_000;

export type VerifierStart = { kind: "ok"; pool: Verifier } | { kind: "error"; message: string; hint: string };

/** Slots when the spec names none: up to 4, one per core. */
export function defaultSlots(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** Quotes argv words so that the launcher's shell-like splitter gives them back unchanged. */
function joinCommandLine(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'"'"'`)}'`)).join(" ");
}

export async function startVerifier(projectRoot: string, given: VerifierSpec): Promise<VerifierStart> {
  // The workspace's own tactics (its `.lean` files, not its dependencies) join the policy's tactic list.
  const spec: VerifierSpec = {
    ...given,
    policy: withTacticWords(given.policy ?? DEFAULT_POLICY, workspaceTactics(projectRoot)),
  };
  if (spec.kind === "kimina") {
    const key = process.env[API_KEY_VARIABLE];
    const concurrency = Math.max(1, spec.slots ?? defaultSlots());
    const identity: VerifierIdentity = { kind: "kimina", version: spec.url, label: "Kimina" };
    // Kimina's server answers messages only: the gate runs here, on local Lean, or not at all.
    const limits: Limits = {
      memoryMb: spec.memoryMb ?? DEFAULT_LIMITS.memoryMb,
      cpuSeconds: spec.cpuSeconds ?? DEFAULT_LIMITS.cpuSeconds,
      sandbox: spec.sandbox ?? DEFAULT_LIMITS.sandbox,
    };
    const gate = localGateToolchain(projectRoot)
      ? kernelGateFor(
          identity,
          projectRoot,
          spec,
          limits,
          concurrency,
          spec.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS,
        )
      : undefined;
    // No gate here (no local Lean to run it on): a silent loss would pay every proof on Kimina's word alone.
    if (!gate && (spec.kernelGate ?? DEFAULT_KERNEL_GATE).kind !== "off")
      return {
        kind: "error",
        message:
          "the Kimina verifier has no kernel gate here: the gate runs on this machine, and neither is `lake` on PATH nor is the embedded Lean installed for a prelude workspace",
        hint: "Install Lean (elan, or npm run setup:lean for the embedded Lean on a prelude workspace); or, for verify, verify-batch, serve and train, pass --kernel-gate off to run on Kimina's word alone (every proved verdict then says confirmedBy: server).",
      };
    const pool = new KiminaVerifier({
      url: spec.url,
      projectRoot,
      timeoutMs: spec.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS,
      concurrency,
      ...(key ? { apiKey: key } : {}),
      ...(spec.policy ? { policy: spec.policy } : {}),
      ...(gate ? { kernelGate: gate } : {}),
    });
    return refuseWithoutGate(pool);
  }
  const simulator = spec.kind === "simulator";
  const server: ServerChoice =
    spec.kind === "simulator"
      ? {
          kind: "simulator",
          ...(spec.oracle ? { oracle: spec.oracle } : {}),
          extraArgs: spec.extraArgs ?? [],
        }
      : spec.serverCommand
        ? { kind: "command", commandLine: joinCommandLine(spec.serverCommand) }
        : { kind: "lake" };
  const limits = {
    memoryMb: spec.memoryMb ?? DEFAULT_LIMITS.memoryMb,
    cpuSeconds: spec.cpuSeconds ?? DEFAULT_LIMITS.cpuSeconds,
    sandbox: !simulator && (spec.sandbox ?? DEFAULT_LIMITS.sandbox),
  };
  // The embedded Lean (lean-bridge/embedded/) where no lake is on PATH and it can judge the workspace, or on request.
  const embedded =
    spec.kind === "lean" && !spec.serverCommand
      ? await prepareEmbedded(projectRoot, spec.lean ?? "auto", limits, spec.env)
      : undefined;
  if (embedded?.kind === "error") return embedded;
  const launch =
    embedded?.kind === "ready"
      ? {
          kind: "ok" as const,
          spec: embedded.launch,
          ...(embedded.warning ? { warning: embedded.warning } : {}),
        }
      : buildLaunch(server, projectRoot, limits, spec.env);
  if (launch.kind === "error")
    return {
      kind: "error",
      message: launch.message,
      hint: "",
    };
  if (launch.warning) process.stderr.write(launch.warning + "\n");
  const started = await VerifierPool.start({
    projectRoot,
    launch: launch.spec,
    slots: spec.slots ?? defaultSlots(),
    timeoutMs: spec.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS,
    // A simulator document costs almost nothing; a Lean worker up to its -M.
    memoryPerWorkerMb: simulator ? 64 : limits.memoryMb,
    sweepStrays: limits.sandbox && which("bwrap", spec.env ?? process.env) !== undefined,
    toolchain: embedded?.kind === "ready" ? embedded.toolchain : readToolchain(projectRoot),
    ...(embedded?.kind === "ready"
      ? {
          identity: { kind: "lean", version: embedded.toolchain, label: embedded.label },
          refuseFile: embedded.refuse,
          prefixes: new PrefixModules({
            lean: embedded.lean,
            root: prefixModulesPath(projectRoot),
            leanPath: embedded.launch.env?.LEAN_PATH ?? "",
            // A rebuilt library must never reuse a prefix compiled against the old one.
            salt: `${embedded.versionText}\n${embedded.buildIdentity}`,
            minDeclarations: spec.prefixMinDeclarations ?? DEFAULT_PREFIX_MIN_DECLARATIONS,
            timeoutMs: PREFIX_COMPILE_TIMEOUT_MS,
            memoryMb: Math.max(limits.memoryMb, PREFIX_COMPILE_MEMORY_MB),
          }),
        }
      : {}),
    ...(spec.policy ? { policy: spec.policy } : {}),
    ...(spec.memoryBudgetMb !== undefined ? { memoryBudgetMb: spec.memoryBudgetMb } : {}),
    kernelGate: (identity) =>
      kernelGateFor(
        identity,
        projectRoot,
        spec,
        limits,
        spec.slots ?? defaultSlots(),
        spec.timeoutMs ?? DEFAULT_CHECK_TIMEOUT_MS,
        embedded?.kind === "ready" ? { kind: "embedded", lean: embedded.lean } : undefined,
      ),
  });
  if (started.kind === "error") {
    const stderr = started.stderr.trim()
      ? `\nIts stderr said:\n${started.stderr.trim().split("\n").slice(-15).join("\n")}`
      : "";
    return {
      kind: "error",
      message: `could not start the verifier (${launch.spec.command.join(" ")}): ${started.message}${stderr}`,
      hint: "Check that the project builds with `lake build`, or use --simulator for a dry run, or --no-sandbox if bubblewrap is the problem.",
    };
  }
  return refuseWithoutGate(started.pool);
}

/**
 * A verifier whose kernel gate cannot run here (its self-test failed: no Lean to run it on, a replay tool that
 * does not build) does not start: it would mask every proof. `--kernel-gate off` is the explicit way to run on
 * the server's word alone.
 */
async function refuseWithoutGate(pool: Verifier): Promise<VerifierStart> {
  const away = await pool.kernelGate?.unavailable();
  if (away?.kind !== "unavailable") return { kind: "ok", pool };
  await pool.stop();
  return {
    kind: "error",
    message: `the kernel gate cannot run here: ${away.message}`,
    hint: `${away.action[0]?.toUpperCase() ?? ""}${away.action.slice(1)}.`,
  };
}
