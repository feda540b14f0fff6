/**
 * The training host end to end with the scripted fake trainer (test/fixtures/fake-trainer) and the real
 * verifier pool over the simulator: files, events and report; a verifier hang and crash mid-run; a trainer
 * killed with SIGKILL, then resumed; a stop with checkpoint; and the start-up errors.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startTraining, type TrainingOptions, type TrainingEvents } from "../../lean-bridge/train/session";
import type {
  TrainProgressParams,
  TrainSampleParams,
  TrainEvalParams,
} from "../../lean-bridge/protocol/trainer";
import { exportDataset } from "../../lean-bridge/dataset/exporter";
import { EXAMPLE, REPO } from "../helpers";
import { exportOptions } from "../dataset/exampleExport";
import { tempDir } from "../tempDirs";

const FAKE_PYTHON = join(REPO, "test", "fixtures", "fake-trainer", "python");

function runDir(script?: object): string {
  const dir = tempDir("fim-train-");
  if (script) writeFileSync(join(dir, "fake-script.json"), JSON.stringify(script));
  return dir;
}

function options(dir: string, extra: Partial<TrainingOptions> = {}): TrainingOptions {
  return {
    target: EXAMPLE,
    runDir: dir,
    config: { steps: 3, group_size: 2, kinds: ["tactic"] },
    reward: "binary",
    verifier: { kind: "simulator", slots: 2, timeoutMs: 2_000, extraArgs: ["--faults"] },
    resume: false,
    python: FAKE_PYTHON,
    ...extra,
  };
}

function recorder() {
  const progress: TrainProgressParams[] = [];
  const samples: TrainSampleParams[] = [];
  const evals: TrainEvalParams[] = [];
  const phases: string[] = [];
  const events: TrainingEvents = {
    onPhase: (p) => phases.push(p),
    onProgress: (p) => progress.push(p),
    onSample: (s) => samples.push(s),
    onEval: (e) => evals.push(e),
  };
  return { progress, samples, evals, phases, events };
}

function jsonl<T>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);
}

test("a run mines the workspace, relays verification, and ends with its files and a report", async () => {
  const dir = runDir();
  const rec = recorder();
  const started = await startTraining(options(dir), rec.events);
  assert.equal(started.kind, "started", JSON.stringify(started));
  if (started.kind !== "started") return;
  const outcome = await started.session.done;
  assert.equal(outcome.kind, "completed", JSON.stringify(outcome));
  if (outcome.kind !== "completed") return;
  assert.deepEqual(rec.phases.slice(0, 4), [
    "mining",
    "preparing-python",
    "starting-verifier",
    "starting-trainer",
  ]);
  assert.deepEqual(
    rec.progress.map((p) => p.step),
    [1, 2, 3],
  );
  assert.deepEqual(
    outcome.evals.map((e) => e.stage),
    ["before", "after"],
  );
  // The fake proposes the task's own middle (proved by the simulator) and a wrong tactic (not proved).
  assert.deepEqual([...new Set(rec.samples.map((s) => s.verdict))].sort(), ["failed", "proved"]);
  for (const s of rec.samples) assert.equal(s.reward, s.verdict === "proved" ? 1 : 0);
  assert.ok(existsSync(join(dir, "dataset", "tasks.jsonl")));
  assert.equal(jsonl(join(dir, "metrics.jsonl")).length, 3);
  assert.equal(jsonl(join(dir, "samples.jsonl")).length, 6);
  assert.deepEqual(JSON.parse(readFileSync(join(dir, "fake-violations.json"), "utf8")), []);
  const html = readFileSync(outcome.reportPath, "utf8");
  assert.match(html, /simulator .*\(not Lean\)/);
  assert.match(html, /<svg/);
  assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3\.org)/);
});

test("a verifier hang and a verifier crash mid-run cost only those samples", async () => {
  const dir = runDir({ faults: { "2": "hang", "3": "crash" } });
  const rec = recorder();
  const started = await startTraining(
    options(dir, { config: { steps: 4, group_size: 2, kinds: ["tactic"] } }),
    rec.events,
  );
  assert.equal(started.kind, "started");
  if (started.kind !== "started") return;
  const outcome = await started.session.done;
  assert.equal(outcome.kind, "completed", JSON.stringify(outcome));
  const byStep = (step: number) => rec.samples.filter((s) => s.step === step).map((s) => s.verdict);
  assert.deepEqual(byStep(1), ["proved", "failed"]);
  assert.deepEqual(byStep(2), ["timeout", "failed"]);
  assert.deepEqual(byStep(3), ["crashed", "failed"]);
  assert.deepEqual(byStep(4), ["proved", "failed"], "the verifier recovered after the crash");
});

test("a broken Lean environment stops the run with what to do, instead of training on zeros", async () => {
  // sim:stale-imports stands for Lean's "Imports are out of date" on the document's header.
  const dir = runDir({ faults: { "2": "stale-imports" } });
  const rec = recorder();
  const logs: string[] = [];
  const started = await startTraining(
    options(dir, { config: { steps: 6, group_size: 2, kinds: ["tactic"] } }),
    { ...rec.events, onLog: (l) => logs.push(`${l.level}: ${l.message}`) },
  );
  assert.equal(started.kind, "started");
  if (started.kind !== "started") return;
  const outcome = await started.session.done;
  assert.equal(outcome.kind, "failed", JSON.stringify(outcome));
  if (outcome.kind !== "failed") return;
  assert.match(outcome.message, /Lean environment is broken/);
  assert.match(outcome.message, /out of date/);
  assert.match(outcome.hint, /lake build/);
  assert.match(outcome.hint, /--resume/);
  assert.ok(rec.samples.some((s) => s.verdict === "environment"));
  assert.ok(
    rec.progress.every((p) => p.step <= 3),
    `the run stopped right after the broken step, not at step ${rec.progress.at(-1)?.step}`,
  );
  assert.equal(logs.filter((l) => /environment is broken/.test(l)).length, 1, "said once");
  assert.ok(existsSync(join(dir, "checkpoints")), "a checkpoint is kept");
});

test("a trainer killed with SIGKILL is reported clearly, and --resume continues from its last checkpoint", async () => {
  const dir = runDir();
  const rec = recorder();
  let killed = false;
  const events: TrainingEvents = {
    ...rec.events,
    onProgress: (p) => {
      rec.progress.push(p);
      if (p.step === 2 && !killed) {
        killed = true;
        process.kill(Number(readFileSync(join(dir, "fake.pid"), "utf8")), "SIGKILL");
      }
    },
  };
  const started = await startTraining(
    options(dir, { config: { steps: 5, group_size: 2, kinds: ["tactic"] } }),
    events,
  );
  assert.equal(started.kind, "started");
  if (started.kind !== "started") return;
  const outcome = await started.session.done;
  assert.equal(outcome.kind, "failed");
  if (outcome.kind !== "failed") return;
  assert.match(outcome.message, /ended unexpectedly \(killed by SIGKILL\)/);
  assert.match(outcome.hint, /--resume/);
  assert.ok(existsSync(join(dir, "report.html")), "a report is written for a failed run too");

  const again = recorder();
  const resumed = await startTraining(
    options(dir, { resume: true, config: { steps: 5, group_size: 2, kinds: ["tactic"] } }),
    again.events,
  );
  assert.equal(resumed.kind, "started", JSON.stringify(resumed));
  if (resumed.kind !== "started") return;
  const second = await resumed.session.done;
  assert.equal(second.kind, "completed", JSON.stringify(second));
  const steps = jsonl<{ step: number }>(join(dir, "metrics.jsonl")).map((m) => m.step);
  assert.deepEqual(steps, [1, 2, 3, 4, 5], "each step once: lines past the checkpoint were dropped");
  assert.ok(again.progress[0]!.step >= 2, "the resumed run did not start over");
  if (second.kind === "completed")
    assert.deepEqual(
      second.evals.map((e) => e.stage),
      ["before", "after"],
      'the earlier session\'s "before" comes from eval.json',
    );
});

test("stop() checkpoints, and the outcome names the checkpoint", async () => {
  const dir = runDir();
  const rec = recorder();
  const control: { stop?: () => Promise<void>; asked?: boolean } = {};
  const events: TrainingEvents = {
    ...rec.events,
    onProgress: (p) => {
      rec.progress.push(p);
      if (p.step >= 2 && control.stop && !control.asked) {
        control.asked = true;
        void control.stop();
      }
    },
  };
  const started = await startTraining(
    options(dir, { config: { steps: 10_000, group_size: 2, kinds: ["tactic"], checkpoint_every: 1000 } }),
    events,
  );
  assert.equal(started.kind, "started");
  if (started.kind !== "started") return;
  control.stop = () => started.session.stop();
  const outcome = await started.session.done;
  assert.equal(outcome.kind, "stopped", JSON.stringify(outcome));
  if (outcome.kind !== "stopped") return;
  assert.ok(outcome.checkpoint && existsSync(outcome.checkpoint), "the checkpoint exists");
  assert.ok(existsSync(outcome.reportPath));
  assert.ok(rec.progress.length < 10_000);
});

test("a trainer that answers stop and exits without train/done leaves no stop timer behind", async () => {
  const dir = runDir({ exitOnStop: true });
  const control: { stop?: () => Promise<void>; stopped?: Promise<void> } = {};
  const started = await startTraining(
    options(dir, { config: { steps: 10_000, group_size: 2, kinds: ["tactic"], checkpoint_every: 1000 } }),
    {
      onProgress: (p) => {
        if (p.step >= 2 && control.stop) control.stopped ??= control.stop();
      },
    },
  );
  assert.equal(started.kind, "started");
  if (started.kind !== "started") return;
  control.stop = () => started.session.stop();
  const outcome = await started.session.done;
  await control.stopped;
  assert.equal(outcome.kind, "stopped", JSON.stringify(outcome));
  // The stop timeout is two minutes: a timer still pending here would keep the host alive that long.
  assert.deepEqual(
    process.getActiveResourcesInfo().filter((r) => r === "Timeout"),
    [],
  );
});

test("start-up errors are one clear message each", async () => {
  const tacticsOnly = join(runDir(), "dataset");
  const exported = await exportDataset(exportOptions(tacticsOnly, { kinds: ["tactic"] }));
  assert.equal(exported.kind, "ok");
  const broken = runDir();
  writeFileSync(join(broken, "tasks.jsonl"), '{"id": "a"\n');
  const cases: [string, TrainingOptions, RegExp][] = [
    [
      "trainer refuses",
      options(
        runDir({
          failInitialize: "the model path /nope does not exist: give a Hugging Face model directory",
        }),
      ),
      /model path \/nope does not exist/,
    ],
    ["missing folder", options(runDir(), { target: "/nonexistent/ws" }), /no such folder/],
    [
      "not a workspace",
      options(runDir(), { target: join(REPO, "media") }),
      /neither a dataset .* nor a Lean workspace/,
    ],
    [
      "no tasks of the kinds",
      options(runDir(), {
        config: { kinds: ["proof"] },
        target: join(REPO, "test", "fixtures", "fake-trainer"),
      }),
      /neither a dataset/,
    ],
    ["resume without checkpoint", options(runDir(), { resume: true }), /no complete checkpoint/],
    [
      "bad python",
      options(runDir(), { python: "/nonexistent/python3" }),
      /--python \/nonexistent\/python3: no such file/,
    ],
  ];
  for (const [name, opts, pattern] of cases) {
    const result = await startTraining(opts, {});
    assert.equal(result.kind, "error", name);
    if (result.kind === "error") assert.match(result.message, pattern, name);
  }
});

test("a dataset whose workspace is gone is checked by the simulator in a copy of its files; Lean refuses it", async () => {
  const dataset = join(runDir(), "dataset");
  const exported = await exportDataset(exportOptions(dataset, { kinds: ["tactic"] }));
  assert.equal(exported.kind, "ok");
  const report = JSON.parse(readFileSync(join(dataset, "report.json"), "utf8")) as Record<string, unknown>;
  writeFileSync(
    join(dataset, "report.json"),
    JSON.stringify({ ...report, workspace: "/nonexistent/workspace" }),
  );
  const dir = runDir();
  const rec = recorder();
  const started = await startTraining(
    options(dir, { target: dataset, config: { steps: 1, group_size: 2 } }),
    rec.events,
  );
  assert.equal(started.kind, "started", JSON.stringify(started));
  if (started.kind !== "started") return;
  assert.equal((await started.session.done).kind, "completed");
  assert.ok(
    existsSync(join(dir, "workspace", rec.samples[0]!.file)),
    "the dataset's files were copied for the simulator",
  );
  assert.deepEqual(
    rec.samples.map((s) => s.verdict),
    ["proved", "failed"],
  );
  const lean = await startTraining(
    options(runDir(), { target: dataset, verifier: { kind: "lean", slots: 2, timeoutMs: 2_000 } }),
    {},
  );
  assert.equal(lean.kind, "error");
  if (lean.kind === "error")
    assert.match(lean.message, /does not name a workspace that exists here, and Lean needs the project/);
});
