/**
 * Whether a hole is a task at all: a proved candidate pays only where doing nothing does not prove too. A hole
 * whose goals are closed before it, or whose rest of the proof closes them anyway (a middle `simp at h` before
 * an `omega` that does not need it, a middle `done`), proves with any no-op in its place, so a reward there
 * would teach the model to write nothing. The verifier asks Lean once per hole, with its own text in the hole:
 * Lean's `skip`, which does nothing and never fails (src/Lean/Elab/Tactic/BuiltinTactic.lean:
 * `@[builtin_tactic skip] def evalSkip : Tactic := fun _ => pure ()`), never a candidate's text. The answer is a
 * property of the hole, the same for every candidate, and cached with the other probes of the hole.
 */
import type { VerdictOutcome } from "./verdict";

/** The text the no-op probe puts in the hole. */
export const NOOP_PROBE = "skip";

/** The `rejected` rule of a hole whose proof is complete without its middle. */
export const COMPLETE_WITHOUT_HOLE = "complete-without-hole";

/**
 * The candidate's verdict, given what Lean said of the hole with the no-op in it. Only a proved candidate is
 * asked about (the caller runs the probe only then). No-op proved: the hole is not a task, `rejected` (reward
 * 0, trained on as a failure; every candidate of the hole earns the same, so its group carries no signal).
 * No-op failed, incomplete, or out of time or crashed by its own doing: the hole needs its middle, the proof
 * stands. No usable answer (the infrastructure's timeout or crash, a broken environment): the proof cannot be
 * confirmed as progress, so no reward (fail closed), with that outcome, which the candidate did not cause:
 * the probe holds none of its text.
 */
export function judgeWithNoop(candidate: VerdictOutcome, noop: VerdictOutcome): VerdictOutcome {
  if (candidate.kind !== "proved") return candidate;
  switch (noop.kind) {
    case "proved":
      return {
        kind: "rejected",
        rule: COMPLETE_WITHOUT_HOLE,
        reason:
          "the hole's proof is complete without it: with `skip` (nothing) in the hole Lean proves the declaration too, so this hole is not a task and no candidate earns reward there (drop it from the dataset; `fim-rlvr export --verify` does)",
        diagnostics: candidate.diagnostics,
      };
    case "failed":
    case "incomplete":
      return candidate;
    case "timeout":
    case "crashed":
      if (noop.cause === "candidate") return candidate;
      return {
        kind: noop.kind === "timeout" ? "crashed" : noop.kind,
        reason: `the verifier could not confirm that the hole needs its middle (${noop.kind} while checking it with \`skip\` in its place): try again; if it persists, check the Lean server's memory and time limits`,
        cause: "infrastructure",
        diagnostics: candidate.diagnostics,
      };
    case "environment":
      return { ...noop, diagnostics: candidate.diagnostics };
    case "rejected":
      // The verifier's own probe refused: a bug, not the candidate's doing. Never a reward.
      return {
        kind: "crashed",
        reason: `internal error: the verifier's own \`skip\` probe was refused (${noop.reason})`,
        cause: "infrastructure",
        diagnostics: candidate.diagnostics,
      };
  }
}
