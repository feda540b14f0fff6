/**
 * A candidate Fill Hole inserted becomes a hole annotation like training's (same store, icons, hover), naming the
 * model and the verifier (the simulator never as Lean); and the model's answers are cached per prompt, so a fill
 * re-checked after an edit elsewhere asks the model nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { holeAt } from "../../lean-bridge/fill/editorHole";
import type { FilledCandidate } from "../../lean-bridge/fill/fillHole";
import { FakeBackend } from "../../lean-bridge/models/fakeBackend";
import type { Verdict, VerifierIdentity } from "../../lean-bridge/verify/verdict";
import { endAfterInsert, fillAttempt, filledHole } from "../../extension/fill/fillAnnotation";
import { GenerationCache } from "../../extension/fill/generationCache";
import { readSnapshot, makeSnapshot } from "../../extension/state/annotationSnapshot";
import { lineMarks } from "../../extension/state/gutterMarks";
import { HoleStore } from "../../extension/state/holeStore";
import { attemptSummary, hoverMarkdown } from "../../extension/state/hoverText";

const TEXT = [
  "theorem t (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by",
  "  sorry",
  "",
  "example (p : Prop) (hp : p) : p := by",
  "  sorry",
  "",
].join("\n");

const SIMULATOR: VerifierIdentity = { kind: "simulator", version: "0.1", label: "simulator 0.1 (not Lean)" };
const LEAN: VerifierIdentity = {
  kind: "lean",
  version: "leanprover/lean4:v4.24.0",
  label: "Lean (leanprover/lean4:v4.24.0)",
};

function candidate(text: string, verdict: Verdict): FilledCandidate {
  return {
    text,
    raw: text,
    verdict,
    outcome: verdict.kind === "proved" ? "proved" : "lean-error",
    count: 1,
    latencyMs: 5,
  };
}

const proved = (verifier: VerifierIdentity): Verdict => ({
  kind: "proved",
  axioms: [],
  axiomsChecked: true,
  elapsedMs: 3,
  verifier,
  diagnostics: [],
});

const failed = (verifier: VerifierIdentity): Verdict => ({
  kind: "failed",
  reason: "error",
  elapsedMs: 3,
  verifier,
  diagnostics: [
    {
      severity: 1,
      message: "unknown identifier 'fim_rlvr_wrong'",
      range: { start: { line: 9, character: 8 }, end: { line: 9, character: 22 } },
      candidateRange: { start: { line: 1, character: 6 }, end: { line: 1, character: 20 } },
      code: "x",
    },
  ],
});

function hole(line: number) {
  const found = holeAt(TEXT, { start: { line, character: 3 }, end: { line, character: 3 } });
  assert.equal(found.kind, "ok");
  return found.kind === "ok" ? found.hole : (undefined as never);
}

test("the inserted text's range: one line, several lines", () => {
  assert.deepEqual(endAfterInsert({ line: 1, character: 2 }, "omega"), { line: 1, character: 7 });
  assert.deepEqual(endAfterInsert({ line: 1, character: 2 }, "intro x\n  exact x"), {
    line: 2,
    character: 9,
  });
  assert.deepEqual(endAfterInsert({ line: 4, character: 0 }, "a\r\nbc\n"), { line: 6, character: 0 });
});

test("a filled hole is a store record at the candidate's range, with training's gutter icon and a hover naming model and verifier", () => {
  const store = new HoleStore();
  const h = hole(1);
  const placed = filledHole("/ws/A.lean", h, "omega");
  assert.deepEqual(placed.range, { start: { line: 1, character: 2 }, end: { line: 1, character: 7 } });
  assert.equal(placed.decl, "t");
  assert.equal(placed.kind, "proof");
  store.recordAt(
    placed,
    fillAttempt(candidate("omega", proved(SIMULATOR)), "openai:http://127.0.0.1:9/v1#tiny"),
  );
  const [record] = store.holesIn("/ws/A.lean");
  assert.ok(record);
  assert.equal(record.best, "proved");
  assert.deepEqual(
    lineMarks([record]).map((m) => [m.line, m.icon]),
    [[1, "proved"]],
  );
  const md = hoverMarkdown(record, []);
  assert.match(md, /proof hole in t · best so far: \*\*proved\*\* · verifier: simulator 0\.1 \(not Lean\)/);
  assert.match(md, /\*\*proved\*\* · Fill Hole · model openai:http:\/\/127\.0\.0\.1:9\/v1#tiny/);
  assert.doesNotMatch(md, /reward|step 0/, "a fill has no reward or step to show");
  assert.match(md, /```lean\nomega\n```/);
});

test("the simulator's messages are never called Lean's; Lean's are", () => {
  const store = new HoleStore();
  const h = hole(4);
  const messages = [{ severity: "Error", line: 1, message: "unknown identifier 'fim_rlvr_wrong'" }];
  const bySimulator = fillAttempt(candidate("intro\n  exact fim_rlvr_wrong", failed(SIMULATOR)), "onnx:/m");
  assert.deepEqual(bySimulator.diagnostics, [
    {
      severity: 1,
      message: "unknown identifier 'fim_rlvr_wrong'",
      candidateRange: { start: { line: 1, character: 6 }, end: { line: 1, character: 20 } },
    },
  ]);
  const placed = filledHole("/ws/A.lean", h, "intro\n  exact fim_rlvr_wrong");
  assert.equal(placed.decl, "", "an example is named as training names it");
  store.recordAt(placed, bySimulator);
  const md = hoverMarkdown(store.get(placed.taskId)!, messages);
  assert.match(md, /in an example/);
  assert.match(md, /The simulator's messages \(not Lean\):/);
  assert.doesNotMatch(md, /Lean's messages/);
  store.recordAt(placed, fillAttempt(candidate("exact hp", proved(LEAN)), "onnx:/m"));
  const again = store.get(placed.taskId)!;
  assert.equal(again.total, 2, "the same place filled again adds an attempt");
  assert.deepEqual(again.range, placed.range);
  store.recordAt(placed, fillAttempt(candidate("intro\n  exact fim_rlvr_wrong", failed(LEAN)), "onnx:/m"));
  assert.match(hoverMarkdown(store.get(placed.taskId)!, messages), /Lean's messages:/);
  assert.equal(attemptSummary(store.get(placed.taskId)!.latest), "failed · Fill Hole · model onnx:/m");
});

test("a filled hole is not moved through a training run's edit log, and moves with later edits", () => {
  const store = new HoleStore();
  // An edit made before the fill (a line added above): the fill's range is already the file's current one.
  store.applyEdits("/ws/A.lean", [
    { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: "-- note\n" },
  ]);
  const placed = filledHole("/ws/A.lean", hole(1), "omega");
  store.recordAt(placed, fillAttempt(candidate("omega", proved(SIMULATOR)), "onnx:/m"));
  assert.deepEqual(store.get(placed.taskId)!.range, placed.range);
  store.applyEdits("/ws/A.lean", [
    { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, text: "\n" },
  ]);
  assert.equal(store.get(placed.taskId)!.range.start.line, 2);
});

test("a filled hole's annotation is saved and restored with its model", () => {
  const store = new HoleStore();
  const placed = filledHole("/ws/A.lean", hole(1), "omega");
  store.recordAt(placed, fillAttempt(candidate("omega", proved(SIMULATOR)), "onnx:/m"));
  const snapshot = JSON.parse(JSON.stringify(makeSnapshot(store.records(), () => TEXT))) as unknown;
  const restored = readSnapshot(snapshot, () => TEXT);
  assert.equal(restored.malformed, 0);
  assert.equal(restored.records[0]?.latest.model, "onnx:/m");
});

test("the model's answers are cached per prompt: a re-check asks nothing, another prompt or setting asks again", async () => {
  const backend = new FakeBackend(() => "omega");
  const cache = new GenerationCache();
  const parts = hole(1).parts;
  const sampling = { temperature: 0.4, topP: 1, maxNewTokens: 32 };
  const wrapped = cache.wrap(backend, "file:///ws/A.lean", { spec: "fake" });
  const first = await wrapped.generate(parts, 2, sampling);
  const second = await wrapped.generate(parts, 2, sampling);
  assert.equal(backend.calls.length, 1, "the same prompt and settings: answered from the cache");
  assert.deepEqual(second, first);
  await wrapped.generate({ ...parts, suffix: parts.suffix + "\n" }, 2, sampling);
  await wrapped.generate(parts, 2, { ...sampling, temperature: 0 });
  await cache.wrap(backend, "file:///ws/A.lean", { spec: "other" }).generate(parts, 2, sampling);
  await cache.wrap(backend, "file:///ws/B.lean", { spec: "fake" }).generate(parts, 2, sampling);
  assert.equal(backend.calls.length, 5);
  await wrapped.close();
  assert.equal(backend.closed, false, "the cache never closes the backend it wraps");
});

test("failures are not cached", async () => {
  let call = 0;
  const backend = new FakeBackend(() => (call++ === 0 ? { error: "connection" } : "omega"));
  const wrapped = new GenerationCache().wrap(backend, "d", {});
  const sampling = { temperature: 0, topP: 1, maxNewTokens: 8 };
  assert.equal((await wrapped.generate(hole(1).parts, 1, sampling)).kind, "error");
  assert.equal((await wrapped.generate(hole(1).parts, 1, sampling)).kind, "ok");
  assert.equal(backend.calls.length, 2);
});
