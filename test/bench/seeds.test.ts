/**
 * bench:seeds' JSON (issue 32): built from the runs' eval.json files and each seed's baselines, it holds exactly the
 * named keys (bench/seeds.schema.json, format "fim-rlvr-seeds/3"): per arm (sft, sft_data, rft, rl) one entry per
 * seed with held-out instances and families, what it generated and trained on, and per family what was learned;
 * the portfolio's and the best single tactic's entries; the split's figures; the paired differences on held-out
 * instances with the exact sign-flip p beside per-task paired counts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import {
  SEEDS_FORMAT,
  completeRuns,
  familiesText,
  seedsJson,
  seedsText,
  type EvalStage,
  type SeedBaselines,
  type SeedRun,
  type SplitFigures,
} from "../../bench/seedsReport";
import { REPO } from "../helpers";

const schema = JSON.parse(readFileSync(join(REPO, "bench", "seeds.schema.json"), "utf8")) as object;
const validate = new Ajv2020({ strict: true, allErrors: true }).compile(schema);

const INSTANCES = Array.from({ length: 40 }, (_, k) => `i${k}`);

/** One stage of eval.json as the trainer writes it (run/evaluate.py to_json), 40 instance and 10 family tasks. */
function stage(instance: number, family: number, samples = 8): EvalStage {
  return {
    pass_at_1: (40 * instance + 10 * family) / 50,
    tasks: 50,
    samples,
    proved: INSTANCES.slice(0, Math.round(40 * instance)),
    by_held_out: {
      instance: { pass_at_1: instance, [`pass_at_${samples}`]: Math.min(1, instance + 0.1), tasks: 40 },
      family: { pass_at_1: family, [`pass_at_${samples}`]: family, tasks: 10 },
    },
    by_family: {
      "W/A.lean#W": {
        pass_at_1: instance,
        [`pass_at_${samples}`]: instance,
        tasks: 40,
        proofs: [{ proof: "simp [*]", count: 3 }],
      },
      "W/B.lean#W": { pass_at_1: family, [`pass_at_${samples}`]: family, tasks: 10, proofs: [] },
    },
    compute: {
      optimizer_steps: 30,
      verifier_calls: 2370,
      generated: { sequences: 2370, tokens: 9000 },
      trained: { sequences: 1920, tokens: 7000 },
      evaluation: { sequences: 450, tokens: 1800 },
    },
  };
}

function run(seed: number, rl: number, sft: number, rft: number, sftData = sft): SeedRun {
  return {
    seed,
    instanceTasks: INSTANCES,
    evals: {
      before: stage(0, 0),
      sft: stage(0.1, 0.1),
      after: stage(rl, 0.2),
      "baseline-sft": stage(sft, 0.1),
      "baseline-sft_data": stage(sftData, 0.1),
      "baseline-rft": stage(rft, 0.3),
    },
  };
}

/** A baseline proving the first `instance` share of the instances and `family` of the families. */
function baselines(seed: number, instance: number, family = 0.1): SeedBaselines {
  const entry = (candidate: string) => ({
    seed,
    candidate,
    instances: { "pass@1": instance, tasks: 40 },
    families: { "pass@1": family, tasks: 10 },
    by_family: {
      "W/A.lean#W": { "pass@1": instance, tasks: 40 },
      "W/B.lean#W": { "pass@1": family, tasks: 10 },
    },
    proved: INSTANCES.slice(0, Math.round(40 * instance)),
  });
  return { portfolio: entry("first | rfl | simp"), best_tactic: entry("simp [*]") };
}

const SPLIT: SplitFigures = {
  mode: "family",
  evaluated: "test",
  heldout_tasks: 50,
  max_holes_per_theorem: 3,
  family_shapes_in_training: 0,
};

