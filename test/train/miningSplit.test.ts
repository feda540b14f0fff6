/**
 * `train --split-seed S --split-fractions T,V,X` reach the miner (train/dataset.ts `prepareTarget`): the mined
 * dataset's report names the seed and the fractions, and another seed draws other held-out tasks. The exporter alone,
 * no Lean and no trainer.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { prepareTarget } from "../../lean-bridge/train/dataset";
import { REPO } from "../helpers";
import { tempDir } from "../tempDirs";

const WS = join(REPO, "lean-env-prelude");

async function mined(split?: {
  seed?: number;
  fractions?: { train: number; validation: number; test: number };
}) {
  const runDir = tempDir("fim-train-split-");
  const prepared = await prepareTarget(WS, runDir, {
    resume: false,
    verifier: "simulator",
    ...(split ? { split } : {}),
  });
  assert.equal(prepared.kind, "ok", JSON.stringify(prepared));
  const report = JSON.parse(readFileSync(join(runDir, "dataset", "report.json"), "utf8")) as {
    seed: number;
    splitFractions: Record<string, number>;
  };
  const test = readFileSync(join(runDir, "dataset", "tasks.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id: string; split: string })
    .filter((t) => t.split === "test")
    .map((t) => t.id);
  return { report, test };
}

test("the split's seed and fractions reach the miner; the defaults stay seed 0 and 80/10/10", async () => {
  const plain = await mined();
  assert.equal(plain.report.seed, 0);
  assert.deepEqual(plain.report.splitFractions, { train: 0.8, validation: 0.1, test: 0.1 });
  const fractions = { train: 0.6, validation: 0.15, test: 0.25 };
  const [zero, three] = [await mined({ seed: 0, fractions }), await mined({ seed: 3, fractions })];
  assert.deepEqual(zero.report.splitFractions, fractions);
  assert.equal(three.report.seed, 3);
  assert.ok(
    zero.test.length > plain.test.length * 1.5,
    `${zero.test.length} vs ${plain.test.length} test tasks`,
  );
  assert.notDeepEqual(new Set(zero.test), new Set(three.test));
});
