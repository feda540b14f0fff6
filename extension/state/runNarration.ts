/**
 * What the editor says about a run while it starts, trains and ends: phase names for the progress
 * notification, the status bar and the dashboard header, and the end-of-run messages. Pure, so each wording is
 * unit-tested; the host's phase ids never reach the user as they are.
 */
import type { TrainEvalParams } from "../../lean-bridge/protocol/trainer";
import type { TrainingPhase } from "../../lean-bridge/train/session";

const STARTING: Record<TrainingPhase, string> = {
  mining: "mining the workspace's holes",
  "preparing-python": "preparing Python",
  "starting-verifier": "starting the verifier",
  "starting-trainer": "starting the trainer (loading the model)",
  training: "training",
  stopping: "stopping (writing a checkpoint)",
};

/** A host phase in words, with its detail when that helps (a pip line while Python is prepared). */
export function phaseLabel(phase: TrainingPhase, detail?: string): string {
  if (phase === "preparing-python" && detail) return `${STARTING[phase]}: ${detail}`;
  return STARTING[phase];
}

/**
 * Whether the trainer runs an SFT warm start before RL: `sft_steps` when given, else only for the embedded
 * model (trainer/fim_rlvr/core/config.py `resolved_sft_steps`, which this mirrors).
 */
export function sftPlanned(config: { sft_steps?: number | null; model?: string | null }): boolean {
  if (typeof config.sft_steps === "number") return config.sft_steps > 0;
  return config.model === null || config.model === undefined;
}

/**
 * The trainer's phases after `initialize`, in its order (train.py: evaluate before → SFT warm start → evaluate
 * → RL steps → evaluate after), told from the messages it sends. A resumed run goes straight to RL.
 */
export const TRAINING_PHASES = {
  evaluatingBefore: "evaluating held-out holes before training",
  sft: "SFT warm start",
  evaluatingSft: "evaluating held-out holes after SFT",
  rl: "RL",
  evaluatingAfter: "evaluating held-out holes after training",
} as const;

export function phaseAfterInitialize(resumed: boolean): string {
  return resumed ? TRAINING_PHASES.rl : TRAINING_PHASES.evaluatingBefore;
}

export function phaseAfterEval(stage: TrainEvalParams["stage"], sft: boolean): string | undefined {
  if (stage === "before") return sft ? TRAINING_PHASES.sft : TRAINING_PHASES.rl;
  if (stage === "sft") return TRAINING_PHASES.rl;
  return undefined;
}

/** The trainer's SFT progress line ("SFT step 50/60: loss 1.234", trainer/fim_rlvr/run/trainer.py) as a phase. */
export function phaseFromLog(message: string): string | undefined {
  const sft = /^SFT step (\d+)\/(\d+)\b/.exec(message);
  if (sft)
    return Number(sft[1]) < Number(sft[2]) ? `SFT step ${sft[1]}/${sft[2]}` : TRAINING_PHASES.evaluatingSft;
  return undefined;
}

/** After step `step` of `total`: RL continues, or the final evaluation runs. */
export function phaseAfterStep(step: number, total: number): string {
  return total > 0 && step >= total ? TRAINING_PHASES.evaluatingAfter : TRAINING_PHASES.rl;
}

/** "verifier: the simulator (not Lean)" for toasts. */
export function verifierPhrase(verifier: "lean" | "simulator" | "kimina"): string {
  return verifier === "simulator"
    ? "the simulator (not Lean)"
    : verifier === "kimina"
      ? "a Kimina Lean Server"
      : "Lean";
}

function percent(value: number): string {
  return `${(value * 100).toFixed(1)}%`;
}

/** Held-out pass@1 over the stages measured: "12.5% before → 25.0% after SFT → 37.5% after RL (8 tasks)". */
export function heldOutSummary(evals: readonly TrainEvalParams[]): string {
  const at = (stage: TrainEvalParams["stage"]) => evals.find((e) => e.stage === stage);
  const parts: string[] = [];
  const before = at("before");
  const sft = at("sft");
  const after = at("after");
  if (before) parts.push(`${percent(before.passAt1)} before`);
  if (sft) parts.push(`${percent(sft.passAt1)} after SFT`);
  if (after) parts.push(`${percent(after.passAt1)} after RL`);
  if (!parts.length) return "";
  const tasks = Math.max(...evals.map((e) => e.tasks));
  return `Held-out pass@1 ${parts.join(" → ")} (${tasks} task${tasks === 1 ? "" : "s"}).`;
}

export function completedMessage(
  evals: readonly TrainEvalParams[],
  verifier: "lean" | "simulator" | "kimina",
): string {
  const held = heldOutSummary(evals);
  return `FIM-RLVR training completed; rewards from ${verifierPhrase(verifier)}.${held ? ` ${held}` : ""}`;
}

export function stoppedMessage(checkpoint: string | null): string {
  return checkpoint
    ? `FIM-RLVR training stopped; checkpoint kept at ${checkpoint}. Resume continues from it.`
    : "FIM-RLVR training stopped before its first checkpoint; nothing to resume.";
}
