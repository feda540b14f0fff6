/**
 * Statements without proofs are tasks (lean-bridge/dataset/openGoals.ts): a declaration whose whole tactic proof
 * is `sorry` (or `admit`) gives one `proof` task whose row says `"reference": false`; one with a `sorry` (or
 * `admit`, `stop`, `sorryAx`) anywhere else gives none and is counted; `sorry` in a comment, a string or a name
 * is no open goal. Reference-less middles are never "the same answer" to the dedup and novel logic, and never
 * text to imitate in the fim-text view.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exportDataset } from "../../lean-bridge/dataset/exporter";
import { JsonlWriter } from "../../lean-bridge/dataset/jsonl";
import { PendingHeads } from "../../lean-bridge/dataset/pendingHeads";
import { NO_REFERENCE, SKETCH_INTS, Sketch, TaskSketchWriter } from "../../lean-bridge/dataset/taskSketches";
import { STATEMENT_DOES_NOT_ELABORATE, verifySketches } from "../../lean-bridge/dataset/verifyTasks";
import { FIM_TOKEN_SETS } from "../../lean-bridge/dataset/views";
import { mineText } from "../../lean-bridge/holes/mine";
import type { Verifier } from "../../lean-bridge/verify/verifier";
import { inMemory } from "../harness";
import { exportOptions, tasksOf } from "./exampleExport";
import { rowsOf, sketchTasks } from "./sketchedTasks";
import { tempDir } from "../tempDirs";

function tmp(): string {
  return tempDir("fim-open-goals-");
}

const OPEN = `theorem open_a (n : Nat) : n + 0 = n := by sorry

theorem open_b : True := by
  admit

theorem partial_proof (p : Prop) (h : p) : p ∧ p := by
  constructor
  · have h2 : p := by sorry
    exact h2
  · exact h

theorem term_open : 1 = 1 := sorry

theorem term_proof : 4 = 4 := rfl

def data_open : Nat := sorry

theorem uses_ax : 2 = 2 := by
  exact sorryAx _ false

theorem stopped : 3 = 3 := by
  stop
  rfl

theorem mentions (s : String) : s = s := by
  -- sorry, this comment says sorry
  have : "sorry" = "sorry" := rfl
  rfl

theorem named (sorry_x admits : Nat) : sorry_x + admits = sorry_x + admits := by
  rfl
`;

test("a `by sorry` statement is one proof task without a reference; a sorry inside a proof skips its declaration", async () => {
  const ws = tmp();
  writeFileSync(join(ws, "Open.lean"), OPEN);
  const out = join(ws, "out");
  const r = await exportDataset(exportOptions(out, { workspace: ws, splitMode: "declaration" }));
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  const tasks = tasksOf(out);
  const byDecl = (decl: string) => tasks.filter((t) => t.decl === decl);
  for (const [decl, middle] of [
    ["open_a", "sorry"],
    ["open_b", "admit"],
  ] as const) {
    const [only, ...rest] = byDecl(decl);
    assert.equal(rest.length, 0, `${decl}: one task`);
    assert.equal(only?.kind, "proof");
    assert.equal(only?.middle, middle);
    assert.equal(only?.reference, false);
  }
  // The row ends with the field, as the contract (taskRecord) lays it out.
  const lines = readFileSync(join(out, "tasks.jsonl"), "utf8").trim().split("\n");
  assert.ok(lines.filter((l) => l.endsWith(',"goal":null,"reference":false}')).length === 2);
  for (const decl of ["partial_proof", "uses_ax", "stopped", "term_open"])
    assert.equal(byDecl(decl).length, 0, `${decl} gives no task`);
  for (const decl of ["mentions", "named"]) {
    assert.ok(byDecl(decl).length > 0, `${decl}: sorry in a comment, a string or a name is no open goal`);
    assert.ok(byDecl(decl).every((t) => t.reference === null));
  }
  const { declarations, holes } = r.report;
  assert.equal(declarations.withoutProofs, 2);
  assert.equal(declarations.withTacticProofs, 2);
  assert.equal(declarations.skipped["sorry-in-proof"], 3);
  // `:= sorry` is a term proof, counted apart: the verifier checks tactic holes only. A data-valued
  // definition's `sorry` is no statement.
  assert.equal(declarations.skipped["term-sorry"], 1);
  assert.equal(declarations.skipped["term-proof"], 2);
  assert.equal(holes.kept.withoutReference.total, 2);
  const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as typeof r.report;
  assert.deepEqual(report.holes.kept.withoutReference, holes.kept.withoutReference);
  const card = readFileSync(join(out, "README.md"), "utf8");
  assert.match(card, /statements without proofs \(`sorry`\): 2; skipped: .*sorry-in-proof 3/);
  assert.match(card, /Tasks without a reference .*: 2 \(train \d, validation \d, test \d\)/);
});

test("reference-less middles are never the same answer: not dropped by dedup, always novel, not in fim-text", async () => {
  const ws = tmp();
  // 40 open statements and 40 proved ones, all proved by the same middle: with 80 declarations every split
  // gets some of each.
  const decls = Array.from({ length: 40 }, (_, k) => [
    `theorem open_${k} (n : Nat) : n + ${k} = ${k} + n := by\n  sorry\n`,
    `theorem done_${k} : ${k} = ${k} := by\n  rfl\n`,
  ]).flat();
  writeFileSync(join(ws, "Many.lean"), decls.join("\n"));
  for (const splitMode of ["dedup", "declaration"] as const) {
    const out = join(ws, splitMode);
    const r = await exportDataset(
      exportOptions(out, {
        workspace: ws,
        splitMode,
        formats: ["native", "fim-text"],
        fimTokens: FIM_TOKEN_SETS.qwen,
      }),
    );
    assert.equal(r.kind, "ok");
    if (r.kind !== "ok") return;
    const tasks = tasksOf(out);
    const open = tasks.filter((t) => t.reference === false);
    assert.equal(open.length, 40, `${splitMode}: every open statement is a task`);
    const heldOut = open.filter((t) => t.split !== "train");
    assert.ok(heldOut.length > 0 && heldOut.length < 40, `${splitMode}: open statements in every split`);
    assert.ok(heldOut.every((t) => t.novel === true));
    assert.ok(open.filter((t) => t.split === "train").every((t) => t.novel === null));
    const { overlap } = r.report;
    // The proved ones share one middle (`rfl`): dedup drops the training ones, and only those.
    const provedTrain = tasks.filter((t) => t.reference !== false && t.split === "train").length;
    if (splitMode === "dedup") {
      assert.equal(provedTrain, 0);
      assert.ok(overlap.trainingDropped > 0);
    } else {
      const provedHeldOut = tasks.filter((t) => t.reference !== false && t.split !== "train").length;
      assert.equal(overlap.test.inTraining + overlap.validation.inTraining, provedHeldOut);
    }
    assert.deepEqual(
      Object.values(r.report.holes.kept.withoutReference.bySplit).reduce((a, b) => a + b, 0),
      40,
    );
    const fim = readFileSync(join(out, "fim-text.jsonl"), "utf8").trim().split("\n");
    assert.equal(fim.length, tasks.length - 40, "fim-text holds only tasks with a reference");
  }
});

const STATEMENTS_FILE = "Statements.lean";
const STATEMENTS = `theorem open_add (n : Nat) : n + 0 = n := by
  sorry

theorem open_mul (n : Nat) : n * 1 = n := by
  sorry

theorem proved (n : Nat) : n = n := by
  rfl
`;

test("--verify keeps a statement without a proof when Lean elaborates it with sorry, with its goal, and drops it otherwise", async () => {
  const ws = tmp();
  writeFileSync(join(ws, STATEMENTS_FILE), STATEMENTS);
  const sketched = sketchTasks(ws, [
    {
      file: STATEMENTS_FILE,
      text: STATEMENTS,
      holes: mineText(STATEMENTS).holes.filter((h) => h.kind === "proof"),
    },
  ]);
  // As pass 1 marks them: the two `sorry` proofs have no reference.
  const bytes = readFileSync(sketched.sketchPath);
  const ints = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
  for (const k of [0, 1]) ints[k * SKETCH_INTS + Sketch.Flags] = NO_REFERENCE;
  writeFileSync(sketched.sketchPath, bytes);
  const heads = new PendingHeads();
  sketched.tasks.forEach(({ hole, decl }, k) => heads.push(decl, 1000 + k, hole.kind, k > 1));
  const h = await inMemory({ cwd: ws }, { projectRoot: ws });
  try {
    for (const refuse of [false, true]) {
      // The simulator elaborates both statements; Lean refusing the second is played by the pool's answer.
      const pool: Verifier = refuse
        ? Object.assign(Object.create(h.pool) as Verifier, {
            checkStatements: async (tasks: readonly { hole: { start: { line: number } } }[]) =>
              tasks.map((t) =>
                t.hole.start.line === 4
                  ? { kind: "does-not-elaborate" as const, message: "unknown constant 'Nat.mul_one'" }
                  : { kind: "elaborates" as const },
              ),
          })
        : h.pool;
      const dir = mkdtempSync(join(ws, "kept-"));
      const kept = {
        sketches: new TaskSketchWriter(join(dir, "kept.bin")),
        goals: new JsonlWriter(join(dir, "goals.jsonl")),
        heads: new PendingHeads(),
      };
      const result = await verifySketches(
        pool,
        sketched.sketchPath,
        sketched.filesPath,
        heads,
        kept,
        {},
      ).finally(() => {
        kept.sketches.close();
        kept.goals.close();
      });
      assert.equal(result.kind, "ok");
      if (result.kind !== "ok") return;
      const { report } = result;
      assert.deepEqual(report.statements, { checked: 2, elaborate: refuse ? 1 : 2 });
      // The proved theorem went through the middle's check as before; `sorry` was never a candidate.
      assert.equal(report.shape.checked, 1);
      const rows = rowsOf(dir, sketched, join(dir, "kept.bin"), kept.heads, join(dir, "goals.jsonl"));
      assert.deepEqual(
        rows.map((t) => [t.decl, t.middle, t.reference]),
        [
          ["open_add", "sorry", false],
          ...(refuse ? [] : [["open_mul", "sorry", false]]),
          ["proved", "rfl", null],
        ],
      );
      assert.match(rows[0]!.goal ?? "", /⊢ n \+ 0 = n/);
      if (refuse) {
        assert.equal(report.droppedByReason[STATEMENT_DOES_NOT_ELABORATE], 1);
        assert.match(report.examples[0]!.reason, /unknown constant/);
      }
    }
  } finally {
    await h.close();
  }
});

test("a workspace of `:= sorry` statements alone says how to offer them", async () => {
  const ws = tmp();
  writeFileSync(join(ws, "Term.lean"), "theorem t : 1 = 1 := sorry\n\ntheorem u : 2 = 2 := sorry -- later\n");
  const r = await exportDataset(exportOptions(join(ws, "out"), { workspace: ws }));
  assert.equal(r.kind, "empty");
  if (r.kind === "empty") assert.match(r.message, /term-sorry 2.*written `:= by sorry`/);
});
