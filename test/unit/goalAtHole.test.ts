/**
 * The goal a verified task carries (`goal`): read from the one "unsolved goals" error Lean's `done` logs where it
 * stands in the hole; any other answer gives no goal rather than a wrong one.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { CheckDocument } from "../../lean-bridge/verify/checkDocument";
import { judgeGoalAtHole } from "../../lean-bridge/verify/goalAtHole";
import type { CandidateDiagnostic, VerdictOutcome } from "../../lean-bridge/verify/verdict";

const TEXT = "theorem t (a : Nat) : a + 0 = a := by\n  done\n";
const AT = TEXT.indexOf("done");
const doc = { text: TEXT, candidateStart: AT, candidateEnd: AT + 4 } as CheckDocument;

function error(message: string, line = 1, character = 2): CandidateDiagnostic {
  const range = { start: { line, character }, end: { line, character: character + 4 } };
  return { severity: 1, message, range, candidateRange: range };
}

const incomplete = (diagnostics: CandidateDiagnostic[]): VerdictOutcome => ({
  kind: "incomplete",
  reason: "unsolved-goals",
  goalsLeft: 1,
  diagnostics,
});

test("the goal is the sentinel's unsolved goals, without the heading; several goals stay apart", () => {
  assert.equal(
    judgeGoalAtHole(doc, incomplete([error("unsolved goals\na : Nat\n⊢ a + 0 = a")])),
    "a : Nat\n⊢ a + 0 = a",
  );
  const two = "unsolved goals\ncase inl\n⊢ p\n\ncase inr\n⊢ q";
  assert.equal(judgeGoalAtHole(doc, incomplete([error(two)])), "case inl\n⊢ p\n\ncase inr\n⊢ q");
});

test("no goal from anything else: closed goals, an error elsewhere or of another kind, several errors, no answer", () => {
  assert.equal(
    judgeGoalAtHole(doc, { kind: "proved", axioms: [], axiomsChecked: true, diagnostics: [] }),
    undefined,
  );
  assert.equal(judgeGoalAtHole(doc, incomplete([error("unsolved goals\n⊢ p", 0, 0)])), undefined);
  assert.equal(judgeGoalAtHole(doc, incomplete([error("no goals to be proved")])), undefined);
  assert.equal(
    judgeGoalAtHole(doc, incomplete([error("unsolved goals\n⊢ p"), error("unsolved goals\n⊢ q")])),
    undefined,
  );
  assert.equal(judgeGoalAtHole(doc, incomplete([error("unsolved goals")])), undefined);
  assert.equal(
    judgeGoalAtHole(doc, { kind: "timeout", timeoutMs: 1, cause: "candidate", diagnostics: [] }),
    undefined,
  );
});
