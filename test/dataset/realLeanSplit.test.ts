/**
 * The split the real-Lean workspace (lean-env-prelude/) is measured on: statement shapes identify a family's
 * instances and tell families apart; held-out families' shapes occur nowhere in training; the test split has at
 * least 150 held-out tasks with at most 3 holes per theorem; the held-out draw changes with the seed; and the
 * prompt's header (imports, scope) never names a family. No Lean is needed: this is the exporter alone.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { exportDataset } from "../../lean-bridge/dataset/exporter";
import { statementShape } from "../../lean-bridge/dataset/statementShape";
import { HOLE_KINDS } from "../../lean-bridge/holes/mine";
import { readRows } from "../../bench/trivialProvers";
import { REAL_LEAN_SPLIT_FRACTIONS, formatSplitSummary, splitSummary } from "../../bench/portfolio";
import { REPO } from "../helpers";

const WS = join(REPO, "lean-env-prelude");

test("statement shapes ignore names, constants, binder grouping and order, and tell shapes apart", () => {
  const a = statementShape("theorem fact_1 (a b m : Nat) (h : a ≤ b) : a + 3 ≤ b + 3 + m");
  assert.equal(
    a,
    statementShape("theorem x_2 {u : Nat} {v : Nat} {w : Nat} (h₁ : u ≤ v) : u + 17 ≤ v + 17 + w"),
  );
  assert.notEqual(a, statementShape("theorem y (a b c : Nat) (h : a ≤ b) (h' : b ≤ c) : a ≤ c + 4"));
  assert.equal(
    statementShape("theorem t : ∃ x : Nat, x * 3 + 2 = 17"),
    statementShape("theorem u : ∃ y : Nat, y * 5 + 0 = 10"),
  );
  assert.equal(
    statementShape("theorem p (P Q R : Prop) (h₂ : Q → R) (hyp : P ∧ Q) : R ∧ P"),
    statementShape("theorem q (p : Prop) (q : Prop) (r : Prop) (e : p ∧ q) (h : q → r) : r ∧ p"),
  );
  assert.notEqual(
    statementShape("theorem p (P Q : Prop) (h : P ∧ Q) : Q ∧ P"),
    statementShape("theorem p (P Q : Prop) (h : P ∨ Q) : Q ∨ P"),
  );
});

async function exported(seed: number): Promise<string> {
  const out = join(mkdtempSync(join(tmpdir(), "fim-realws-split-")), "ds");
  const r = await exportDataset({
    workspace: WS,
    out,
    kinds: [...HOLE_KINDS],
    seed,
    maxFileBytes: 4 << 20,
    formats: ["native"],
    splitFractions: REAL_LEAN_SPLIT_FRACTIONS,
  });
  assert.equal(r.kind, "ok", JSON.stringify(r));
  return out;
}

test("the real-Lean workspace's split: novel family shapes, ≥150 held-out test tasks, ≤3 holes, seed-dependent", async () => {
  const outs = [await exported(0), await exported(1)];
  try {
    const summaries = outs.map(splitSummary);
    for (const s of summaries) {
      process.stdout.write(formatSplitSummary(s));
      assert.ok(s.heldoutTasks >= 150, `${s.heldoutTasks} held-out test tasks`);
      assert.ok(s.maxHolesPerTheorem <= 3, `${s.maxHolesPerTheorem} holes in one theorem`);
      assert.ok(s.heldOutFamilies.length >= 1);
      assert.ok(s.shapes.heldOutFamilyDeclarations > 0);
      assert.equal(s.shapes.familyShapesInTraining, 0, s.shapes.examples.join("\n"));
      // The check is not vacuous: held-out instances do share their family's shapes with training.
      assert.ok(s.shapes.instanceShapesInTraining > 0.5 * s.shapes.heldOutInstanceDeclarations);
    }
    assert.notDeepEqual(summaries[0]!.heldOutFamilies, summaries[1]!.heldOutFamilies);
    const tests = outs.map(
      (o) =>
        new Set(
          readRows<{ id: string; split: string }>(join(o, "tasks.jsonl"))
            .filter((t) => t.split === "test")
            .map((t) => t.id),
        ),
    );
    assert.ok(
      [...tests[0]!].some((id) => !tests[1]!.has(id)),
      "the test split is the same for both seeds",
    );
    // What a prompt carries besides the hole's window: imports and scope, which never name a family.
    const contexts = readRows<{ file: string; imports: string[]; scope: string[] }>(
      join(outs[0]!, "contexts.jsonl"),
    );
    for (const c of contexts) {
      const stem = c.file.replace(/^.*\//, "").replace(/\.lean$/, "");
      if (!c.file.startsWith("FimWork/") || stem === "Defs") continue;
      assert.ok(
        ![...c.imports, ...c.scope].some((s) => s.includes(stem)),
        `${c.file}: ${c.scope.join("; ")}`,
      );
    }
    // Nor does the rest of what a prompt is made of (trainer/fim_rlvr/tasks/prompts.py reads no file name): the
    // declaration's text, its statement, and each task's prefix, suffix and middle.
    const texts = readRows<{ file: string; text: string; statement: string }>(
      join(outs[0]!, "contexts.jsonl"),
    );
    const tasks = readRows<{ file: string; prefix: string; suffix: string; middle: string }>(
      join(outs[0]!, "tasks.jsonl"),
    );
    const stems = [...new Set(texts.map((c) => c.file))]
      .filter((f) => f.startsWith("FimWork/") && !f.endsWith("/Defs.lean"))
      .map((f) =>
        f
          .replace(/^.*\//, "")
          .replace(/\.lean$/, "")
          .toLowerCase(),
      );
    assert.ok(stems.length >= 10, `${stems.length} families`);
    const named = (text: string) => stems.find((stem) => text.toLowerCase().includes(stem));
    for (const c of texts) assert.equal(named(`${c.text}\n${c.statement}`), undefined, c.file);
    for (const t of tasks) assert.equal(named(`${t.prefix}\n${t.suffix}\n${t.middle}`), undefined, t.file);
  } finally {
    for (const o of outs) rmSync(dirname(o), { recursive: true, force: true });
  }
});
