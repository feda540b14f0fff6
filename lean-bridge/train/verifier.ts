/**
 * The verifier a run uses: the Lean server (`lake serve` in the project, or the user's command line) or the
 * simulator, behind the same pool that `fim-rlvr verify-batch` uses.
 */
import { DEFAULT_LIMITS, buildLaunch, readToolchain, type ServerChoice } from "../server/launch";
import { VerifierPool } from "../verify/pool";
import type { Verifier } from "../verify/verifier";
import { KiminaVerifier } from "../kimina/verifier";
import { API_KEY_VARIABLE } from "../kimina/protocol";
import type { TrainingOptions } from "./session";

export interface StartedVerifier {
  pool: Verifier;
  stop(): Promise<void>;
}

export type VerifierStart =
  { kind: "ok"; verifier: StartedVerifier } | { kind: "error"; message: string; hint: string };

/** Quotes argv words so that the launcher's shell-like splitter gives them back unchanged. */
function joinCommandLine(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'"'"'`)}'`)).join(" ");
}

export async function startVerifier(
  choice: TrainingOptions["verifier"],
  projectRoot: string,
  options: { slots: number; timeoutMs: number; simulatorArgs: string[]; memoryBudgetMb?: number },
): Promise<VerifierStart> {
  if (choice.kind === "kimina") {
    const key = process.env[API_KEY_VARIABLE];
    const pool = new KiminaVerifier({
      url: choice.url,
      projectRoot,
      timeoutMs: options.timeoutMs,
      concurrency: Math.max(1, options.slots),
      ...(key ? { apiKey: key } : {}),
    });
    return { kind: "ok", verifier: { pool, stop: () => pool.stop() } };
  }
  const server: ServerChoice =
    choice.kind === "simulator"
      ? { kind: "simulator", extraArgs: options.simulatorArgs }
      : choice.serverCommand
        ? { kind: "command", commandLine: joinCommandLine(choice.serverCommand) }
        : { kind: "lake" };
  const simulator = choice.kind === "simulator";
  const limits = { ...DEFAULT_LIMITS, sandbox: !simulator };
  const launch = buildLaunch(server, projectRoot, limits);
  if (launch.kind === "error")
    return {
      kind: "error",
      message: launch.message,
      hint: "Install Lean (elan) so that `lake` is on PATH, or use the simulator (--simulator) for a dry run.",
    };
  const started = await VerifierPool.start({
    projectRoot,
    launch: launch.spec,
    slots: options.slots,
    timeoutMs: options.timeoutMs,
    // A simulator document costs almost nothing; a Lean worker up to its -M.
    memoryPerWorkerMb: simulator ? 64 : limits.memoryMb,
    ...(options.memoryBudgetMb !== undefined ? { memoryBudgetMb: options.memoryBudgetMb } : {}),
    toolchain: readToolchain(projectRoot),
  });
  if (started.kind === "error") {
    const stderr = started.stderr.trim()
      ? `\nIts stderr said:\n${started.stderr.trim().split("\n").slice(-10).join("\n")}`
      : "";
    return {
      kind: "error",
      message: `could not start the verifier (${launch.spec.command.join(" ")}): ${started.message}${stderr}`,
      hint: "Check that the project builds with `lake build`, or use --simulator for a dry run.",
    };
  }
  const pool = started.pool;
  return { kind: "ok", verifier: { pool, stop: () => pool.stop() } };
}
