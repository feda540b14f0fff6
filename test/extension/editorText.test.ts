/**
 * What the editor says, without VS Code: two holes on one line told apart (gutter icon, markers, lenses),
 * "Show all attempts" grouped by named run, FIM Holes rows naming the declaration, the phases of a run in
 * words, and the end-of-run messages naming the verifier.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { TrainEvalParams } from "../../lean-bridge/protocol/trainer";
import type { TrainingPhase } from "../../lean-bridge/train/session";
import { HoleStore } from "../../extension/state/holeStore";
import { holeMarker, lensTitle, lineMarks } from "../../extension/state/gutterMarks";
import { UNNAMED_RUN, attemptsByRun, attemptsDocument } from "../../extension/state/attemptsText";
import { holeRowLabel } from "../../extension/state/hoverText";
import {
  TRAINING_PHASES,
  completedMessage,
  phaseAfterEval,
  phaseAfterInitialize,
  phaseAfterStep,
  phaseFromLog,
  phaseLabel,
  sftPlanned,
  stoppedMessage,
} from "../../extension/state/runNarration";
import { range as r, trainSample } from "./trainSamples";

const SIM = { run: "2026-11-24T10-00-00", verifier: "simulator (not Lean)", decl: "Foo.bar" };

test("two holes starting on one line: the 'several' icon, numbered markers, and lenses that say which is which", () => {
  const store = new HoleStore();
  // `constructor <;> simp` style: two holes on line 4, one alone on line 6.
  store.record(trainSample("right", "failed", 1, { hole: r(4, 18, 4, 22) }), "/w/A.lean", SIM);
  store.record(trainSample("left", "proved", 1, { hole: r(4, 2, 4, 13) }), "/w/A.lean", SIM);
  store.record(trainSample("alone", "proved", 1, { hole: r(6, 2, 6, 8) }), "/w/A.lean", SIM);
  const holes = store.holesIn("/w/A.lean");
  const marks = lineMarks(holes);
  assert.deepEqual(
    marks.map((m) => [m.line, m.icon, m.holes.map((h) => h.taskId)]),
    [
      [4, "several", ["left", "right"]],
      [6, "proved", ["alone"]],
    ],
    "no gutter colour that contradicts one of the holes",
  );
  assert.equal(holeMarker(store.get("left")!, holes), "①");
  assert.equal(holeMarker(store.get("right")!, holes), "②");
  assert.equal(holeMarker(store.get("alone")!, holes), "", "a hole alone on its line needs no marker");
  assert.equal(lensTitle(store.get("left")!, "①"), "① tactic, col 3: proved (best proved), 1 attempt");
  assert.equal(lensTitle(store.get("right")!, "②"), "② tactic, col 19: failed (best failed), 1 attempt");
  assert.equal(lensTitle(store.get("alone")!, ""), "tactic hole: proved (best proved), 1 attempt");
  // The same verdict family on one line: that icon, no need for "several".
  store.record(trainSample("right", "proved", 2, { hole: r(4, 18, 4, 22) }), "/w/A.lean", SIM);
  assert.equal(lineMarks(store.holesIn("/w/A.lean"))[0]!.icon, "proved");
});

test("Show all attempts: grouped by run, each run named with its verifier, newest first, read-only text", () => {
  const store = new HoleStore();
  const hole = r(2, 2, 2, 7);
  store.restore([
    {
      taskId: "t",
      file: "/w/A.lean",
      kind: "tactic",
      range: hole,
      attempts: [
        { candidate: "old", verdict: "failed", reward: 0, step: 1, algorithm: "grpo", diagnostics: [] },
      ],
      total: 1,
      best: "failed",
      latest: { candidate: "old", verdict: "failed", reward: 0, step: 1, algorithm: "grpo", diagnostics: [] },
    },
  ]);
  store.record(trainSample("t", "failed", 1, { hole }), "/w/A.lean", { ...SIM, run: "run-A" });
  store.record(trainSample("t", "proved", 2, { hole }), "/w/A.lean", { ...SIM, run: "run-A" });
  store.record(trainSample("t", "failed", 1, { hole }), "/w/A.lean", {
    ...SIM,
    run: "run-B",
    verifier: "Lean",
  });
  const groups = attemptsByRun(store.get("t")!);
  assert.deepEqual(
    groups.map((g) => [g.run, g.verifier, g.attempts.map((a) => a.step)]),
    [
      ["run-B", "Lean", [1]],
      ["run-A", "simulator (not Lean)", [2, 1]],
      [UNNAMED_RUN, undefined, [1]],
    ],
  );
  const text = attemptsDocument(store.get("t")!, "FimExamples/A.lean", (a) =>
    a.verdict === "failed" ? [{ severity: "Error", line: 0, message: "unsolved goals\n⊢ p" }] : [],
  );
  assert.match(
    text,
    /^-- FIM-RLVR: attempts at FimExamples\/A\.lean line 3 \(tactic hole in Foo\.bar\), newest first, by run\. Best so far: proved\. Read-only\./,
  );
  assert.match(text, /-- =+ Run run-B · verifier: Lean · 1 attempt\n/);
  assert.match(
    text,
    /-- =+ Run run-A · verifier: simulator \(not Lean\) · 2 attempts\n\n-- #1 proved · reward 1\.00 · step 2 · grpo\nsimp -- 2\n/,
  );
  assert.match(
    text,
    /-- Error at candidate line 1: unsolved goals\n-- ⊢ p\n/,
    "multi-line messages stay comments",
  );
  assert.ok(text.indexOf("run-B") < text.indexOf("run-A"), "the newest run first");
});

test("FIM Holes rows name the declaration (or 'example'); without a name, the line alone", () => {
  const store = new HoleStore();
  store.record(trainSample("a", "failed", 1, { hole: r(9, 2, 9, 7) }), "/w/A.lean", SIM);
  store.record(trainSample("b", "failed", 1, { hole: r(12, 2, 12, 7) }), "/w/A.lean", { ...SIM, decl: "" });
  store.record(trainSample("c", "failed", 1, { hole: r(15, 2, 15, 7) }), "/w/A.lean");
  assert.equal(holeRowLabel(store.get("a")!), "Foo.bar · line 10");
  assert.equal(holeRowLabel(store.get("b")!), "example · line 13");
  assert.equal(holeRowLabel(store.get("c")!), "line 16");
});

test("the run's phases in words: never a raw id, SFT step k/n, evaluations, RL", () => {
  const ids: TrainingPhase[] = [
    "mining",
    "preparing-python",
    "starting-verifier",
    "starting-trainer",
    "training",
    "stopping",
  ];
  for (const id of ids) assert.doesNotMatch(phaseLabel(id), /-/, `${id} is said in words`);
  assert.equal(phaseLabel("starting-trainer"), "starting the trainer (loading the model)");
  assert.equal(phaseLabel("preparing-python", "pip install torch"), "preparing Python: pip install torch");
  assert.equal(phaseAfterInitialize(false), TRAINING_PHASES.evaluatingBefore);
  assert.equal(phaseAfterInitialize(true), "RL", "a resumed run goes straight to RL");
  assert.equal(phaseAfterEval("before", true), "SFT warm start");
  assert.equal(phaseAfterEval("before", false), "RL");
  assert.equal(phaseAfterEval("sft", true), "RL");
  assert.equal(phaseFromLog("SFT step 50/60: loss 1.234"), "SFT step 50/60");
  assert.equal(phaseFromLog("SFT step 60/60: loss 0.9"), TRAINING_PHASES.evaluatingSft);
  assert.equal(phaseFromLog("resumed from /r (step 3)"), undefined);
  assert.equal(phaseAfterStep(3, 10), "RL");
  assert.equal(phaseAfterStep(10, 10), TRAINING_PHASES.evaluatingAfter);
  // trainer/fim_rlvr/core/config.py resolved_sft_steps: explicit, else 60 for the embedded model, 0 otherwise.
  assert.equal(sftPlanned({ model: null }), true);
  assert.equal(sftPlanned({ model: null, sft_steps: 0 }), false);
  assert.equal(sftPlanned({ model: "/m" }), false);
  assert.equal(sftPlanned({ model: "/m", sft_steps: 5 }), true);
});

test("the end-of-run messages give every held-out figure and name the verifier", () => {
  const evals: TrainEvalParams[] = [
    { stage: "before", split: "test", passAt1: 0.125, byKind: {}, tasks: 8 },
    { stage: "sft", split: "test", passAt1: 0.25, byKind: {}, tasks: 8 },
    { stage: "after", split: "test", passAt1: 0.375, byKind: {}, tasks: 8 },
  ];
  assert.equal(
    completedMessage(evals, "simulator"),
    "FIM-RLVR training completed; rewards from the simulator (not Lean). Held-out pass@1 12.5% before → 25.0% after SFT → 37.5% after RL (8 tasks).",
  );
  assert.match(completedMessage([], "lean"), /^FIM-RLVR training completed; rewards from Lean\.$/);
  assert.match(
    stoppedMessage("/r/checkpoints/step-3"),
    /checkpoint kept at \/r\/checkpoints\/step-3\. Resume/,
  );
  assert.match(stoppedMessage(null), /nothing to resume/);
});
