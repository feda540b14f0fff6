/** Builds a verifier pool from CLI options: which server, limits, slots. */
import { existsSync, readFileSync, statSync } from "node:fs";
import { policyFromFile, type CandidatePolicy } from "../verify/policy";
import { resolve } from "node:path";
import { DEFAULT_LIMITS, buildLaunch, readToolchain, type ServerChoice } from "../server/launch";
import { VerifierPool } from "../verify/pool";
import { UsageError, parsePositiveInt } from "./usage";

export interface ServerOptions {
  server?: string;
  simulator?: boolean;
  oracle?: string;
  "timeout-ms"?: string;
  "memory-mb"?: string;
  "cpu-seconds"?: string;
  "no-sandbox"?: boolean;
  "sim-decl-ms"?: string;
  "sim-header-ms"?: string;
  policy?: string;
  "memory-budget-mb"?: string;
}

export const SERVER_OPTION_SPEC = {
  server: { type: "string" },
  simulator: { type: "boolean" },
  oracle: { type: "string" },
  "timeout-ms": { type: "string" },
  "memory-mb": { type: "string" },
  "cpu-seconds": { type: "string" },
  "no-sandbox": { type: "boolean" },
  "sim-decl-ms": { type: "string" },
  "sim-header-ms": { type: "string" },
  policy: { type: "string" },
  "memory-budget-mb": { type: "string" },
} as const;

function loadPolicy(path: string | undefined): CandidatePolicy | undefined {
  if (!path) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new UsageError(`--policy ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
  const loaded = policyFromFile(raw);
  if (loaded.kind === "error")
    throw new UsageError(`--policy ${path}: ${loaded.message} (see docs/POLICY.md)`);
  return loaded.policy;
}

export function requireProject(dir: string | undefined, flag = "--project"): string {
  if (!dir)
    throw new UsageError(`${flag} DIR is required: the root of the Lean project (where lean-toolchain is)`);
  const root = resolve(dir);
  if (!existsSync(root) || !statSync(root).isDirectory())
    throw new UsageError(`${flag} ${dir}: no such directory`);
  return root;
}

export async function openPool(
  projectRoot: string,
  options: ServerOptions,
  slots: number,
): Promise<VerifierPool> {
  if (options.server && options.simulator)
    throw new UsageError("give either --server or --simulator, not both");
  const extraArgs: string[] = [];
  if (options["sim-decl-ms"]) extraArgs.push("--decl-ms", options["sim-decl-ms"]);
  if (options["sim-header-ms"]) extraArgs.push("--header-ms", options["sim-header-ms"]);
  const choice: ServerChoice = options.simulator
    ? { kind: "simulator", ...(options.oracle ? { oracle: resolve(options.oracle) } : {}), extraArgs }
    : options.server
      ? { kind: "command", commandLine: options.server }
      : { kind: "lake" };
  const limits = {
    memoryMb: parsePositiveInt("--memory-mb", options["memory-mb"], DEFAULT_LIMITS.memoryMb),
    cpuSeconds: parsePositiveInt("--cpu-seconds", options["cpu-seconds"], DEFAULT_LIMITS.cpuSeconds),
    sandbox: !options["no-sandbox"] && !options.simulator,
  };
  const policy = loadPolicy(options.policy);
  const launch = buildLaunch(choice, projectRoot, limits);
  if (launch.kind === "error") throw new UsageError(launch.message);
  const started = await VerifierPool.start({
    projectRoot,
    launch: launch.spec,
    slots,
    timeoutMs: parsePositiveInt("--timeout-ms", options["timeout-ms"], 60_000),
    // A simulator document costs almost nothing; Lean's workers cost up to their -M each.
    memoryPerWorkerMb: options.simulator ? 64 : limits.memoryMb,
    toolchain: readToolchain(projectRoot),
    ...(policy ? { policy } : {}),
    ...(options["memory-budget-mb"] !== undefined
      ? { memoryBudgetMb: parsePositiveInt("--memory-budget-mb", options["memory-budget-mb"], 0) }
      : {}),
  });
  if (started.kind === "error") {
    const stderr = started.stderr.trim()
      ? `\nIts stderr said:\n${started.stderr.trim().split("\n").slice(-15).join("\n")}`
      : "";
    throw new UsageError(
      `could not start the verifier (${launch.spec.command.join(" ")}): ${started.message}${stderr}\n` +
        "Check that the project builds with `lake build`, or pass --simulator for a dry run, or --no-sandbox if bubblewrap is the problem.",
    );
  }
  const pool = started.pool;
  if (pool.slotCount < slots)
    process.stderr.write(
      `fim-rlvr: using ${pool.slotCount} slot(s) instead of ${slots}: each Lean worker may use ${limits.memoryMb} MB (--memory-mb) ` +
        `and all of them together ${pool.memoryBudgetMb} MB (--memory-budget-mb)\n`,
    );
  return pool;
}
