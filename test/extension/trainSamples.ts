/** Trainer messages for the extension's tests: `train/sample` notifications and the ranges in them. */
import type { Range, TrainSampleParams, VerdictKind } from "../../lean-bridge/protocol/trainer";

export const range = (sl: number, sc: number, el: number, ec: number): Range => ({
  start: { line: sl, character: sc },
  end: { line: el, character: ec },
});

/**
 * A tactic sample as the trainer sends it: candidate `simp -- STEP`, reward 1 when proved, on A.lean's hole at
 * 2:2-2:7 unless `extra` says otherwise.
 */
export function trainSample(
  taskId: string,
  verdict: VerdictKind,
  step: number,
  extra: Partial<TrainSampleParams> = {},
): TrainSampleParams {
  return {
    taskId,
    file: "A.lean",
    hole: range(2, 2, 2, 7),
    kind: "tactic",
    candidate: `simp -- ${step}`,
    verdict,
    reward: verdict === "proved" ? 1 : 0,
    step,
    algorithm: "grpo",
    ...extra,
  };
}
