/**
 * What the report and the terminal say about what the model learned: held-out pass@1 on novel and memorised
 * holes, the validation curve, timeouts per step, the compute-matched SFT baseline (and its flag).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { miningSplit } from "../../lean-bridge/cli/trainCommand";
import { passAtOneSummary } from "../../lean-bridge/train/passAtOneSummary";
import { buildTrainConfig } from "../../lean-bridge/train/config";
import { reportHtml } from "../../lean-bridge/train/report";
import {
  heldOutTable,
  noveltyTable,
  timeoutSeries,
  validationSection,
} from "../../lean-bridge/train/reportMeasures";
import type { TrainEvalParams } from "../../lean-bridge/protocol/trainer";
import { signFlipP, signTestP } from "../../bench/pairedStats";
import { tempDir } from "../tempDirs";

const SIM = { kind: "simulator" as const, version: "0.1.0", label: "simulator 0.1.0 (not Lean)" };
const tmp = () => tempDir("fim-measures-");

const novelty = (novel: number, memorised: number) => ({
  novel: { pass_at_1: novel, tasks: 11 },
  memorised: { pass_at_1: memorised, tasks: 49 },
});

function run(config: Record<string, unknown>): string {
  const dir = tmp();
  writeFileSync(
    join(dir, "eval.json"),
    JSON.stringify({
      before: { pass_at_1: 0, by_kind: {}, tasks: 60, by_novelty: novelty(0, 0) },
      sft: { pass_at_1: 0.4, by_kind: {}, tasks: 60, by_novelty: novelty(0, 0.49) },
      after: { pass_at_1: 0.5, by_kind: {}, tasks: 60, by_novelty: novelty(0.0909, 0.592) },
    }),
  );
  const metrics = [1, 2].map((step) =>
    JSON.stringify({
      step,
      timeout_rate: step / 8,
      masked_samples: 1,
      verdicts: { failed: 6, timeout: step },
    }),
  );
  writeFileSync(join(dir, "metrics.jsonl"), metrics.join("\n") + "\n");
  const points = [0, 2].map((step) =>
    JSON.stringify({
      step,
      split: "validation",
      tasks: 30,
      greedy_pass_at_1: 0.3 + step / 20,
      pass_at_k: { "1": 0.25, "2": 0.35, "4": 0.45 },
      samples: 4,
      temperature: 0.4,
    }),
  );
  writeFileSync(join(dir, "validation.jsonl"), points.join("\n") + '\n{"step": 3, "tas'); // cut by a kill
  writeFileSync(join(dir, "config.json"), JSON.stringify(config));
  return dir;
}

test("the report splits held-out pass@1 into novel and memorised holes and plots validation and timeouts", () => {
  const html = reportHtml(run({ algorithm: "grpo", steps: 2 }), SIM);
  assert.match(html, /<th>novel \(11 tasks\)<\/th><th>memorised \(49 tasks\)<\/th>/);
  assert.match(html, /<td>after RL<\/td><td>9\.1%<\/td><td>59\.2%<\/td>/);
  assert.match(html, /Validation pass@k per step/);
  assert.match(html, /pass@1 \(sampled\)/);
  assert.match(html, /pass@4 \(sampled\)/);
  assert.doesNotMatch(
    html,
    /pass@2 \(sampled\)/,
    "the curve shows pass@1 and pass@n; the sentence lists all",
  );
  assert.match(html, /step 2\): pass@1 25\.0%, pass@2 35\.0%, pass@4 45\.0%/);
  assert.match(html, /Timeouts per step/);
  assert.doesNotMatch(html, /compute-matched SFT baseline/);
});

test("a baseline run says what it is and labels its last stage as the SFT baseline", () => {
  const html = reportHtml(
    run({ algorithm: "grpo", steps: 30, batch_size: 8, group_size: 8, baseline: "sft" }),
    SIM,
  );
  assert.match(html, /This run is the <b>compute-matched SFT baseline<\/b>.*30 RL steps of 8 × 8/s);
  assert.match(html, /<td>after the SFT baseline<\/td>/);
  assert.doesNotMatch(html, /<td>after RL<\/td>/);
  const twice = reportHtml(
    run({ algorithm: "grpo", steps: 30, batch_size: 8, group_size: 8, num_iterations: 2, baseline: "sft" }),
    SIM,
  );
  assert.match(twice, /30 RL steps of 8 × 8, 2 passes each, would/);
});

test("without novel marks, validation points or timeouts the sections say so or stay out", () => {
  assert.equal(noveltyTable({ after: { pass_at_1: 0.5, tasks: 4 } }, false), "");
  const dedup = noveltyTable(
    { after: { pass_at_1: 0, tasks: 60, by_novelty: { novel: { pass_at_1: 0, tasks: 60 } } } },
    false,
  );
  assert.match(dedup, /<th>novel \(60 tasks\)<\/th><\/tr>/);
  assert.match(dedup, /Every held-out hole here is novel/);
  assert.doesNotMatch(
    noveltyTable({ after: { pass_at_1: 0.5, tasks: 60, by_novelty: novelty(0, 1) } }, false),
    /Every held-out/,
  );
  assert.match(validationSection(tmp()), /No validation curve/);
  const series = timeoutSeries([{ step: 1, verdicts: { failed: 4 }, timeout_rate: 0, masked_samples: 0 }]);
  assert.deepEqual(
    series.map((s) => s.points),
    [[{ x: 1, y: 0 }], [{ x: 1, y: 0 }]],
  );
});

test("the terminal summary gives novel and memorised pass@1 per stage, and names a baseline", () => {
  const evals: TrainEvalParams[] = [
    {
      stage: "before",
      split: "test",
      passAt1: 0,
      byKind: {},
      tasks: 60,
      byNovelty: { novel: { passAt1: 0, tasks: 11 } },
    },
    {
      stage: "after",
      split: "test",
      passAt1: 0.5,
      byKind: {},
      tasks: 60,
      byNovelty: { novel: { passAt1: 1 / 11, tasks: 11 }, memorised: { passAt1: 0.6, tasks: 49 } },
    },
  ];
  assert.equal(
    passAtOneSummary(evals),
    "held-out pass@1 (test split, 60 tasks, greedy): before 0.0% -> after RL 50.0%\n" +
      "  novel (11 tasks): 0.0% -> 9.1%\n" +
      "  memorised (49 tasks): – -> 60.0%",
  );
  assert.match(passAtOneSummary(evals, true), /after the SFT baseline 50\.0%/);
  assert.equal(passAtOneSummary([]), "held-out pass@1: not measured");
});

test("--baseline sft|rft|sft_data and --compare reach the config; anything else is a usage error", () => {
  assert.deepEqual(buildTrainConfig({ baseline: "sft" }), { kind: "ok", config: { baseline: "sft" } });
  assert.deepEqual(buildTrainConfig({ baseline: "rft" }), { kind: "ok", config: { baseline: "rft" } });
  assert.deepEqual(buildTrainConfig({ baseline: "sft_data" }), {
    kind: "ok",
    config: { baseline: "sft_data" },
  });
  assert.match(JSON.stringify(buildTrainConfig({ baseline: "rl" })), /--baseline must be sft .* or rft/);
  assert.deepEqual(buildTrainConfig({ compare: "sft,rft,sft_data" }), {
    kind: "ok",
    config: { compare: ["sft", "rft", "sft_data"] },
  });
  assert.deepEqual(buildTrainConfig({ compare: "none" }), { kind: "ok", config: { compare: [] } });
  for (const bad of ["rl", "sft,", "", "sft,data"])
    assert.match(
      JSON.stringify(buildTrainConfig({ compare: bad })),
      /--compare takes a comma-separated list of sft, rft, sft_data .* or none/,
    );
});

test("the terminal summary gives each held-out set at each stage, with the compute-matched baselines beside RL", () => {
  const stage = (
    stageName: TrainEvalParams["stage"],
    all: number,
    instance: number,
    family: number,
    arm?: "sft" | "rft" | "sft_data",
  ): TrainEvalParams => ({
    stage: stageName,
    ...(arm ? { arm } : {}),
    split: "test",
    passAt1: all,
    byKind: {},
    tasks: 50,
    byHeldOut: { instance: { passAt1: instance, tasks: 40 }, family: { passAt1: family, tasks: 10 } },
  });
  const evals = [
    stage("before", 0, 0, 0),
    stage("sft", 0.2, 0.2, 0.2),
    stage("after", 0.4, 0.45, 0.2),
    stage("baseline", 0.3, 0.3, 0.3, "sft"),
    stage("baseline", 0.36, 0.4, 0.2, "rft"),
  ];
  assert.equal(
    passAtOneSummary(evals),
    "held-out pass@1 (test split, 50 tasks, greedy): before 0.0% -> after SFT 20.0% -> after RL 40.0%; " +
      "compute-matched baselines: SFT 30.0%, RFT 36.0%\n" +
      "  held-out instances (40 tasks): 0.0% -> 20.0% -> 45.0%; compute-matched baselines: SFT 30.0%, RFT 40.0%\n" +
      "  held-out families (10 tasks): 0.0% -> 20.0% -> 20.0%; compute-matched baselines: SFT 30.0%, RFT 20.0%\n" +
      "  what the verifier adds: RL − SFT +10.0 points; RFT − SFT +6.0 points\n" +
      "  what the algorithm adds: RL − RFT +4.0 points",
  );
  assert.match(passAtOneSummary(evals.slice(0, 3), "rft"), /after the expert-iteration baseline 40\.0%\n/);
  assert.doesNotMatch(passAtOneSummary(evals.slice(0, 3)), /adds/, "no arm beside RL: no effect to tell");
  const withData = passAtOneSummary([...evals, stage("baseline", 0.34, 0.35, 0.3, "sft_data")]);
  assert.match(withData, /SFT 30\.0%, SFT\+portfolio \(data-matched\) 34\.0%, RFT 36\.0%/);
  assert.match(withData, /RL − SFT\+portfolio \+6\.0 points; RFT − SFT\+portfolio \+2\.0 points/);
});

test("bench:seeds' paired tests: exact sign-flip and sign-test p-values", () => {
  assert.equal(
    signFlipP([0.1, 0.2, 0.05]),
    2 / 8,
    "all three positive: only the all-same flips are as extreme",
  );
  assert.equal(signFlipP([0.1, -0.1]), 1);
  assert.equal(signFlipP([]), 1);
  assert.ok(Math.abs(signTestP(0, 5) - 2 / 32) < 1e-12);
  assert.ok(Math.abs(signTestP(7, 10) - 0.34375) < 1e-12); // 2 × P(X ≤ 3), X ~ Bin(10, 1/2) = 2 × 176/1024
  assert.equal(signTestP(5, 10), 1);
  assert.equal(signTestP(0, 0), 1);
});

test("held-out pass@1 per held-out set: instances and families, per stage; nothing when the dataset does not say", () => {
  assert.equal(heldOutTable({ after: { pass_at_1: 0.5, tasks: 4 } }, false), "");
  const html = heldOutTable(
    {
      before: {
        pass_at_1: 0.1,
        tasks: 50,
        by_held_out: { instance: { pass_at_1: 0.125, tasks: 32 }, family: { pass_at_1: 0, tasks: 18 } },
      },
      after: {
        pass_at_1: 0.4,
        tasks: 50,
        by_held_out: { instance: { pass_at_1: 0.5, tasks: 32 }, family: { pass_at_1: 0.25, tasks: 18 } },
      },
    },
    true,
  );
  assert.match(html, /<th>held-out instances \(32 tasks\)<\/th><th>held-out families \(18 tasks\)<\/th>/);
  assert.match(html, /<td>before training<\/td><td>12\.5%<\/td><td>0\.0%<\/td>/);
  assert.match(html, /<td>after the SFT baseline<\/td><td>50\.0%<\/td><td>25\.0%<\/td>/);
});

test("the report's configuration shows what the trainer resolved each default to, never null", () => {
  const html = reportHtml(
    run({
      algorithm: "grpo",
      steps: 2,
      model: null,
      sft_steps: null,
      micro_batch_size: null,
      vllm_server_url: null,
      // The algorithm's options as the trainer writes them: its own nulls, each worded in `resolved`.
      algo_config_resolved: { epsilon: 0.2, epsilon_high: null, vllm_importance_sampling_clip_min: null },
      resolved: {
        model: "the embedded tiny model",
        sft_steps: 60,
        micro_batch_size: "one pass over the whole batch",
        algo_config_resolved: { epsilon_high: "epsilon (0.2): the symmetric clip" },
      },
    }),
    SIM,
  );
  const table = html.slice(html.indexOf("<h2>Configuration</h2>"));
  assert.match(table, /<code>sft_steps<\/code><\/td><td>60 \(the trainer's default\)/);
  assert.match(table, /<code>model<\/code><\/td><td>the embedded tiny model \(the trainer's default\)/);
  assert.match(table, /<code>vllm_server_url<\/code><\/td><td>the trainer's default/);
  assert.match(table, /&quot;epsilon_high&quot;:&quot;epsilon \(0\.2\): the symmetric clip&quot;/);
  assert.match(table, /&quot;vllm_importance_sampling_clip_min&quot;:&quot;the trainer's default&quot;/);
  assert.doesNotMatch(table, /null/);
  assert.doesNotMatch(table, /<code>resolved<\/code>/);
});

test("a run whose test split is empty says nothing was measured, not 0.0% of 0 tasks", () => {
  const dir = tempDir("fim-report-no-test-");
  const empty = { pass_at_1: 0, by_kind: {}, tasks: 0, by_novelty: {}, by_held_out: {} };
  writeFileSync(join(dir, "eval.json"), JSON.stringify({ before: empty, sft: empty, after: empty }));
  writeFileSync(join(dir, "config.json"), JSON.stringify({ algorithm: "grpo", eval_split: "test" }));
  const html = reportHtml(dir, SIM);
  const section = html.slice(
    html.indexOf("<h2>Held-out pass@1</h2>"),
    html.indexOf("<h2>Validation curve</h2>"),
  );
  assert.match(section, /Not measured: the dataset's test split has no tasks/);
  assert.doesNotMatch(section, /%/);
});

test("--split-seed and --split-fractions reach the miner; anything else is a usage error", () => {
  assert.deepEqual(miningSplit({}), {});
  assert.deepEqual(miningSplit({ "split-seed": "3", "split-fractions": "0.6,0.15,0.25" }), {
    seed: 3,
    fractions: { train: 0.6, validation: 0.15, test: 0.25 },
  });
  for (const bad of ["0.6,0.15", "0.6,0.3,0.3", "a,b,c", "0,0.5,0.5"])
    assert.throws(() => miningSplit({ "split-fractions": bad }), /--split-fractions/, bad);
  assert.throws(() => miningSplit({ "split-seed": "-1" }), /--split-seed/);
});
