/**
 * bench:seeds' JSON (issue 22 item 5): built from the runs' eval.json files, it holds exactly the named keys
 * (bench/seeds.schema.json, format "fim-rlvr-seeds/2"): per arm one entry per seed with held-out instances and
 * families, and the paired differences on held-out instances with the exact sign-flip p.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import {
  SEEDS_FORMAT,
  completeRuns,
  seedsJson,
  seedsText,
  type EvalStage,
  type SeedRun,
} from "../../bench/seedsReport";
import { REPO } from "../helpers";

const schema = JSON.parse(readFileSync(join(REPO, "bench", "seeds.schema.json"), "utf8")) as object;
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(schema);

/** One stage of eval.json as the trainer writes it (run/evaluate.py to_json), 40 instance and 10 family tasks. */
function stage(instance: number, family: number, samples = 8): EvalStage {
  return {
    pass_at_1: (40 * instance + 10 * family) / 50,
    tasks: 50,
    samples,
    by_held_out: {
      instance: { pass_at_1: instance, [`pass_at_${samples}`]: Math.min(1, instance + 0.1), tasks: 40 },
      family: { pass_at_1: family, [`pass_at_${samples}`]: family, tasks: 10 },
    },
    compute: { optimizer_steps: 30, sequences: 1920, generated: 1920, verifier_calls: 1920 },
  };
}

function run(seed: number, rl: number, sft: number, rft: number): SeedRun {
  return {
    seed,
    evals: {
      before: stage(0, 0),
      sft: stage(0.1, 0.1),
      after: stage(rl, 0.2),
      "baseline-sft": stage(sft, 0.1),
      "baseline-rft": stage(rft, 0.3),
    },
  };
}

test("the JSON holds exactly the issue's keys and passes the schema; paired on held-out instances", () => {
  const runs = [run(0, 0.5, 0.4, 0.45), run(1, 0.425, 0.4, 0.45), run(2, 0.45, 0.3, 0.45)];
  const result = seedsJson(completeRuns(runs).runs, { mode: "family", evaluated: "test" });
  assert.ok(validate(result), JSON.stringify(validate.errors));
  assert.deepEqual(Object.keys(result), ["format", "split", "arms", "paired"]);
  assert.equal(result.format, SEEDS_FORMAT);
  assert.deepEqual(Object.keys(result.arms), ["sft", "rft", "rl"]);
  assert.deepEqual(Object.keys(result.paired), ["rl-sft", "rl-rft"]);
  assert.deepEqual(result.arms.rl[0], {
    seed: 0,
    instances: { "pass@1": 0.5, tasks: 40, "pass@8": 0.6 },
    families: { "pass@1": 0.2, tasks: 10, "pass@8": 0.2 },
  });
  assert.deepEqual(
    result.arms.sft.map((e) => e.seed),
    [0, 1, 2],
  );
  // RL − SFT: +0.1, +0.025, +0.15: every seed one way, so p is the smallest 3 seeds allow (2 / 8).
  assert.ok(Math.abs(result.paired["rl-sft"].mean - 0.275 / 3) < 1e-12);
  assert.equal(result.paired["rl-sft"].p, 0.25);
  // RL − RFT: +0.05, −0.025, 0: every sign pattern's sum is at least as far from 0 as the observed one, p = 1.
  assert.ok(Math.abs(result.paired["rl-rft"].mean - 0.025 / 3) < 1e-12);
  assert.equal(result.paired["rl-rft"].p, 1);
  const text = seedsText(result, completeRuns(runs).runs);
  assert.match(
    text,
    /held-out instances, RL − SFT per seed: \+10\.0, \+2\.5, \+15\.0 points; mean \+9\.2 points/,
  );
  assert.match(text, /RL: 30 optimiser steps, 1920 sequences trained, 1920 generated, 1920 verifier calls/);
});

test("the schema refuses a JSON that strays from the issue's keys", () => {
  const good = seedsJson([run(0, 0.5, 0.4, 0.45)], { mode: "family", evaluated: "test" });
  assert.ok(validate(good));
  const strays: [string, (j: Record<string, unknown>) => void][] = [
    ["an extra top-level key", (j) => (j.algorithm = "grpo")],
    ["an arm missing", (j) => delete (j.arms as Record<string, unknown>).rft],
    ["an extra arm", (j) => ((j.arms as Record<string, unknown>).dpo = [])],
    ["a pair missing", (j) => delete (j.paired as Record<string, unknown>)["rl-rft"]],
    [
      "pass@1 renamed",
      (j) => {
        const e = (j.arms as Record<string, Record<string, Record<string, unknown>>[]>).rl![0]!;
        e.instances = { pass_at_1: 0.5, tasks: 40 };
      },
    ],
    [
      "a seed without families",
      (j) => delete (j.arms as Record<string, Record<string, unknown>[]>).sft![0]!.families,
    ],
    ["p above 1", (j) => ((j.paired as Record<string, Record<string, number>>)["rl-sft"]!.p = 2)],
  ];
  for (const [what, spoil] of strays) {
    const copy = JSON.parse(JSON.stringify(good)) as Record<string, unknown>;
    spoil(copy);
    assert.equal(validate(copy), false, what);
  }
});

test("a seed whose run lacks an arm is left out, and named", () => {
  const partial = run(1, 0.5, 0.4, 0.45);
  delete partial.evals["baseline-rft"];
  const noSets = run(2, 0.5, 0.4, 0.45);
  delete noSets.evals.after!.by_held_out;
  const { runs, left } = completeRuns([noSets, run(0, 0.5, 0.4, 0.45), partial]);
  assert.deepEqual(
    runs.map((r) => r.seed),
    [0],
  );
  assert.deepEqual(left, [2, 1]);
  // Greedy only (no samples): no pass@k key.
  const greedy = seedsJson(
    [run(0, 0.5, 0.4, 0.45)].map((r) => ({ ...r, evals: { ...r.evals, after: stage(0.5, 0.2, 0) } })),
    {
      mode: "family",
      evaluated: "validation",
    },
  );
  assert.deepEqual(greedy.arms.rl[0]!.instances, { "pass@1": 0.5, tasks: 40 });
  assert.ok(validate(greedy));
});
