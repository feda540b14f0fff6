/**
 * Pure parts of the model backends: the scripted FakeBackend that eval and the editor are tested with (real
 * cleaning, failures, cancellation without timing), the local sampler (greedy is argmax, top-p keeps the nucleus,
 * a seed repeats), and Python's string rules the prompt ports rely on.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { FakeBackend } from "../../lean-bridge/models/fakeBackend";
import { argmax, sampleToken, seededRandom } from "../../lean-bridge/models/sampling";
import { pySplitlines, pyStrip } from "../../lean-bridge/text/pyText";
import { fimStyle } from "../../lean-bridge/models/style";
import type { PromptParts } from "../../lean-bridge/models/backend";

const PARTS: PromptParts = { kind: "tactic", prefix: "theorem t : True := by\n  ", suffix: "", indent: 2 };
const SAMPLING = { temperature: 0.5, topP: 1, maxNewTokens: 16 };

test("FakeBackend: scripted answers are cleaned by the style, failures keep earlier candidates", async () => {
  const backend = new FakeBackend((_parts, index, call) =>
    call === 1 && index === 1 ? { error: "timeout" } : `trivial${index}\n  done<|endoftext|>x`,
  );
  const first = await backend.generate(PARTS, 2, SAMPLING);
  assert.equal(first.kind, "ok");
  assert.deepEqual(first.kind === "ok" ? first.candidates.map((c) => c.text) : [], [
    "trivial0\n  done",
    "trivial1\n  done",
  ]);
  const second = await backend.generate(PARTS, 2, SAMPLING);
  assert.equal(second.kind, "error");
  assert.equal(second.kind === "error" && second.cause, "timeout");
  assert.equal(second.kind === "error" && second.partial?.length, 1);
  assert.equal(backend.identity.spec, "fake:scripted");
  assert.equal(backend.identity.promptStyle, "qwen");
  assert.deepEqual(
    backend.calls.map((c) => c.n),
    [2, 2],
  );
});

test("FakeBackend: a gated call answers aborted as soon as its signal fires", async () => {
  let open!: () => void;
  const gate = new Promise<void>((resolve) => (open = resolve));
  const backend = new FakeBackend(() => "x", { gate: () => gate, style: fimStyle("starcoder") });
  const controller = new AbortController();
  const pending = backend.generate(PARTS, 1, SAMPLING, controller.signal);
  controller.abort();
  const result = await pending;
  assert.equal(result.kind === "error" && result.cause, "aborted");
  open();
  const after = await backend.generate(PARTS, 1, SAMPLING);
  assert.equal(after.kind, "ok");
  assert.equal(after.kind === "ok" && after.prompt, `<fim_prefix>${PARTS.prefix}<fim_suffix><fim_middle>`);
});

test("sampling: greedy is the first maximum, top-p keeps only the nucleus, seeds repeat", () => {
  const logits = Float32Array.from([0, 5, 5, 1, -2]);
  assert.equal(argmax(logits), 1);
  assert.equal(sampleToken(logits, 0, 5, 0, 1, seededRandom(1)), 1);
  // Offsets select a row of a larger buffer.
  const rows = Float32Array.from([9, 0, 0, 0, 0, 3]);
  assert.equal(sampleToken(rows, 3, 3, 0, 1, seededRandom(1)), 2);
  // With topP small, only the single most likely token can be drawn.
  const peaked = Float32Array.from([1, 4, 2, 0]);
  const draws = new Set(
    Array.from({ length: 200 }, (_, i) => sampleToken(peaked, 0, 4, 1, 0.5, seededRandom(i))),
  );
  assert.deepEqual([...draws], [1]);
  // At topP 1 every token can come up, and the same seed gives the same sequence.
  const flat = Float32Array.from([0, 0, 0, 0]);
  const random = seededRandom(3);
  const seen = new Set(Array.from({ length: 400 }, () => sampleToken(flat, 0, 4, 1, 1, random)));
  assert.equal(seen.size, 4);
  const a = seededRandom(42);
  const b = seededRandom(42);
  assert.deepEqual(
    Array.from({ length: 5 }, () => a()),
    Array.from({ length: 5 }, () => b()),
  );
});

test("Python string rules: splitlines and strip as Python has them", () => {
  assert.deepEqual(pySplitlines("a\r\nb\rc\u2028d\x0ce\n"), ["a", "b", "c", "d", "e"]);
  assert.deepEqual(pySplitlines("a\nb", true), ["a\n", "b"]);
  assert.deepEqual(pySplitlines(""), []);
  assert.equal(pyStrip("\x1c\u00a0 x \u3000\n"), "x");
});
