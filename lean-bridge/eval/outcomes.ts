/**
 * Outcomes as the prover community counts them: proved, sorry, Lean error, timeout, and infrastructure.
 * An infrastructure outcome says nothing about the model (the model's server failed, the verifier never got to
 * the candidate, the workspace itself is broken, the hole is no task because its proof is complete without it)
 * and is never counted as a miss: pass@k leaves it out. A timeout the candidate caused is the candidate's
 * failure, as in training.
 */
import { COMPLETE_WITHOUT_HOLE } from "../verify/noopProbe";
import type { Verdict } from "../verify/verdict";

export type Outcome = "proved" | "sorry" | "lean-error" | "timeout" | "infrastructure";
export const OUTCOMES: readonly Outcome[] = ["proved", "sorry", "lean-error", "timeout", "infrastructure"];

/** Whose fault a timeout or crash was. Verdicts from verifiers that do not say are the candidate's (fail closed). */
export function verdictCause(verdict: Verdict): "candidate" | "infrastructure" {
  const cause = (verdict as { cause?: unknown }).cause;
  return cause === "infrastructure" ? "infrastructure" : "candidate";
}

/** The outcome of one verified candidate. */
export function outcomeOf(verdict: Verdict): Outcome {
  switch (verdict.kind) {
    case "proved":
      return "proved";
    case "incomplete":
      // `sorry` left in the proof; unsolved goals are an error Lean reports.
      return verdict.reason === "sorry" ? "sorry" : "lean-error";
    case "rejected":
      // A proof at a hole that `skip` proves too: the task is broken, not the model (the verifier asks only
      // after the candidate proved, so no candidate reaches this by failing).
      if (verdict.rule === COMPLETE_WITHOUT_HOLE) return "infrastructure";
      // The policy refused it before Lean ran: a `sorry`/`admit` counts as such, anything else as an error.
      return verdict.rule === "sorry" ? "sorry" : "lean-error";
    case "failed":
      return "lean-error";
    case "environment":
      return "infrastructure";
    case "timeout":
      return verdictCause(verdict) === "infrastructure" ? "infrastructure" : "timeout";
    case "crashed":
      return verdictCause(verdict) === "infrastructure" ? "infrastructure" : "lean-error";
  }
}

/** Whether a verdict may change if the same check runs again (worth a bounded retry). */
export function retryable(verdict: Verdict): boolean {
  return (
    outcomeOf(verdict) === "infrastructure" && verdict.kind !== "environment" && verdict.kind !== "rejected"
  );
}
