/**
 * Rewards from verdicts: pure functions, no I/O. Binary by default. The partial option pays only for
 * progress Lean itself shows: fewer goals right after the candidate than at the hole's start (both read
 * with `$/lean/plainGoal`, so the proof's own later steps are never credited to the candidate), in a
 * candidate that raised no error. Doing nothing (`skip`, comments, padding) leaves the goals as they were and earns
 * exactly 0; a failed candidate earns 0 however many harmless lines precede its error; partial credit stays
 * at most 0.5, strictly below a proof. Fewer goals is the only measure: "smaller" goals are not paid,
 * because `exfalso` or `clear` make a goal smaller without any progress (docs/POLICY.md).
 */
import type { Verdict } from "./verdict";

export type RewardMode = "binary" | "partial";

export interface RewardInfo {
  reward: number;
  /** Components, for logging. */
  metrics: Record<string, number>;
}

/** The most a candidate that is not a proof can earn. */
export const MAX_PARTIAL_REWARD = 0.5;

/** Share of the hole's goals the candidate closed, when Lean showed both counts; 0 otherwise. */
export function goalsClosedShare(goalsAtHole: number | undefined, goalsAfter: number | undefined): number {
  if (goalsAtHole === undefined || goalsAfter === undefined) return 0;
  if (goalsAtHole <= 0 || goalsAfter >= goalsAtHole) return 0;
  return (goalsAtHole - Math.max(0, goalsAfter)) / goalsAtHole;
}

/** The reward of a verdict. It never depends on the candidate's length. */
export function rewardOf(verdict: Verdict, mode: RewardMode = "binary"): RewardInfo {
  const proved = verdict.kind === "proved" ? 1 : 0;
  if (mode === "binary") return { reward: proved, metrics: { proved } };
  switch (verdict.kind) {
    case "proved":
      return { reward: 1, metrics: { proved: 1 } };
    case "incomplete": {
      if (verdict.reason === "sorry") return { reward: 0, metrics: { proved: 0, goalsLeft: 0 } };
      const share = goalsClosedShare(verdict.goalsAtHole, verdict.goalsAfterCandidate);
      // Strictly below 1 even if a caller's goal counts were inconsistent: a proof is the only 1.
      const reward = Math.min(MAX_PARTIAL_REWARD * share, MAX_PARTIAL_REWARD);
      return {
        reward,
        metrics: {
          proved: 0,
          goalsLeft: verdict.goalsLeft,
          goalsAtHole: verdict.goalsAtHole ?? -1,
          goalsAfterCandidate: verdict.goalsAfterCandidate ?? -1,
          goalsClosedShare: share,
        },
      };
    }
    default:
      return { reward: 0, metrics: { proved: 0 } };
  }
}
