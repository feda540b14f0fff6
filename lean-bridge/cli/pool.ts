/**
 * The verifier options every command that starts a verifier takes (one table, one parser), turned into the
 * `VerifierSpec` that lean-bridge/verifiers/startVerifier.ts builds every verifier from.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { DEFAULT_LIMITS, INSTALL_LEAN, splitCommandLine, which } from "../server/launch";
import { policyFromFile, type CandidatePolicy } from "../verify/policy";
import { loadOracle } from "../simulator/reference";
import { unreadableReason } from "../util/unreadable";
import type { Verifier } from "../verify/verifier";
import { DEFAULT_CHECK_TIMEOUT_MS, startVerifier, type VerifierSpec } from "../verifiers/startVerifier";
import { DEFAULT_KERNEL_GATE, parseKernelGateMode, type KernelGateMode } from "../verify/gateStage";
import { LEAN_REQUESTS, decideEmbedded, type LeanRequest } from "../embedded/choose";
import { INSTALL_EMBEDDED_LEAN } from "../embedded/install";
import { flagOption, stringOption, type OptionDef, type OptionDefs, type ParsedValues } from "./command";
import { UsageError, parseCount } from "./usage";

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
  lean: {
    type: "string",
    value: "auto|embedded|toolchain",
    help: "Which Lean: the project's toolchain (lake serve), or the embedded Lean 4.35.0 (install: npm run setup:lean; prelude workspaces only, docs/LEAN_VERSIONS.md). auto: lake where it is on PATH, else the embedded Lean where it can judge every file.",
    default: "auto",
  },
  verifier: {
    type: "string",
    value: "kimina:URL",
    help: "Check on a Kimina Lean Server instead (POST URL/api/check; key from LEAN_SERVER_API_KEY). Verdicts name it.",
  },
  "timeout-ms": {
    type: "string",
    value: "N",
    help: "Time limit per check.",
    default: String(DEFAULT_CHECK_TIMEOUT_MS),
  },
  reward: {
    type: "string",
    value: "binary|partial",
    help: "How verdicts become rewards.",
    default: "binary",
  },
  policy: {
    type: "string",
    value: "FILE",
    help: 'Candidate policy changes: {"forbid": [...], "allow": [...], "allowTactics": [...], "maxChars": N} (docs/POLICY.md).',
  },
  oracle: {
    type: "string",
    value: "FILE",
    help: "Simulator only: accepted alternative proofs and axioms per declaration.",
  },
  "kernel-gate": {
    type: "string",
    value: "all|auto|share:X|off",
    help: "Which proofs the kernel replays in a fresh Lean process before they count (docs/POLICY.md). eval, export --verify and Fill Hole always use all.",
    default: "auto",
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
  "sim-edit-ms": {
    type: "string",
    value: "N",
    help: "Simulator only: simulated fixed time of a document change.",
    default: "0",
    advanced: true,
  },
} as const satisfies OptionDefs;

/** `--workers`, for the commands that check many candidates (verify-batch, serve, train). */
export const WORKERS_OPTION = {
  type: "string",
  value: "K",
  help: "Checks run in parallel (server documents).",
  default: "4",
} as const satisfies OptionDef;

function loadPolicy(path: string | undefined): CandidatePolicy | undefined {
  if (!path) return undefined;
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new UsageError(
      `--policy ${path}: ${unreadableReason(error)}; give a JSON file of policy changes, e.g. {"forbid": ["decide"]} (docs/POLICY.md)`,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `--policy ${path}: not JSON (${error instanceof Error ? error.message : String(error)}) (see docs/POLICY.md)`,
    );
  }
  const loaded = policyFromFile(raw);
  if (loaded.kind === "error")
    throw new UsageError(`--policy ${path}: ${loaded.message} (see docs/POLICY.md)`);
  return loaded.policy;
}

/**
 * A `--oracle` file is read by the simulator's process, which starts late (after mining, after Python is ready)
 * and, for `train` without `lake`, only on the fallback: read it here too, so a missing or malformed one is bad
 * usage (exit 2) before anything starts.
 */
