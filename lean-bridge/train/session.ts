/**
 * The training host's public API, shared by the CLI (`fim-rlvr train`) and the VS Code extension: it prepares
 * Python, mines or loads the dataset, starts the verifier pool and the run's verifier service over it (the only
 * road from the trainer to the verifier), spawns the trainer, and turns its messages into events. It never
 * imports `vscode`.
 */
import { appendFileSync, existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { TRAINER_PROTOCOL_VERSION, type TrainConfigWire } from "../protocol/trainer";
import type { ExportRunner } from "../dataset/workerProtocol";
import { packageRoot } from "../server/launch";
import { checkKinds, prepareTarget, withGoals, type MiningSplit } from "./dataset";
import type { ServiceVerifier } from "../serve/service";
import { defaultSlots, startVerifier, type VerifierSpec } from "../verifiers/startVerifier";
import { findPython } from "./python";
import { latestCheckpoint } from "./checkpoints";
import { TrainerRun, emit } from "./run";
import { startRunService } from "./runService";
import { taskTable } from "../serve/tasks";
import { TrainerProcess } from "./trainerProcess";
import type { TrainerLauncher } from "./launcher";
import type { TrainingEvents, TrainingPhase, TrainingSession } from "./sessionTypes";
import { reachWarning, simulatorReach } from "./simulatorReach";
import { resolveOracle } from "../simulator/reference";

export type { TrainConfigWire } from "../protocol/trainer";
export { latestCheckpoint } from "./checkpoints";
export type { TrainerLauncher } from "./launcher";
export type {
  TrainingEvents,
  TrainingOutcome,
  TrainingPhase,
  TrainingSession,
  VerifierStats,
} from "./sessionTypes";

export interface TrainingOptions {
  /** A Lean workspace (mined first) or a dataset folder (one that holds tasks.jsonl). */
  target: string;
  /**
   * For a dataset folder: the Lean project its files are checked in, instead of the workspace its report.json
   * names (`train DATASET_DIR --project DIR`). Every file of the dataset must read the same there.
   */
  project?: string;
  /** Where the run's files go (created when missing). */
  runDir: string;
  /** The trainer's TrainConfig, snake_case keys (algorithm, algo_config, model, steps, group_size, ...). */
  config: TrainConfigWire;
  /** How verdicts become rewards (see lean-bridge/verify/rewards.ts). */
  reward: "binary" | "partial";
  /**
   * The simulator (a test double, never Lean), Lean (optionally through a given server command line) or a Kimina
   * Lean Server (`{ kind: "kimina", url }`), with the
   * verifier's limits (slots, time limit per check, candidate policy, memory): built by the same function as every
   * command's verifier (lean-bridge/verifiers/startVerifier.ts).
   */
  verifier: VerifierSpec;
  /** Continue from runDir/checkpoints/latest. */
  resume: boolean;
  /**
   * How trainer processes start: one process (default), or `accelerate launch` with N processes (DDP, or what
   * the accelerate config file says: DeepSpeed ZeRO-2, several machines). Every process gets its rewards from the run's verifier
   * service; only rank 0 talks to this host.
   */
  launcher?: TrainerLauncher;
  /** The Python interpreter to run the trainer with; else the managed virtual environment. */
  python?: string;
  /** Aborting it before training starts cancels the start (startTraining answers with an error). */
  signal?: AbortSignal;
  /**
   * How a workspace target is mined (default: in this process). The editor passes a child-process runner
   * (extension/exportProcess.ts) so that mining a large workspace never blocks the extension host's thread.
   */
  exporter?: ExportRunner;
  /** How a workspace target is split when mined (seed of the held-out draw, fractions); the exporter's defaults. */
  split?: MiningSplit;
  /** Tuning and test knobs; every one has a default that suits real runs. */
  advanced?: AdvancedOptions;
}

export interface AdvancedOptions {
  /** The folder holding the `fim_rlvr` package (default: trainer/ of this program's installation). */
  trainerRoot?: string;
  /** How long `initialize` may take, model building included (default 10 minutes). */
  initializeTimeoutMs?: number;
  /** How long the trainer may take to checkpoint after `train/stop` before it is killed (default 2 minutes). */
  stopTimeoutMs?: number;
  /** Wraps the verifier the run's service calls (benchmarks add a simulated cost per check). */
  wrapVerifier?: (verifier: ServiceVerifier) => ServiceVerifier;
}

export type TrainingStart =
  { kind: "started"; session: TrainingSession } | { kind: "error"; message: string; hint: string };

const DEFAULT_INIT_TIMEOUT_MS = 10 * 60_000;
const DEFAULT_STOP_TIMEOUT_MS = 2 * 60_000;
export function defaultTrainerRoot(): string {
  return join(packageRoot(typeof __filename === "string" ? __filename : process.cwd()), "trainer");
}

export async function startTraining(
  options: TrainingOptions,
  events: TrainingEvents,
): Promise<TrainingStart> {
  const runDir = resolve(options.runDir);
  const advanced = options.advanced ?? {};
  const trainerRoot = resolve(advanced.trainerRoot ?? defaultTrainerRoot());
  const phase = (p: TrainingPhase, detail?: string) => {
    try {
      events.onPhase?.(p, detail);
    } catch {
      // See emit().
    }
  };
  try {
    mkdirSync(runDir, { recursive: true });
  } catch (error) {
    return {
      kind: "error",
      message: `cannot create the run folder ${runDir}: ${String(error)}`,
      hint: "Choose another folder with --out.",
    };
  }
  if (options.resume && !latestCheckpoint(runDir))
    return {
      kind: "error",
      message: `--resume: ${runDir} has no complete checkpoint (checkpoints/latest)`,
      hint: "Give the RUN_DIR of an earlier run with --out, or leave --resume out to start afresh.",
    };

  const config = { ...options.config };
  if (typeof config.model === "string") {
    config.model = resolve(config.model);
    if (!existsSync(join(config.model, "config.json")))
      return {
        kind: "error",
        message: `model ${config.model}: ${existsSync(config.model) ? "no config.json there, so it is not a Hugging Face model folder" : "no such folder"}`,
        hint: "Give a Hugging Face causal LM folder (config.json, weights, tokenizer), or leave --model out for the embedded tiny model.",
      };
  }
  const cancelled = () =>
    options.signal?.aborted
      ? { kind: "error" as const, message: "the start was cancelled", hint: "" }
      : undefined;

  const prepared = await prepareTarget(options.target, runDir, {
    resume: options.resume,
    verifier: options.verifier.kind,
    ...(options.project ? { project: options.project } : {}),
    onMining: () => phase("mining", options.target),
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.exporter ? { exporter: options.exporter } : {}),
    ...(options.split ? { split: options.split } : {}),
  });
  if (prepared.kind === "error") return prepared;
  const kinds = checkKinds(prepared.dataset, config.kinds);
  if (kinds.kind === "error") return kinds;
  const stop1 = cancelled();
  if (stop1) return stop1;

  phase("preparing-python");
  const python = await findPython({
    trainerRoot,
    ...(options.python ? { python: options.python } : {}),
    onProgress: (line) => phase("preparing-python", line),
  });
  if (python.kind === "error") return python;
  const stop2 = cancelled();
  if (stop2) return stop2;

  phase("starting-verifier");
  const slots = options.verifier.slots ?? defaultSlots();
  const started = await startVerifier(prepared.projectRoot, { ...options.verifier, slots });
  if (started.kind === "error") return started;
  const pool = started.pool;
  if (pool.slotCount < slots)
    emit(events.onLog, {
      level: "warning",
      message:
        `the verifier checks ${pool.slotCount} candidate(s) at a time instead of ${slots}: the memory budget ` +
        `(${pool.memoryBudgetMb} MB) ` +
        "allows no more Lean workers. " +
        "Raise the budget (fimRlvr.verifier.memoryBudgetMb in VS Code) for more parallel checks.",
    });
  if (options.signal?.aborted) {
    await pool.stop();
    return { kind: "error", message: "the start was cancelled", hint: "" };
  }
  // Tasks the simulator can never reward (no reference, no oracle proof): said before any compute is spent, and
  // a run that could learn nothing at all is refused (simulatorReach.ts).
  if (pool.identity.kind === "simulator") {
    const oracle = resolveOracle(
      prepared.projectRoot,
      options.verifier.kind === "simulator" && options.verifier.oracle
        ? resolve(prepared.projectRoot, options.verifier.oracle)
        : undefined,
    );
    const warning = reachWarning(
      simulatorReach(prepared.dataset.dir, oracle.kind === "ok" ? oracle.resolved.oracle : {}),
    );
    if (warning?.nothingToLearn) {
      await pool.stop();
      return {
        kind: "error",
        message: `nothing to train on with the simulator: ${warning.message}`,
        hint: "",
      };
    }
    if (warning) emit(events.onLog, { level: "warning", message: warning.message });
  }
  // A mined dataset gets the goal at each hole from this verifier, for the prompts (train/dataset.ts).
  let dataset = prepared.dataset;
  if (prepared.mined) {
    const goals = await withGoals(dataset, pool, options.signal ? { signal: options.signal } : {});
    if (goals.kind !== "ok") {
      await pool.stop();
      return goals.kind === "cancelled"
        ? { kind: "error", message: "the start was cancelled", hint: "" }
        : goals;
    }
    dataset = goals.dataset;
    emit(events.onLog, {
      level: "info",
      message: `goals at the holes, for the prompts: ${goals.report.withGoal} of ${goals.report.asked} read with ${goals.report.verifier}`,
    });
  }

  // The run's verifier service: every trainer process (each rank, under accelerate) checks candidates there.
  // The run that observes the service's answers exists only once the trainer is spawned, after the service starts.
  const observer: { run?: TrainerRun } = {};
  const service = await startRunService(
    advanced.wrapVerifier ? advanced.wrapVerifier(pool) : pool,
    taskTable(dataset.tasks, dataset.files),
    options.reward,
    (verdicts) => observer.run?.observe(verdicts),
  );
  if (service.kind === "error") {
    await pool.stop();
    return service;
  }
  const launcher = options.launcher ?? { kind: "single" };

  phase(
    "starting-trainer",
    launcher.kind === "accelerate" ? `accelerate launch (${python.python})` : python.python,
  );
  const spawned = await TrainerProcess.spawn({ python: python.python, trainerRoot, cwd: runDir, launcher });
  if (spawned.kind === "error") {
    await service.service.stop();
    await pool.stop();
    return spawned;
  }
  const trainer = spawned.trainer;
  const stderrLog = join(runDir, "trainer.stderr.log");
  trainer.onStderrLine((line) => {
    try {
      appendFileSync(stderrLog, line + "\n");
    } catch {
      // The log is a convenience; a full disk shows up elsewhere.
    }
  });

  const run = new TrainerRun(
    runDir,
    trainer,
    pool,
    service.service,
    events,
    phase,
    advanced.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS,
  );
  observer.run = run;
  run.wire();
  trainer.connection.listen();

  const init = await run.initialize(
    {
      protocolVersion: TRAINER_PROTOCOL_VERSION,
      config,
      datasetDir: dataset.dir,
      runDir,
      resume: options.resume,
      verifier: pool.identity,
      verifierService: service.service.address,
      verifierBudget: {
        slots: pool.slotCount,
        checkTimeoutMs: pool.timeoutMs,
        checkBoundMs: pool.checkBoundMs,
      },
    },
    advanced.initializeTimeoutMs ?? DEFAULT_INIT_TIMEOUT_MS,
  );
  if (init.kind === "error") {
    await run.abandon();
    return init;
  }
  phase("training", `${init.result.trainer} on ${init.result.device}`);
  return { kind: "started", session: run.session() };
}
