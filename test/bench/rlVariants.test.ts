/**
 * bench:rl-variants' figures (bench/rlVariantsReport.ts): a variant is NAME=CONFIG (inline JSON or a file); a run's
 * RL figures come from its folder (eval.json's `after` stage, samples.jsonl's groups and first attempts); variants
 * are paired with the first only over the seeds every variant completed, with the exact sign-flip p.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  compareVariants,
  parseVariant,
  trainPassRate,
  variantSeed,
  variantsText,
  withPortfolio,
  type VariantSeed,
} from "../../bench/rlVariantsReport";
import { tempDir } from "../tempDirs";

function run(
  dir: string,
  instance: number,
  samples: { step: number; task: string; reward: number; turn?: number; candidate?: string }[],
) {
  mkdirSync(dir, { recursive: true });
  const after = {
    pass_at_1: instance,
    tasks: 50,
    by_held_out: { instance: { pass_at_1: instance, tasks: 40 }, family: { pass_at_1: 0.1, tasks: 10 } },
    compute: { generated: { sequences: 96, tokens: 900 }, trained: { sequences: 64, tokens: 700 } },
  };
  const sft = { ...after, by_held_out: { instance: { pass_at_1: instance / 2, tasks: 40 } } };
  writeFileSync(join(dir, "eval.json"), JSON.stringify({ before: { ...after, pass_at_1: 0 }, sft, after }));
  const lines = samples.map((s) =>
    JSON.stringify({
      step: s.step,
      task_id: s.task,
      reward: s.reward,
      candidate: s.candidate ?? "rfl",
      verdict: s.reward > 0 ? "proved" : "failed",
      ...(s.turn ? { turn: s.turn } : {}),
    }),
  );
  writeFileSync(join(dir, "samples.jsonl"), lines.join("\n") + "\n");
}

test("a variant is NAME=JSON or NAME=FILE, and a bad one says what is wrong", () => {
  assert.deepEqual(parseVariant('dapo={"algorithm":"dapo"}'), {
    name: "dapo",
    config: { algorithm: "dapo" },
  });
  const dir = tempDir("rl-variants-");
  writeFileSync(join(dir, "wide.yaml"), "embedded_width: 256\n");
  assert.deepEqual(parseVariant(`wide=${join(dir, "wide.yaml")}`).config, { embedded_width: 256 });
  assert.throws(() => parseVariant('{"steps":1}'), /NAME=CONFIG/);
  assert.throws(() => parseVariant('a/b={"steps":1}'), /names a folder/);
  assert.throws(() => parseVariant("x={steps"), /--variant x:/);
  assert.throws(() => parseVariant("x=[1]"), /--variant x:/);
});

test("a run's figures: the after stage, the equal-reward share, the first attempts' pass rate", () => {
  const dir = join(tempDir("rl-variants-"), "seed-0");
  assert.equal(variantSeed(dir, 0), undefined); // nothing there yet: not reused, trained
  run(dir, 0.25, [
    { step: 1, task: "a", reward: 0 },
    { step: 1, task: "a", reward: 0 },
    { step: 1, task: "b", reward: 1 },
    { step: 1, task: "b", reward: 0, candidate: "simp" },
    { step: 1, task: "b", reward: 1, turn: 1, candidate: "exact h" }, // a repair turn: not the policy's first attempt
    { step: 2, task: "a", reward: 1 },
    { step: 2, task: "a", reward: 1 },
  ]);
  const got = variantSeed(dir, 0)!;
  assert.equal(got.instances, 0.25);
  assert.equal(got.families, 0.1);
  assert.equal(got.warm_start, 0.125); // eval.json's sft stage: what RL started from
  assert.deepEqual(got.generated, { sequences: 96, tokens: 900 });
  assert.equal(got.equal_rewards, 2 / 3); // step 1's a (all failed) and step 2's a (all proved)
  assert.equal(got.all_failed, 1 / 3);
  assert.equal(got.train_pass_rate, 3 / 6);
  assert.equal(got.distinct_per_group, (1 + 3 + 1) / 3); // b's group holds rfl, simp and the repair's exact h
  assert.ok(Number.isNaN(trainPassRate(join(dir, "missing.jsonl"))));
});

test("variants are paired with the first over the seeds all of them completed", () => {
  const seed = (s: number, instances: number): VariantSeed => ({
    seed: s,
    instances,
    families: 0,
    warm_start: 0.05,
    generated: { sequences: 1, tokens: 1 },
    trained: { sequences: 1, tokens: 1 },
    equal_rewards: 0.5,
    all_failed: 0.4,
    distinct_per_group: 2,
    train_pass_rate: 0.1,
  });
  const base = [seed(0, 0.1), seed(1, 0.2), seed(2, 0.3)];
  const better = [seed(0, 0.2), seed(2, 0.5)]; // seed 1 failed
  const results = compareVariants(
    [
      { name: "base", config: {} },
      { name: "better", config: { task_sampling: "learnability" } },
    ],
    (v) => (v.name === "base" ? base : better),
  );
  assert.deepEqual(
    results.map((r) => r.seeds.map((s) => s.seed)),
    [
      [0, 2],
      [0, 2],
    ],
  );
  assert.equal(results[0]!.against_first, undefined);
  const against = results[1]!.against_first!;
  assert.deepEqual(
    against.diffs.map((d) => Number(d.toFixed(6))),
    [0.1, 0.2],
  );
  assert.equal(against.p, 0.5); // two seeds, both one way: 2 / 2^2
  const text = variantsText(results, "validation");
  assert.match(
    text,
    /against base \(held-out instances, validation split\): per seed \+10\.0, \+20\.0 points/,
  );
  assert.match(text, /sign-flip p = 0\.500/);
  const portfolio = new Map([
    [0, 0.3],
    [2, 0.3],
  ]);
  const scored = withPortfolio(results, portfolio);
  assert.deepEqual(
    scored[1]!.against_portfolio!.diffs.map((d) => Number(d.toFixed(6))),
    [-0.1, 0.2],
  );
  assert.equal(scored[1]!.against_portfolio!.p, 1); // one seed each way
  const withBaseline = variantsText(scored, "validation", portfolio);
  assert.match(
    withBaseline,
    /^fixed portfolio \(held-out instances, validation split\): seed 0 30\.0%, seed 2 30\.0%; mean 30\.0%/,
  );
  assert.match(withBaseline, /against the fixed portfolio: per seed -20\.0, \+0\.0 points/); // base: 10% and 30%
});