function checkOracle(path: string | undefined): void {
  if (path === undefined) return;
  const loaded = loadOracle(resolve(path));
  if (loaded.kind === "error")
    throw new UsageError(
      `--oracle ${loaded.message.replace(resolve(path), path)}; give a JSON file of accepted proofs per declaration, {"alternatives": {"Name": ["proof"]}} (README.md, "The simulator")`,
    );
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
 * What a command's proofs become: rewards (verify, verify-batch, serve, train: the kernel gate as
 * `--kernel-gate` says) or results (eval, export --verify: every proof through the gate).
 */
export type ProofUse = "rewards" | "results";

function kernelGateOption(values: ParsedValues, use: ProofUse): KernelGateMode {
  const given = stringOption(values, "kernel-gate");
  const mode = given === undefined ? DEFAULT_KERNEL_GATE : parseKernelGateMode(given);
  if (mode.kind === "error") throw new UsageError(mode.message);
  if (use === "results" && given !== undefined && mode.kind !== "all")
    throw new UsageError(
      `--kernel-gate ${given}: this command's proofs are results, which the kernel gate always confirms (all); --kernel-gate applies to verify, verify-batch, serve and train`,
    );
  return use === "results" ? { kind: "all" } : mode;
}

/** The verifier the options describe (a usage error for contradictory or malformed ones). */
export function verifierSpec(values: ParsedValues, slots: number, use: ProofUse = "rewards"): VerifierSpec {
  const server = stringOption(values, "server");
  const simulator = flagOption(values, "simulator");
  const kimina = kiminaUrl(stringOption(values, "verifier"));
  if ([server !== undefined, simulator, kimina !== undefined].filter(Boolean).length > 1)
    throw new UsageError("give one of --verifier, --server and --simulator");
  const oracle = stringOption(values, "oracle");
  checkOracle(oracle);
  const extraArgs: string[] = [];
  const declMs = stringOption(values, "sim-decl-ms");
  const headerMs = stringOption(values, "sim-header-ms");
  if (declMs) extraArgs.push("--decl-ms", declMs);
  if (headerMs) extraArgs.push("--header-ms", headerMs);
  const editMs = stringOption(values, "sim-edit-ms");
  if (editMs) extraArgs.push("--edit-ms", editMs);
  let choice: VerifierSpec;
  if (kimina !== undefined) choice = { kind: "kimina", url: kimina };
  else if (simulator)
    choice = { kind: "simulator", ...(oracle ? { oracle: resolve(oracle) } : {}), extraArgs };
  else if (server !== undefined) {
    const serverCommand = splitCommandLine(server);
    if (serverCommand.length === 0) throw new UsageError("--server was given an empty command line");
    choice = { kind: "lean", serverCommand };
  } else choice = { kind: "lean" };
  const lean = leanRequest(stringOption(values, "lean"));
  if (lean !== undefined) {
    if (choice.kind !== "lean" || choice.serverCommand)
      throw new UsageError(
        "--lean chooses the Lean that starts without --server; give one of --lean, --server, --simulator and --verifier",
      );
    choice = { ...choice, lean };
  }
  const policy = loadPolicy(stringOption(values, "policy"));
  const budget = stringOption(values, "memory-budget-mb");
  return {
    ...choice,
    slots,
    timeoutMs: parseCount("--timeout-ms", stringOption(values, "timeout-ms"), DEFAULT_CHECK_TIMEOUT_MS),
    memoryMb: parseCount("--memory-mb", stringOption(values, "memory-mb"), DEFAULT_LIMITS.memoryMb),
    cpuSeconds: parseCount("--cpu-seconds", stringOption(values, "cpu-seconds"), DEFAULT_LIMITS.cpuSeconds),
    sandbox: !flagOption(values, "no-sandbox"),
    kernelGate: kernelGateOption(values, use),
    ...(policy ? { policy } : {}),
    ...(budget !== undefined ? { memoryBudgetMb: parseCount("--memory-budget-mb", budget, 0) } : {}),
  };
}

