/**
 * The training host's pure parts: the report page, the progress line, TrainConfig from flags and files,
 * Python discovery, and the latest-checkpoint rule (shared with the trainer through a fixture).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { reportHtml } from "../../lean-bridge/train/report";
import { progressLine, progressReporter } from "../../lean-bridge/train/progress";
import { buildTrainConfig } from "../../lean-bridge/train/config";
import {
  ALGORITHM_OPTIONS,
  TRAIN_CONFIG_PROPERTIES,
  UNDERSTOOD_KEYWORDS,
} from "../../lean-bridge/train/configCheck";
import { latestCheckpoint } from "../../lean-bridge/train/checkpoints";
import {
  checkGivenPython,
  managedPython,
  trainerDependencies,
  inspectPython,
} from "../../lean-bridge/train/python";
import { REPO } from "../helpers";
import { evalsWithEarlier } from "../../lean-bridge/train/run";
import { passAtOneSummary } from "../../lean-bridge/train/passAtOneSummary";
import type { TrainEvalParams } from "../../lean-bridge/protocol/trainer";
import { tempDir } from "../tempDirs";

const SIM = { kind: "simulator" as const, version: "0.1.0", label: "simulator 0.1.0 (not Lean)" };
const LEAN = {
  kind: "lean" as const,
  version: "leanprover/lean4:v4.24.0",
  label: "Lean (leanprover/lean4:v4.24.0)",
};
const tmp = () => tempDir("fim-units-");

function runFolder(): string {
  const dir = tmp();
  const metrics = [1, 2, 3].map((step) =>
    JSON.stringify({
      step,
      loss: 1 / step,
      reward_mean: step / 4,
      pass_rate: step / 5,
      pass_rate_by_kind: { tactic: step / 4 },
      kl: 0.01,
      clip_fraction: 0.1,
      gen_seconds: 2,
      verify_seconds: 1,
      verify_wait_seconds: 0.1,
      opt_seconds: 1,
    }),
  );
  writeFileSync(join(dir, "metrics.jsonl"), metrics.join("\n") + '\n{"step": 4, "loss"'); // the last line cut by a kill
  const samples = [
    { step: 1, task_id: "t1", kind: "tactic", candidate: "exact <foo> & bar", verdict: "proved", reward: 1 },
    { step: 1, task_id: "t2", kind: "block", candidate: "simp", verdict: "failed", reward: 0 },
    { step: 2, task_id: "t2", kind: "block", candidate: "omega", verdict: "timeout", reward: 0 },
  ];
  writeFileSync(join(dir, "samples.jsonl"), samples.map((s) => JSON.stringify(s)).join("\n") + "\n");
  writeFileSync(
    join(dir, "eval.json"),
    JSON.stringify({
      before: { pass_at_1: 0.1, by_kind: { tactic: 0.2 }, tasks: 10 },
      sft: null,
      after: { pass_at_1: 0.5, by_kind: { tactic: 0.6 }, tasks: 10 },
    }),
  );
  writeFileSync(join(dir, "config.json"), JSON.stringify({ algorithm: "dapo", model: null, steps: 3 }));
  return dir;
}

test("the report names a simulator prominently, shows curves, tables, verdicts and escaped samples, and fetches nothing", () => {
  const html = reportHtml(runFolder(), SIM);
  assert.match(html, /class="banner sim">Verifier: <b>simulator 0\.1\.0 \(not Lean\)<\/b>/);
  assert.equal((html.match(/<svg /g) ?? []).length, 6, "five curves and the verdict mix");
  assert.match(html, /Reward per step/);
  assert.match(html, /<b>10\.0%<\/b>.*<b>50\.0%<\/b>/s, "pass@1 before and after");
  assert.match(html, /<td>block<\/td><td>2<\/td><td>0<\/td><td>0\.0%<\/td>/, "per-kind table from samples");
  assert.match(html, /Verdicts of 3 samples/);
  assert.match(html, /exact &lt;foo&gt; &amp; bar/);
  assert.doesNotMatch(html, /<script|<link|src=|https?:\/\/(?!www\.w3\.org\/2000\/svg)/);
  assert.match(html, /3 step\(s\) recorded of 3/, "the cut line is skipped");
  const lean = reportHtml(runFolder(), LEAN);
  assert.match(lean, /class="banner lean">Verifier: <b>Lean \(leanprover\/lean4:v4\.24\.0\)<\/b>/);
  assert.doesNotMatch(lean, /not Lean/);
});

test("an empty run folder still renders a report that says what is missing", () => {
  const html = reportHtml(tmp(), SIM);
  assert.match(html, /No samples yet/);
  assert.match(html, /eval\.json is missing/);
  assert.match(html, /no data yet/);
});

test("progress: one line per step off a terminal, redrawn in place on one", () => {
  const p = { step: 3, totalSteps: 12, metrics: { reward_mean: 0.4567, pass_rate: 0.25 } };
  assert.equal(progressLine(p, 12.34, false), "step 3/12 reward 0.457 pass 25.0% 12.3 checks/s");
  assert.match(
    progressLine(p, undefined, true),
    /^step 3\/12 \[█{6}░{18}\] reward 0\.457 pass 25\.0% – checks\/s$/,
  );
  const plain: string[] = [];
  const r1 = progressReporter({ stream: { write: (t: string) => plain.push(t) > 0, isTTY: false } });
  r1.onProgress!(p);
  r1.onLog!({ level: "debug", message: "hidden" });
  r1.onLog!({ level: "warning", message: "careful" });
  r1.onEval!({ stage: "sft", split: "test", passAt1: 0.5, byKind: { tactic: 0.5 }, tasks: 4 });
  assert.deepEqual(plain, [
    "step 3/12 reward 0.457 pass 25.0% – checks/s\n",
    "warning: careful\n",
    "held-out pass@1 after SFT: 50.0% of 4 tasks (tactic 50.0%)\n",
  ]);
  const tty: string[] = [];
  const r2 = progressReporter({ stream: { write: (t: string) => tty.push(t) > 0, isTTY: true } });
  r2.onProgress!(p);
  r2.onProgress!({ ...p, step: 4 });
  r2.onLog!({ level: "info", message: "note" });
  r2.finish();
  assert.equal(
    tty.join(""),
    `${progressLine(p, undefined, true)}\r\x1b[2K${progressLine({ ...p, step: 4 }, undefined, true)}\r\x1b[2Knote\n`,
  );
});

test("TrainConfig: the file first, flags on top, algo-config merged, unknown keys listed", () => {
  const dir = tmp();
  writeFileSync(join(dir, "c.yaml"), "steps: 5\ngroup_size: 4\nalgo_config:\n  epsilon: 0.1\n  beta: 0.02\n");
  const built = buildTrainConfig({
    config: join(dir, "c.yaml"),
    steps: "7",
    algorithm: "dapo",
    algoConfig: '{"beta": 0}',
  });
  assert.deepEqual(built, {
    kind: "ok",
    config: { steps: 7, group_size: 4, algorithm: "dapo", algo_config: { epsilon: 0.1, beta: 0 } },
  });
  writeFileSync(join(dir, "c.json"), '{"stepz": 3}');
  const bad = buildTrainConfig({ config: join(dir, "c.json") });
  assert.equal(bad.kind, "error");
  if (bad.kind === "error")
    assert.match(bad.message, /unknown key\(s\) stepz; valid keys: algorithm, algo_config, model, steps,/);
  writeFileSync(join(dir, "broken.yaml"), "steps: [1,\n");
  assert.match(JSON.stringify(buildTrainConfig({ config: join(dir, "broken.yaml") })), /is not valid YAML/);
  assert.match(
    JSON.stringify(buildTrainConfig({ groupSize: "0" })),
    /--group-size must be a whole number of at least 1/,
  );
  // LoRA flags: mapped to the trainer's keys; combinations without a rank refused up front.
  assert.deepEqual(
    buildTrainConfig({ loraR: "16", loraAlpha: "8", loraTargets: "q_proj, v_proj", loadIn4bit: true }),
    {
      kind: "ok",
      config: { lora_r: 16, lora_alpha: 8, lora_targets: ["q_proj", "v_proj"], load_in_4bit: true },
    },
  );
  assert.match(JSON.stringify(buildTrainConfig({ loadIn4bit: true })), /give --lora-r R as well/);
  assert.match(JSON.stringify(buildTrainConfig({ loraTargets: "q_proj" })), /need --lora-r R/);
  assert.match(
    JSON.stringify(buildTrainConfig({ loraR: "0" })),
    /--lora-r must be a whole number of at least 1/,
  );
  writeFileSync(join(dir, "lora.yaml"), "lora_r: 8\n");
  assert.equal(buildTrainConfig({ config: join(dir, "lora.yaml"), loadIn4bit: true }).kind, "ok");
});

test("TrainConfig values are checked against the schema before start-up, with what to write", () => {
  const dir = tmp();
  const file = (name: string, text: string) => {
    writeFileSync(join(dir, name), text);
    return join(dir, name);
  };
  // The command line's spellings of compare are a file's too.
  assert.deepEqual(buildTrainConfig({ config: file("none.yaml", "compare: none\n") }), {
    kind: "ok",
    config: { compare: [] },
  });
  assert.deepEqual(buildTrainConfig({ config: file("both.yaml", "compare: sft,rft\n") }), {
    kind: "ok",
    config: { compare: ["sft", "rft"] },
  });
  const refused = (flags: Parameters<typeof buildTrainConfig>[0], pattern: RegExp) => {
    const r = buildTrainConfig(flags);
    assert.equal(r.kind, "error", JSON.stringify(flags));
    if (r.kind === "error") assert.match(r.message, pattern);
  };
  refused(
    { config: file("cmp.yaml", "compare: ppo\n") },
    /compare must be a list of one of: sft, rft, sft_data; got \["ppo"\]/,
  );
  refused(
    { config: file("lr.yaml", "learning_rate: -1\n") },
    /learning_rate must be a number above 0; got -1/,
  );
  refused(
    { config: file("steps.yaml", "steps: many\n") },
    /steps must be a whole number at least 0; got "many"/,
  );
  refused(
    { config: file("eval.yaml", "eval_limit: 0\n") },
    /eval_limit must be a whole number at least 1, or null/,
  );
  refused(
    { config: file("style.yaml", "prompt_style: xml\n") },
    /prompt_style must be one of: auto, fim, chat/,
  );
  refused(
    { config: file("g1.yaml", "group_size: 1\n") },
    /--config .*g1\.yaml: group_size must be at least 2: GRPO/,
  );
  refused({ groupSize: "1" }, /--group-size must be at least 2: GRPO-family advantages compare/);
  refused(
    { algoConfig: '{"nope": 1}' },
    /--algo-config: unknown algorithm option nope; valid options: epsilon, epsilon_high, beta,/,
  );
  refused(
    { config: file("eps.yaml", "algo_config:\n  epsilon: 2\n") },
    /eps\.yaml: algorithm option epsilon must be a number at least 0 and below 1; got 2/,
  );
  refused(
    { algoConfig: '{"vllm_importance_sampling_mode": "tokens"}' },
    /algorithm option vllm_importance_sampling_mode must be one of: token_truncate, token_mask/,
  );
  assert.equal(buildTrainConfig({ algoConfig: '{"epsilon_high": null, "beta": 0}' }).kind, "ok");
  refused(
    { config: file("algo.yaml", "algo_config:\n  nope: 1\n") },
    /algo\.yaml: unknown algorithm option nope; valid options: epsilon,/,
  );
  refused(
    { config: join(dir, "absent.yaml") },
    /--config .*absent\.yaml: no such file; give a TrainConfig file in YAML or JSON/,
  );
  refused({ config: dir }, /is a folder, not a file/);
  const enoent = buildTrainConfig({ config: join(dir, "absent.yaml") });
  assert.doesNotMatch(JSON.stringify(enoent), /ENOENT/);
});

test("the config checker reads every keyword the TrainConfig schema uses", () => {
  const seen = new Set<string>();
  const walk = (node: unknown) => {
    if (typeof node !== "object" || node === null) return;
    for (const [key, value] of Object.entries(node)) {
      seen.add(key);
      if (key === "oneOf") (value as unknown[]).forEach(walk);
      if (key === "items") walk(value);
    }
  };
  for (const property of [...Object.values(TRAIN_CONFIG_PROPERTIES), ...Object.values(ALGORITHM_OPTIONS)])
    walk(property);
  assert.deepEqual(
    [...seen].filter((k) => !UNDERSTOOD_KEYWORDS.includes(k)),
    [],
  );
});

test("Python: a given interpreter is checked for the trainer's dependencies, with the install command", (t) => {
  assert.equal(checkGivenPython(join(REPO, "test", "fixtures", "fake-trainer", "python")).kind, "ok");
  const notPython = checkGivenPython("/bin/true");
  assert.equal(notPython.kind, "error");
  const system = inspectPython("python3");
  if (system.kind === "ok" && system.info.missing.includes("torch")) {
    const r = checkGivenPython("python3");
    assert.equal(r.kind, "error");
    if (r.kind === "error") {
      assert.match(r.message, /python3 lacks the trainer's dependencies: torch/);
      assert.match(r.hint, /python3 -m pip install torch==2\.13\.0/);
    }
  } else t.diagnostic("python3 here has torch; the missing-torch message is not exercised");
  const deps = trainerDependencies(readFileSync(join(REPO, "trainer", "pyproject.toml"), "utf8"));
  assert.equal(deps[0], "torch==2.13.0");
  assert.ok(deps.some((d) => d.startsWith("transformers")));
  assert.ok(!deps.slice(1).some((d) => /^torch\b/.test(d)), "torch only once, pinned");
});

test("the managed environment prints the exact failing command, and needs a Python 3.10+ to start from", async () => {
  const dir = tmp();
  const failing = join(dir, "python3");
  // Answers the version check like Python 3.11, then fails `-m venv` as a broken installation would.
  writeFileSync(
    failing,
    `#!/bin/sh\nif [ "$1" = "-c" ]; then echo '{"version": "3.11.0", "ok": true, "missing": []}'; exit 0; fi\necho "venv: ensurepip is not available" >&2\nexit 1\n`,
  );
  chmodSync(failing, 0o755);
  const lines: string[] = [];
  const r = await managedPython({
    trainerRoot: join(REPO, "trainer"),
    basePython: failing,
    dir: join(dir, "venv"),
    onProgress: (l) => lines.push(l),
  });
  assert.equal(r.kind, "error");
  if (r.kind === "error") {
    assert.match(r.message, /ensurepip is not available/);
    // Built in a staging folder of its own (renamed into place when complete): that is the command shown.
    assert.ok(r.hint.includes(`${failing} -m venv ${join(dir, "venv")}.building-`), r.hint);
  }
  assert.ok(
    lines.some((l) => l.startsWith("$ ")),
    "the command is shown as it runs",
  );
  const none = await managedPython({
    trainerRoot: join(REPO, "trainer"),
    basePython: "/nonexistent/python3",
    dir: join(dir, "v2"),
  });
  assert.equal(none.kind, "error");
  if (none.kind === "error")
    assert.match(none.message, /no Python 3\.10\+ to build the trainer's environment from/);
});

test("two runs that build the managed environment at once each build their own, and both use the first finished", async () => {
  const dir = tmp();
  const barrier = join(dir, "barrier");
  mkdirSync(barrier);
  // A stand-in base Python: `-m venv D` makes D/bin/python, a stand-in whose `-m pip install` waits until both
  // runs are installing (a barrier, so the two installs overlap for certain; it gives up, failing, when the other
  // never comes) and then succeeds.
  const venvPython = join(dir, "venv-python");
  writeFileSync(
    venvPython,
    `#!/bin/sh\nif [ "$1" = "-c" ]; then echo '{"version": "3.11.0", "ok": true, "missing": []}'; exit 0; fi\n` +
      `touch "${barrier}/$$"\nn=0; while [ "$(ls "${barrier}" | wc -l)" -lt 2 ]; do n=$((n+1)); [ $n -gt 1500 ] && exit 1; sleep 0.02; done\nexit 0\n`,
  );
  const base = join(dir, "python3");
  writeFileSync(
    base,
    `#!/bin/sh\nif [ "$1" = "-c" ]; then echo '{"version": "3.11.0", "ok": true, "missing": []}'; exit 0; fi\n` +
      `mkdir -p "$3/bin" && cp "${venvPython}" "$3/bin/python"\n`,
  );
  chmodSync(venvPython, 0o755);
  chmodSync(base, 0o755);
  const target = join(dir, "cache", "venv-x");
  mkdirSync(dirname(target), { recursive: true });
  const lines: string[][] = [[], []];
  const runs = await Promise.all(
    lines.map((out) =>
      managedPython({
        trainerRoot: join(REPO, "trainer"),
        basePython: base,
        dir: target,
        onProgress: (l) => out.push(l),
      }),
    ),
  );
  assert.deepEqual(
    runs.map((r) => r.kind === "ok" && r.python),
    [join(target, "bin", "python"), join(target, "bin", "python")],
    JSON.stringify(runs),
  );
  const built = lines.map((out) => out.find((l) => l.includes(" -m venv "))!.split(" -m venv ")[1]);
  assert.notEqual(built[0], built[1], "each run built in a folder of its own");
  assert.ok(existsSync(join(target, ".complete")));
  assert.deepEqual(readdirSync(dirname(target)), ["venv-x"], "no staging folder is left behind");
  // A later run finds it complete and builds nothing.
  const later: string[] = [];
  const again = await managedPython({
    trainerRoot: join(REPO, "trainer"),
    basePython: base,
    dir: target,
    onProgress: (l) => later.push(l),
  });
  assert.equal(again.kind, "ok");
  assert.deepEqual(later, []);
});

test("the latest checkpoint: the rule the trainer follows too (test/fixtures/latest-checkpoint.json)", () => {
  const fixture = JSON.parse(
    readFileSync(join(REPO, "test", "fixtures", "latest-checkpoint.json"), "utf8"),
  ) as { cases: { name: string; files: Record<string, string>; expected: string | null }[] };
  assert.ok(fixture.cases.length >= 6);
  for (const c of fixture.cases) {
    const runDir = tmp();
    for (const [path, text] of Object.entries(c.files)) {
      const full = join(runDir, "checkpoints", path);
      mkdirSync(path.endsWith("/") ? full : dirname(full), { recursive: true });
      if (!path.endsWith("/")) writeFileSync(full, text);
    }
    const expected = c.expected === null ? null : join(runDir, "checkpoints", c.expected);
    assert.equal(latestCheckpoint(runDir), expected, c.name);
  }
});

test("a resumed run's summary keeps the earlier stages' novel and memorised figures (issue 25 item 13)", () => {
  const runDir = tempDir("fim-resume-evals-");
  const stage = (p: number) => ({
    pass_at_1: p,
    tasks: 4,
    by_kind: {},
    by_novelty: { novel: { pass_at_1: p / 2, tasks: 2 }, memorised: { pass_at_1: p, tasks: 2 } },
  });
  writeFileSync(join(runDir, "eval.json"), JSON.stringify({ before: stage(0), sft: stage(0.5) }));
  const thisSession: TrainEvalParams[] = [
    {
      stage: "after",
      split: "test",
      passAt1: 0.75,
      byKind: {},
      tasks: 4,
      byNovelty: { novel: { passAt1: 0.5, tasks: 2 }, memorised: { passAt1: 1, tasks: 2 } },
    },
  ];
  const summary = passAtOneSummary(evalsWithEarlier(runDir, thisSession));
  assert.match(summary, /before 0\.0% -> after SFT 50\.0% -> after RL 75\.0%/);
  assert.match(summary, /novel \(2 tasks\): 0\.0% -> 25\.0% -> 50\.0%/, summary);
  assert.doesNotMatch(summary, /–/);
});

test("a run with no held-out tasks says so instead of percentages of 0 tasks", () => {
  const empty = (stage: TrainEvalParams["stage"]): TrainEvalParams => ({
    stage,
    split: "test",
    passAt1: 0,
    byKind: {},
    tasks: 0,
  });
  const summary = passAtOneSummary([empty("before"), empty("sft"), empty("after")]);
  assert.match(summary, /^held-out pass@1: no held-out tasks \(the dataset's test split is empty\)/);
  assert.doesNotMatch(summary, /%/);
  // Each stage's line as the run goes says so too (it printed "0.0% of 0 tasks" four times before the summary).
  const lines: string[] = [];
  const reporter = progressReporter({ stream: { write: (t: string) => lines.push(t) > 0, isTTY: false } });
  for (const stage of ["before", "sft", "after"] as const) reporter.onEval!(empty(stage));
  reporter.onEval!({ ...empty("baseline"), arm: "sft" });
  assert.deepEqual(lines, [
    "held-out pass@1 before training: not measured, no tasks in the test split\n",
    "held-out pass@1 after SFT: not measured, no tasks in the test split\n",
    "held-out pass@1 after RL: not measured, no tasks in the test split\n",
    "held-out pass@1 of the compute-matched SFT baseline: not measured, no tasks in the test split\n",
  ]);
});

test("a resumed run's summary keeps the earlier stages' held-out instance and family figures", () => {
  const runDir = tempDir("fim-resume-heldout-");
  const stage = (p: number) => ({
    pass_at_1: p,
    tasks: 4,
    by_kind: {},
    by_held_out: { instance: { pass_at_1: p / 2, tasks: 2 }, family: { pass_at_1: p, tasks: 2 } },
  });
  writeFileSync(join(runDir, "eval.json"), JSON.stringify({ before: stage(0), sft: stage(0.5) }));
  const thisSession: TrainEvalParams[] = [
    {
      stage: "after",
      split: "test",
      passAt1: 0.75,
      byKind: {},
      tasks: 4,
      byHeldOut: { instance: { passAt1: 0.5, tasks: 2 }, family: { passAt1: 1, tasks: 2 } },
    },
  ];
  const summary = passAtOneSummary(evalsWithEarlier(runDir, thisSession));
  assert.match(summary, /held-out instances \(2 tasks\): 0\.0% -> 25\.0% -> 50\.0%/, summary);
  assert.match(summary, /held-out families \(2 tasks\): 0\.0% -> 50\.0% -> 100\.0%/, summary);
  assert.doesNotMatch(summary, /–/);
});
