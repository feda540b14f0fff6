/**
 * Workloads for benchmarks: every tactic proof of the example workspace as its own middle (an open goal, whose
 * file proof is `sorry`, with the first proof lean-env's oracle lists for it), or a miss; one-statement files as
 * `fim-rlvr import` writes them; and the check document a candidate is verified in.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildCheckDocument, locateHole } from "../lean-bridge/verify/checkDocument";
import type { VerifyTask } from "../lean-bridge/verify/verifier";
import { TaskFiles } from "../lean-bridge/verify/taskFiles";
import { proofHole } from "../test/helpers";
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

/**
 * One-statement files as `fim-rlvr import` writes them (the row's header, then one theorem in a namespace of its
 * own whose proof is the hole): nothing lies above the hole, so every design elaborates one declaration per check.
 * The files come in pairs of one header, then a pair of the other (A A B B …): two headers, as a dataset whose
 * rows import different things. A Kimina or LeanInteract REPL keeps each header it loaded; a pool slot keeps one
 * at a time.
 */
export function statementProject(count: number): { root: string; hs: Hole[] } {
  const root = mkdtempSync(join(tmpdir(), "fim-bench-statements-"));
  writeFileSync(join(root, "lakefile.toml"), 'name = "bench"\n');
  writeFileSync(join(root, "lean-toolchain"), "leanprover/lean4:v4.36.0\n");
  mkdirSync(join(root, "Base"));
  writeFileSync(join(root, "Base", "A.lean"), "def baseA : Nat := 1\n");
  writeFileSync(join(root, "Base", "B.lean"), "def baseB : Nat := 2\n");
  mkdirSync(join(root, "Stmts"));
  const hs: Hole[] = [];
  for (let k = 0; k < count; k++) {
    const name = `stmt_${k}`;
    const header = Math.floor(k / 2) % 2 === 0 ? "import Base.A\nopen Nat" : "import Base.B";
    const text = `${header}\n\nnamespace Stmts.R${k}\n\ntheorem ${name} (n : Nat) : n + ${k} = ${k} + n := by\n  omega\n\nend Stmts.R${k}\n`;
    const file = `Stmts/S${k}.lean`;
    writeFileSync(join(root, file), text);
    hs.push({ task: { file, hole: proofHole(text, name) }, middle: "omega" });
  }
  return { root, hs };
}

/** The check document the verifiers check `candidate` in (the same text for every design compared). */
export function checkDocumentText(files: TaskFiles, task: VerifyTask, candidate: string): string {
  const loaded = files.load(task.file);
  if (loaded.kind !== "ok") throw new Error(loaded.message);
  const located = locateHole(loaded.file.parsed, loaded.file.index, task.hole);
  if (located.kind !== "ok") throw new Error(located.message);
  const built = buildCheckDocument(loaded.file.parsed, located.hole, candidate);
  if (built.kind !== "ok") throw new Error(built.message);
  return built.doc.text;
}
