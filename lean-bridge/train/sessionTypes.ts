/**
 * What a training session shows its caller: the phases it goes through, the events it reports, its handle and
 * how it ended. Its own file because both ends speak it: session.ts (which starts a run and re-exports these as
 * its API) and run.ts, progress.ts (which settle and report the run).
 */
import type {
  TrainCheckpointParams,
  TrainEvalParams,
  TrainLogParams,
  TrainProgressParams,
  TrainSampleParams,
} from "../protocol/trainer";

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
