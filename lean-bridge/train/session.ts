/**
 * The training host's public API, shared by the CLI (`fim-rlvr train`) and the VS Code extension: it prepares
 * Python, mines or loads the dataset, starts the verifier pool, spawns the trainer, relays verification, and
 * turns the trainer's messages into events. It never imports `vscode`.
 */
import type {
  TrainCheckpointParams,
  TrainConfigWire,
  TrainEvalParams,
  TrainLogParams,
  TrainProgressParams,
  TrainSampleParams,
} from "../protocol/trainer";

export type { TrainConfigWire } from "../protocol/trainer";

export interface TrainingOptions {
  /** A Lean workspace (mined first) or a dataset folder (one that holds tasks.jsonl). */
  target: string;
  /** Where the run's files go (created when missing). */
  runDir: string;
  /** The trainer's TrainConfig, snake_case keys (algorithm, algo_config, model, steps, group_size, ...). */
  config: TrainConfigWire;
  /** How verdicts become rewards (see lean-bridge/verify/rewards.ts). */
  reward: "binary" | "partial";
  /** The simulator (a test double, never Lean) or Lean, optionally through a given server command line. */
  verifier: { kind: "simulator" } | { kind: "lean"; serverCommand?: string[] };
  /** Continue from runDir/checkpoints/latest. */
  resume: boolean;
  /** The Python interpreter to run the trainer with; else the managed virtual environment. */
  python?: string;
}

export type TrainingPhase =
  "preparing-python" | "mining" | "starting-verifier" | "starting-trainer" | "training" | "stopping";

export interface VerifierStats {
  /** Checks run (not counting cache hits). */
  checks: number;
  cacheHits: number;
  /** Checks per second over the run so far (cache hits included). */
  checksPerSecond: number;
}

/** Every callback is optional; none may throw (a throwing callback is logged and ignored). */
export interface TrainingEvents {
  onPhase?(phase: TrainingPhase, detail?: string): void;
  onProgress?(p: TrainProgressParams): void;
  onSample?(s: TrainSampleParams): void;
  onCheckpoint?(c: TrainCheckpointParams): void;
  onLog?(l: TrainLogParams): void;
  onEval?(e: TrainEvalParams): void;
  onVerifierStats?(s: VerifierStats): void;
}

export type TrainingOutcome =
  | { kind: "completed"; runDir: string; evals: TrainEvalParams[]; reportPath: string }
  | { kind: "stopped"; runDir: string; checkpoint: string | null; reportPath: string }
  | { kind: "failed"; runDir: string; message: string; hint: string };

export interface TrainingSession {
  readonly runDir: string;
  /** Asks the trainer to checkpoint and stop; resolves once `done` has settled. */
  stop(): Promise<void>;
  /** Settles once, when the run ends for any reason; never rejects. */
  readonly done: Promise<TrainingOutcome>;
}

export type TrainingStart =
  { kind: "started"; session: TrainingSession } | { kind: "error"; message: string; hint: string };

export async function startTraining(
  options: TrainingOptions,
  events: TrainingEvents,
): Promise<TrainingStart> {
  void options;
  void events;
  return { kind: "error", message: "training is not implemented yet", hint: "wait for the next commit" };
}
