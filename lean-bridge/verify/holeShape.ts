/**
 * Whether a hole is a whole tactic sequence, as Lean itself reads it (`export --verify`): the hole is
 * replaced by `sorry` (the verifier's own text, never a candidate's) and checked. A whole sequence gives
 * the sorry warning and nothing else where `sorry` stands; a hole cut mid-tactic leaves the rest of that
 * tactic dangling, which Lean reports as a parse error starting at the end of the token before it
 * (lean4#2393: an unexpected-token error's range starts at the end of the previous token), so at the end of
 * `sorry` or, for a hole that starts mid-tactic, at the end of the token before the hole. Errors further on
 * (a later tactic finding no goals that the hole's tactics would have left) say nothing about the hole.
 */
import { LineIndex } from "../text/positions";
import type { CheckDocument } from "./checkDocument";
import type { VerdictOutcome } from "./verdict";

export type HoleShape =
  | { kind: "whole" }
  | { kind: "not-whole"; reason: string }
  /** Lean gave no usable answer (timeout, crash, environment): the shape is unknown, so fail closed. */
  | { kind: "inconclusive"; reason: string };

/** The text the shape check puts in the hole. */
export const SHAPE_PROBE = "sorry";

/** Where the window of errors that blame the hole starts: the end of the code before it (whitespace skipped). */
function windowStart(doc: CheckDocument): number {
  let k = doc.candidateStart;
  while (k > 0 && /\s/.test(doc.text[k - 1] ?? "")) k--;
  return k;
}

export function judgeHoleShape(doc: CheckDocument, outcome: VerdictOutcome): HoleShape {
  if (outcome.kind === "timeout" || outcome.kind === "crashed" || outcome.kind === "environment")
    return { kind: "inconclusive", reason: `${outcome.kind} while checking the hole with \`sorry\`` };
  if (outcome.kind === "rejected") return { kind: "inconclusive", reason: outcome.reason };
  const index = new LineIndex(doc.text);
  const from = windowStart(doc);
  const blamed = outcome.diagnostics.find((d) => {
    if (d.severity !== 1) return false;
    const at = index.offsetAt(d.range.start);
    return at >= from && at <= doc.candidateEnd;
  });
  if (blamed)
    return {
      kind: "not-whole",
      reason: `with \`sorry\` in the hole, Lean reports: ${blamed.message.split("\n")[0] ?? ""}`,
    };
  return { kind: "whole" };
}
