/** Candidates for benchmarks: every tactic proof of the example workspace, as its own middle or a miss. */
import { parseFile } from "../lean-bridge/lean/commands";
import { LineIndex } from "../lean-bridge/text/positions";
import type { VerifyTask } from "../lean-bridge/verify/pool";
import { proofHole, readExample } from "../test/helpers";

export const FILES = [
  "FimExamples/Arith.lean",
  "FimExamples/Logic.lean",
  "FimExamples/Induction.lean",
  "FimExamples/Calc.lean",
  "FimExamples/Structured.lean",
  "FimExamples/DecideSimp.lean",
  "FimExamples/Notation.lean",
];

export interface Hole {
  task: VerifyTask;
  middle: string;
}

export function holes(): Hole[] {
  const out: Hole[] = [];
  for (const file of FILES) {
    const text = readExample(file);
    const index = new LineIndex(text);
    for (const c of parseFile(text).commands) {
      const d = c.declaration;
      if (!d || d.bodyKind !== "tactic" || !d.name) continue;
      const hole = proofHole(text, d.name);
      out.push({
        task: { file, hole },
        middle: text.slice(index.offsetAt(hole.start), index.offsetAt(hole.end)),
      });
    }
  }
  return out;
}

/**
 * `group` candidates per hole that differ in code, not only in comments (a comment-only change is not a new
 * proof): the hole's own middle once, then wrong tactics naming distinct hypotheses.
 */
export function groups(hs: Hole[], group: number, salt = 0): { task: VerifyTask; candidate: string }[] {
  return hs.flatMap((h) =>
    Array.from({ length: group }, (_, k) => ({
      task: h.task,
      candidate: k === 0 && salt === 0 ? h.middle : `exact h_${salt}_${k}`,
    })),
  );
}
