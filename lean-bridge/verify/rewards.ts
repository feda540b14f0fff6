/**
 * Rewards from verdicts: pure functions, no I/O. Binary by default. The partial option is grounded only in
 * what the verifier reported (how far the candidate elaborated before the first error, how many goals were
 * left), never in the candidate's length, so padding an answer cannot raise its reward.
 */
import type { Verdict } from "./verdict";

export type RewardMode = "binary" | "partial";

export interface RewardInfo {
  reward: number;
  /** Components, for logging. */
  metrics: Record<string, number>;
}

/** Lines of the candidate that elaborated before the first error, as a share of its lines. */
function elaboratedShare(verdict: Verdict, candidateLineCount: number): number {
  const errorLines = verdict.diagnostics
    .filter((d) => d.severity === 1 && d.candidateRange)
    .map((d) => d.candidateRange?.start.line ?? 0);
  if (errorLines.length === 0 || candidateLineCount <= 0) return 0;
  return Math.min(1, Math.min(...errorLines) / candidateLineCount);
}

export function rewardOf(verdict: Verdict, mode: RewardMode = "binary", candidateLineCount = 1): RewardInfo {
  const proved = verdict.kind === "proved" ? 1 : 0;
  if (mode === "binary") return { reward: proved, metrics: { proved } };
  switch (verdict.kind) {
    case "proved":
      return { reward: 1, metrics: { proved: 1 } };
    case "incomplete": {
      // Unsolved goals after a candidate that raised no error: better than an error, best with fewer goals.
      const reward = verdict.reason === "sorry" ? 0 : 0.5 / (1 + Math.max(0, verdict.goalsLeft - 1));
      return { reward, metrics: { proved: 0, goalsLeft: verdict.goalsLeft } };
    }
    case "failed": {
      // A clean prefix earns a little; an error on the first line earns nothing.
      const share = elaboratedShare(verdict, candidateLineCount);
      return { reward: 0.25 * share, metrics: { proved: 0, elaboratedShare: share } };
    }
    default:
      return { reward: 0, metrics: { proved: 0 } };
  }
}
