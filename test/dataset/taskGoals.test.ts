/**
 * The goal at each hole of a mined dataset, from the run's verifier (dataset/taskGoals.ts, train/dataset.ts
 * `withGoals`): every task gets the goal its verifier shows, `sorry` statements included, in tasks.jsonl (read back
 * by the dataset index), report.json records it, and a second call asks nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { exportDataset } from "../../lean-bridge/dataset/exporter";
import { loadDataset, withGoals } from "../../lean-bridge/train/dataset";
import { inMemory } from "../harness";
import { exportOptions, tasksOf } from "./exampleExport";
import { tempDir } from "../tempDirs";

test("a mined dataset gets the goal at every hole from the verifier, once", async () => {
  const out = join(tempDir("fim-goals-"), "ds");
  assert.equal((await exportDataset(exportOptions(out, { kinds: ["proof", "block"] }))).kind, "ok");
  const before = tasksOf(out);
  assert.ok(
    before.every((t) => t.goal === null),
    "mining without verification writes no goal (the key is there, null)",
  );
  const loaded = loadDataset(out);
  assert.equal(loaded.kind, "ok");
  if (loaded.kind !== "ok") return;
  const h = await inMemory({}, { slots: 4 });
  try {
    const result = await withGoals(loaded.dataset, h.pool);
    assert.equal(result.kind, "ok");
    if (result.kind !== "ok") return;
    const after = tasksOf(out);
    const withoutGoal = ({ goal: _, ...rest }: (typeof before)[number]) => rest;
    assert.deepEqual(
      after.map(withoutGoal),
      before.map(withoutGoal),
      "the same rows, in the same order, each with its goal added",
    );
    assert.deepEqual(
      after.map((t) => Object.keys(t)),
      before.map((t) => Object.keys(t)),
      "the goal takes the place of the row's null: every row keeps the same keys, in the same order",
    );
    assert.ok(
      after.every((t) => /⊢ /.test(t.goal ?? "")),
      "every hole shows a goal",
    );
    const open = after.find((t) => t.middle === "sorry" && t.decl === "FimExamples.Arith.le_trans_add_1")!;
    assert.match(open.goal!, /^u v w : Nat\nhlt : u ≤ v\nhx : v ≤ w\n⊢ u ≤ w \+ 5$/);
    assert.deepEqual(result.report, {
      verifier: h.pool.identity.label,
      asked: after.length,
      withGoal: after.length,
    });
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as { goals: unknown };
    assert.deepEqual(report.goals, result.report);
    // The reloaded index reads the rewritten file; a second call (a resumed run) asks the verifier nothing.
    const task = result.dataset.tasks.get(open.id);
    assert.equal((task as { goal?: string } | undefined)?.goal, open.goal);
    const checks = h.pool.stats.checks + h.pool.stats.cacheHits;
    const again = await withGoals(result.dataset, h.pool);
    assert.equal(again.kind, "ok");
    assert.equal(h.pool.stats.checks + h.pool.stats.cacheHits, checks);
  } finally {
    await h.close();
  }
});
