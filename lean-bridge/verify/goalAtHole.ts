/**
 * The goal state at a hole, as Lean prints it, for `export --verify` to write as a task's `goal` (a prompt shows
 * it above the hole). Read the way the partial-credit probe reads goal counts (goals.ts): Lean's `done` (the
 * sentinel, the verifier's own text, never a candidate's) stands in the hole; with goals left it logs one error on
 * itself, "unsolved goals" followed by the goals (hypotheses, then `⊢ type`; several goals apart by blank lines),
 * and admits them (src/Lean/Elab/Tactic/Basic.lean: `done` → `Term.reportUnsolvedGoals`). A hole whose goals are
 * already closed there, or an answer of any other shape, gives no goal: the task is written without one.
 */
import { LineIndex } from "../text/positions";
import type { CheckDocument } from "./checkDocument";
import { SENTINEL } from "./goals";
import type { VerdictOutcome } from "./verdict";

/** The text the goal probe puts in the hole. */
export const GOAL_PROBE = SENTINEL;

const HEADING = "unsolved goals";

/** The goals `done` reported where it stands in `doc` (the check document with GOAL_PROBE as the candidate). */
export function judgeGoalAtHole(doc: CheckDocument, outcome: VerdictOutcome): string | undefined {
  if (outcome.kind !== "incomplete" && outcome.kind !== "failed") return undefined;
  const at = new LineIndex(doc.text).positionAt(doc.candidateStart);
  const reports = outcome.diagnostics.filter(
    (d) => d.severity === 1 && d.range.start.line === at.line && d.range.start.character === at.character,
  );
  if (reports.length !== 1) return undefined;
  const [heading = "", ...goals] = reports[0]!.message.split("\n");
  if (heading.trim() !== HEADING) return undefined;
  const text = goals.join("\n").trim();
  return text || undefined;
}
