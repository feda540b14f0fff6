/**
 * Candidates for benchmarks: every tactic proof of the example workspace as its own middle (an open goal, whose
 * file proof is `sorry`, with the first proof lean-env's oracle lists for it), or a miss.
 */
import type { VerifyTask } from "../lean-bridge/verify/pool";
import { oracleCandidate, readWorkspaceOracle, workspaceDeclarations } from "../test/workspaceOracle";

export interface Hole {
  task: VerifyTask;
  middle: string;
}

export function holes(): Hole[] {
  const oracle = readWorkspaceOracle().alternatives;
  const out: Hole[] = [];
  for (const [name, d] of workspaceDeclarations()) {
    const own = d.text.slice(d.decl.byStart! + 2, d.decl.byEnd).trim();
    const first = oracle[name]?.[0];
    if (d.open && !first) continue;
    out.push({ task: { file: d.file, hole: d.hole }, middle: d.open ? oracleCandidate(first!) : own });
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
