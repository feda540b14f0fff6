/** Builds a verifier pool from CLI options: which server, limits, slots. */
import { existsSync, readFileSync, statSync } from "node:fs";
import { policyFromFile, type CandidatePolicy } from "../verify/policy";
import { resolve } from "node:path";
import { DEFAULT_LIMITS, buildLaunch, readToolchain, type ServerChoice } from "../server/launch";
import { VerifierPool } from "../verify/pool";
import type { Verifier } from "../verify/verifier";
import { KiminaVerifier } from "../kimina/verifier";
import { API_KEY_VARIABLE } from "../kimina/protocol";
import { flagOption, stringOption, type OptionDefs, type ParsedValues } from "./command";
import { UsageError, parsePositiveInt } from "./usage";

/** The options every command that starts a verifier takes, with their help text (one table for both). */
export const SERVER_OPTIONS = {
  simulator: {
    type: "boolean",
    help: "Verify with the Lean server simulator (a dry run; no Lean needed). Verdicts say so.",
  },
  server: {
    type: "string",
    value: '"CMD ..."',
    help: 'Any command line speaking Lean\'s server protocol (e.g. "fim-rlvr simulator").',
    default: "lake serve in the project",
  },
  verifier: {
    type: "string",
    value: "kimina:URL",
    help: "Check on a Kimina Lean Server instead (POST URL/api/check; key from LEAN_SERVER_API_KEY). Verdicts name it.",
  },
  "timeout-ms": { type: "string", value: "N", help: "Time limit per check.", default: "60000" },
  reward: {
    type: "string",
    value: "binary|partial",
    help: "How verdicts become rewards.",
    default: "binary",
  },
  policy: {
    type: "string",
    value: "FILE",
    help: 'Candidate policy changes: {"forbid": [...], "allow": [...], "maxChars": N} (docs/POLICY.md).',
  },
  oracle: {
    type: "string",
    value: "FILE",
    help: "Simulator only: accepted alternative proofs and axioms per declaration.",
  },
  "memory-mb": {
    type: "string",
    value: "N",
    help: "Memory limit of each Lean worker (lean -M).",
    default: String(DEFAULT_LIMITS.memoryMb),
    advanced: true,
  },
  "memory-budget-mb": {
    type: "string",
    value: "N",
    help: "Memory for all workers together; it caps the number of slots.",
    default: "3/4 of RAM",
    advanced: true,
  },
  "cpu-seconds": {
    type: "string",
    value: "N",
    help: "CPU-time limit of the server process (0: none).",
    default: String(DEFAULT_LIMITS.cpuSeconds),
    advanced: true,
  },
  "no-sandbox": {
    type: "boolean",
    help: "Do not run Lean inside bubblewrap (used when bwrap is installed).",
    advanced: true,
  },
  "sim-decl-ms": {
    type: "string",
    value: "N",
    help: "Simulator only: simulated time per declaration.",
    default: "0",
    advanced: true,
  },
  "sim-header-ms": {
    type: "string",
    value: "N",
    help: "Simulator only: simulated time to load imports.",
    default: "0",
    advanced: true,
  },
} as const satisfies OptionDefs;

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

/** The Kimina URL of `--verifier kimina:URL`, or undefined when no --verifier was given. */
export function kiminaUrl(spec: string | undefined): string | undefined {
  if (spec === undefined) return undefined;
  const m = /^kimina:(https?:\/\/.+)$/.exec(spec.trim());
  if (!m) throw new UsageError(`--verifier ${spec}: expected kimina:URL (e.g. kimina:http://127.0.0.1:8000)`);
  return m[1];
}

/**
 * The verifier the options ask for: a Kimina Lean Server (`--verifier kimina:URL`), or the pool over Lean's
 * language server (or the simulator).
 */
export async function openPool(projectRoot: string, values: ParsedValues, slots: number): Promise<Verifier> {
  const kimina = kiminaUrl(stringOption(values, "verifier"));
  if (kimina) {
    if (stringOption(values, "server") || flagOption(values, "simulator"))
      throw new UsageError("give one of --verifier, --server and --simulator");
    return new KiminaVerifier({
      url: kimina,
      projectRoot,
      timeoutMs: parsePositiveInt("--timeout-ms", stringOption(values, "timeout-ms"), 60_000),
      concurrency: Math.max(1, slots),
      ...(process.env[API_KEY_VARIABLE] ? { apiKey: process.env[API_KEY_VARIABLE] } : {}),
      ...(() => {
        const policy = loadPolicy(stringOption(values, "policy"));
        return policy ? { policy } : {};
      })(),
    });
  }
  return openLanguageServerPool(projectRoot, values, slots);
}

async function openLanguageServerPool(
  projectRoot: string,
  values: ParsedValues,
  slots: number,
): Promise<VerifierPool> {
  const options = {
    server: stringOption(values, "server"),
    simulator: flagOption(values, "simulator"),
    oracle: stringOption(values, "oracle"),
    "timeout-ms": stringOption(values, "timeout-ms"),
    "memory-mb": stringOption(values, "memory-mb"),
    "cpu-seconds": stringOption(values, "cpu-seconds"),
    "no-sandbox": flagOption(values, "no-sandbox"),
    "sim-decl-ms": stringOption(values, "sim-decl-ms"),
    "sim-header-ms": stringOption(values, "sim-header-ms"),
    policy: stringOption(values, "policy"),
    "memory-budget-mb": stringOption(values, "memory-budget-mb"),
  };
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
