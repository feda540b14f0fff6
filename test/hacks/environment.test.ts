/**
 * Environment failures are the workspace's, not the candidate's: one `environment` verdict with what to
 * do, never rewarded, never cached (a rebuilt workspace must be checked again).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { inMemory } from "../harness";
import { readExample, proofHole } from "../helpers";

test("a header Lean cannot load gives an environment verdict that says to run lake build, uncached", async () => {
  const h = await inMemory({ faults: true });
  try {
    const arith = readExample("FimExamples/Arith.lean");
    for (const text of [
      arith.replace(/^/, "import NoSuchModule\n"),
      arith.replace(/^/, "-- sim:stale-imports\n"),
    ]) {
      const task = { file: "FimExamples/Arith.lean", text, hole: proofHole(text, "add_le_add_3") };
      const first = await h.pool.verify(task, "omega");
      assert.equal(first.kind, "environment", JSON.stringify(first));
      if (first.kind === "environment") assert.match(first.action, /lake build/);
      assert.equal(rewardOf(first, "partial").reward, 0);
      const again = await h.pool.verify(task, "omega");
      assert.equal(again.kind, "environment");
      assert.equal(again.cached, undefined, "environment verdicts are never cached");
    }
  } finally {
    await h.close();
  }
});