function leanRequest(given: string | undefined): LeanRequest | undefined {
  if (given === undefined) return undefined;
  const found = LEAN_REQUESTS.find((r) => r === given);
  if (!found) throw new UsageError(`--lean ${given}: expected one of ${LEAN_REQUESTS.join(", ")}`);
  return found;
}

/**
 * Said once per process, as a box on stderr, when a command falls back to the simulator because Lean is not
 * installed: the one behaviour of every command that verifies (README, "The CLI").
 */
export const SIMULATOR_FALLBACK_WARNING =
  box([
    "Lean was not found (`lake` is not on PATH): candidates are checked by the SIMULATOR,",
    "a test double that is NOT Lean. It accepts only the workspace's own proofs (modulo",
    "whitespace) and its oracle's, so verdicts, rewards and pass rates are a dry run.",
    'Install Lean (below; README, "With real Lean") and `lake build` the project for real',
    "verification; pass --simulator to choose the simulator on purpose. A workspace of",
    `prelude files can use the embedded Lean instead: ${INSTALL_EMBEDDED_LEAN}.`,
  ]) + `\n  ${INSTALL_LEAN}\n`;

function box(lines: string[]): string {
  const width = Math.max(...lines.map((l) => l.length));
  const edge = `  ${"*".repeat(width + 6)}`;
  return ["", edge, ...lines.map((l) => `  *  ${l.padEnd(width)}  *`), edge, ""].join("\n");
}

let fallbackSaid = false;

/**
 * The verifier a command uses: the one its options name, or, when they name none and `lake` is not on PATH, the
 * simulator, said once in a box. Every command that verifies (verify, verify-batch, export --verify, import,
 * serve, train, eval) chooses here, so a missing Lean means the same everywhere.
 */
export function chooseVerifier(
  values: ParsedValues,
  slots: number,
  use: ProofUse = "rewards",
  env: NodeJS.ProcessEnv = process.env,
  projectRoot: string | undefined = stringOption(values, "project"),
): { spec: VerifierSpec; fellBack: boolean } {
  const spec = verifierSpec(values, slots, use);
  if (spec.kind !== "lean" || spec.serverCommand !== undefined || which("lake", env))
    return { spec, fellBack: false };
  // The embedded Lean, asked for or able to judge every file of the project, is Lean: no fallback.
  if (spec.lean === "embedded") return { spec, fellBack: false };
  if (
    spec.lean !== "toolchain" &&
    projectRoot !== undefined &&
    decideEmbedded(resolve(projectRoot), "auto", env).kind === "use"
  )
    return { spec, fellBack: false };
  if (!fallbackSaid) process.stderr.write(SIMULATOR_FALLBACK_WARNING + "\n");
  fallbackSaid = true;
  const oracle = stringOption(values, "oracle");
  return {
    spec: { ...spec, kind: "simulator", ...(oracle ? { oracle: resolve(oracle) } : {}), extraArgs: [] },
    fellBack: true,
  };
}

/** Starts the verifier the options describe; a failure to start is a usage error that says what to do. */
export async function openPool(
  projectRoot: string,
  values: ParsedValues,
  slots: number,
  use: ProofUse = "rewards",
): Promise<Verifier> {
  const { spec } = chooseVerifier(values, slots, use, process.env, projectRoot);
  const started = await startVerifier(projectRoot, spec);
  if (started.kind === "error") throw new UsageError(`${started.message}\n${started.hint}`);
  const pool = started.pool;
  if (pool.slotCount < slots)
    process.stderr.write(
      `fim-rlvr: using ${pool.slotCount} slot(s) instead of ${slots}: each Lean worker may use ${spec.memoryMb} MB (--memory-mb) ` +
        `and all of them together ${pool.memoryBudgetMb} MB (--memory-budget-mb)\n`,
    );
  return pool;
}
