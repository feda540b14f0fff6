/**
 * lean-env's oracle (lean-env/fim-oracle.json) against Lean itself: every proof the generator lists for a
 * declaration proves it, and the candidates outside every menu that test/workspaceOracle.ts picks (by Lean's
 * documented semantics) do not. The simulator's side is test/simulator/oracle.test.ts. Runs where `lake` is on
 * PATH; skipped with the reason elsewhere, failing where FIM_REAL_LEAN=1 (gate.ts).
 */
import assert from "node:assert/strict";
import { oracleTasks, outsideMenuTasks } from "../workspaceOracle";
import { announce, processCoreGate, realLeanTest } from "./gate";
import { leanPool } from "./pools";

const gate = processCoreGate();
announce("test/real-lean/oracle.test.ts", gate);

realLeanTest("real Lean proves every entry of lean-env's oracle", gate, async () => {
  const pool = await leanPool({ slots: 4 });
  try {
    const tasks = oracleTasks();
    const verdicts = await pool.verifyMany(
      tasks.map((t) => ({ task: { file: t.file, hole: t.hole }, candidate: t.candidate })),
    );
    verdicts.forEach((v, k) => {
      assert.equal(v.verifier.kind, "lean");
      assert.equal(v.kind, "proved", `${tasks[k]!.name}: ${tasks[k]!.candidate}: ${JSON.stringify(v)}`);
    });
  } finally {
    await pool.stop();
  }
});

realLeanTest("real Lean proves none of the candidates outside the oracle's menus", gate, async () => {
  const pool = await leanPool({ slots: 4 });
  try {
    const tasks = outsideMenuTasks();
    const verdicts = await pool.verifyMany(
      tasks.map((t) => ({ task: { file: t.file, hole: t.hole }, candidate: t.candidate })),
    );
    verdicts.forEach((v, k) =>
      // Judged and refused by Lean: not proved, and not an answer about the machine (timeout, crash).
      assert.ok(
        v.kind === "failed" || v.kind === "incomplete",
        `${tasks[k]!.name}: ${tasks[k]!.candidate}: ${JSON.stringify(v)}`,
      ),
    );
  } finally {
    await pool.stop();
  }
});