test("the JSON holds exactly the issue's keys and passes the schema; paired by seed and by task", () => {
  const runs = [run(0, 0.5, 0.4, 0.45), run(1, 0.425, 0.4, 0.45), run(2, 0.45, 0.3, 0.45)];
  const fixed = new Map(runs.map((r) => [r.seed, baselines(r.seed, 0.25)]));
  const result = seedsJson(completeRuns(runs).runs, fixed, SPLIT);
  assert.ok(validate(result), JSON.stringify(validate.errors));
  assert.deepEqual(Object.keys(result), ["format", "split", "arms", "baselines", "paired"]);
  assert.equal(result.format, SEEDS_FORMAT);
  assert.deepEqual(Object.keys(result.arms), ["sft", "sft_data", "rft", "rl"]);
  assert.deepEqual(Object.keys(result.baselines), ["portfolio", "best_tactic"]);
  assert.deepEqual(Object.keys(result.paired), ["rl-sft", "rl-sft_data", "rl-rft", "rl-portfolio"]);
  assert.deepEqual(Object.keys(result.split), [
    "mode",
    "evaluated",
    "heldout_tasks",
    "max_holes_per_theorem",
    "family_shapes_in_training",
  ]);
  const rl0 = result.arms.rl[0]!;
  assert.deepEqual(rl0.instances, { "pass@1": 0.5, tasks: 40, "pass@8": 0.6 });
  assert.deepEqual(rl0.families, { "pass@1": 0.2, tasks: 10, "pass@8": 0.2 });
  assert.deepEqual(rl0.generated, { sequences: 2370, tokens: 9000 });
  assert.deepEqual(rl0.trained, { sequences: 1920, tokens: 7000 });
  assert.deepEqual(rl0.by_family["W/A.lean#W"], {
    "pass@1": 0.5,
    tasks: 40,
    "pass@8": 0.5,
    proofs: [{ proof: "simp [*]", count: 3 }],
  });
  assert.deepEqual(result.baselines.portfolio[0], {
    seed: 0,
    candidate: "first | rfl | simp",
    instances: { "pass@1": 0.25, tasks: 40 },
    families: { "pass@1": 0.1, tasks: 10 },
    by_family: { "W/A.lean#W": { "pass@1": 0.25, tasks: 40 }, "W/B.lean#W": { "pass@1": 0.1, tasks: 10 } },
  });
  assert.deepEqual(
    result.arms.sft.map((e) => e.seed),
    [0, 1, 2],
  );
  // RL − SFT: +0.1, +0.025, +0.15: every seed one way, so p is the smallest 3 seeds allow (2 / 8).
  assert.ok(Math.abs(result.paired["rl-sft"].mean - 0.275 / 3) < 1e-12);
  assert.equal(result.paired["rl-sft"].p, 0.25);
  // Per task: RL proves the first 20, 17, 18 instances, SFT the first 16, 16, 12: RL only 4 + 1 + 6, never SFT only.
  assert.deepEqual(result.paired["rl-sft"].tasks, {
    both: 44,
    first_only: 11,
    second_only: 0,
    neither: 65,
    p: 2 * 0.5 ** 11,
  });
  // RL − RFT: +0.05, −0.025, 0: every sign pattern's sum is at least as far from 0 as the observed one, p = 1.
  assert.ok(Math.abs(result.paired["rl-rft"].mean - 0.025 / 3) < 1e-12);
  assert.equal(result.paired["rl-rft"].p, 1);
  assert.ok(Math.abs(result.paired["rl-portfolio"].mean - (0.25 + 0.175 + 0.2) / 3) < 1e-12);
  assert.equal(result.paired["rl-portfolio"].tasks.second_only, 0);
  const text = seedsText(result, completeRuns(runs).runs);
  assert.match(
    text,
    /held-out instances, RL − SFT: per seed \+10\.0, \+2\.5, \+15\.0 points; mean \+9\.2 points, sign-flip p = 0\.250/,
  );
  assert.match(text, /per task over the seeds: RL only 11, SFT only 0, both 44, neither 65/);
  assert.match(text, /generated 2370 seq \/ 9000 tok, trained 1920 seq \/ 7000 tok/);
  assert.match(
    text,
    /held-out-family statement shapes that occur in training: 0 \(none: the families are new\)/,
  );
  assert.match(
    text,
    /what the verifier adds \(mean held-out-instance pass@1\): RL − SFT \+9\.2 points; RFT − SFT/,
  );
  assert.match(text, /what the algorithm adds [^:]*: RL − RFT \+0\.8 points/);
  assert.match(familiesText(result), /W\/A\.lean#W: [^;]*; 1 distinct: "simp \[\*\]" ×9/);
});

test("the schema refuses a JSON that strays from the issue's keys", () => {
  const good = seedsJson([run(0, 0.5, 0.4, 0.45)], new Map([[0, baselines(0, 0.25)]]), SPLIT);
  assert.ok(validate(good), JSON.stringify(validate.errors));
  type J = Record<string, unknown>;
  const arm = (j: J, name: string) => (j.arms as Record<string, J[]>)[name]![0]!;
  const strays: [string, (j: J) => void][] = [
    ["an extra top-level key", (j) => (j.algorithm = "grpo")],
    ["an arm missing", (j) => delete (j.arms as J).sft_data],
    ["an extra arm", (j) => ((j.arms as J).dpo = [])],
    ["a pair missing", (j) => delete (j.paired as J)["rl-portfolio"]],
    ["per-task counts missing", (j) => delete ((j.paired as J)["rl-sft"] as J).tasks],
    ["the baselines missing", (j) => delete j.baselines],
    ["a baseline missing", (j) => delete (j.baselines as J).best_tactic],
    ["the split's shape count missing", (j) => delete (j.split as J).family_shapes_in_training],
    ["pass@1 renamed", (j) => (arm(j, "rl").instances = { pass_at_1: 0.5, tasks: 40 })],
    ["a seed without families", (j) => delete arm(j, "sft").families],
    ["an arm without generated counts", (j) => delete arm(j, "rft").generated],
    ["trained counts without tokens", (j) => (arm(j, "rl").trained = { sequences: 3 })],
    [
      "a family without its proofs",
      (j) => delete (arm(j, "rl").by_family as Record<string, J>)["W/A.lean#W"]!.proofs,
    ],
    ["p above 1", (j) => (((j.paired as J)["rl-sft"] as J).p = 2)],
  ];
  for (const [what, spoil] of strays) {
    const copy = JSON.parse(JSON.stringify(good)) as J;
    spoil(copy);
    assert.equal(validate(copy), false, what);
  }
});

test("a seed whose run lacks an arm or its counts is left out, and named", () => {
  const partial = run(1, 0.5, 0.4, 0.45);
  delete partial.evals["baseline-sft_data"];
  const noSets = run(2, 0.5, 0.4, 0.45);
  delete noSets.evals.after!.by_held_out;
  const noCounts = run(3, 0.5, 0.4, 0.45);
  delete noCounts.evals["baseline-rft"]!.compute!.trained;
  const { runs, left } = completeRuns([noSets, run(0, 0.5, 0.4, 0.45), partial, noCounts]);
  assert.deepEqual(
    runs.map((r) => r.seed),
    [0],
  );
  assert.deepEqual(left, [2, 1, 3]);
  // Greedy only (no samples): no pass@k key.
  const greedy = seedsJson(
    [run(0, 0.5, 0.4, 0.45)].map((r) => ({ ...r, evals: { ...r.evals, after: stage(0.5, 0.2, 0) } })),
    new Map([[0, baselines(0, 0.25)]]),
    { ...SPLIT, evaluated: "validation" },
  );
  assert.deepEqual(greedy.arms.rl[0]!.instances, { "pass@1": 0.5, tasks: 40 });
  assert.ok(validate(greedy));
});
