/**
 * Local models on a tiny checkpoint the trainer writes (trainer/tests/export_fixtures.py, no training):
 * - `onnx:DIR`, the folder `fim-rlvr export-model --format onnx` exports (KV cache included), run by
 *   onnxruntime-node in a child process: the same greedy tokens as PyTorch (the fixture's reference), prompts
 *   built with the folder's tokenizer, seeded sampling that repeats, cancellation, and a killed model process
 *   that fails one call and is started again by the next;
 * - `hf:PATH`, the same checkpoint through the trainer's Python (fim_rlvr.model.generate_stdio): the same greedy tokens.
 * Skipped, with the reason, where trainer/.venv or the built CLI is missing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { getEventListeners } from "node:events";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";
import { toolSkip } from "../toolSkip";
import type { GenerateResult, PromptParts, SamplingSettings } from "../../lean-bridge/models/backend";
import { OnnxBackend } from "../../lean-bridge/models/onnxBackend";
import { openBackend } from "../../lean-bridge/models/open";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
const FIXTURE = join(REPO, "trainer", "tests", "export_fixtures.py");

function why(): string | undefined {
  if (!existsSync(PYTHON)) return `${PYTHON} is missing (npm run test:setup creates it)`;
  if (spawnSync(PYTHON, ["-c", "import onnx, onnxscript"]).status !== 0)
    return `${PYTHON} lacks onnx or onnxscript`;
  if (!existsSync(CLI)) return `${CLI} is missing (npm run build)`;
  return undefined;
}
const missing = why();
toolSkip("local model backend tests", missing);

interface Reference {
  prompt: string;
  input_ids: number[];
  greedy: number[];
}

/** One fixture run for every test here: the trainer's checkpoint, its ONNX export and PyTorch's reference. */
let built: { run: string; onnx: string; reference: Reference } | undefined;
function fixture(): { run: string; onnx: string; reference: Reference } {
  if (built) return built;
  const run = join(tempDir("fim-local-models-"), "run");
  const made = spawnSync(PYTHON, [FIXTURE, run, "--kind", "full", "--arch", "llama"], {
    encoding: "utf8",
    timeout: 300_000,
  });
  assert.equal(made.status, 0, made.stderr);
  const exported = spawnSync(
    process.execPath,
    [CLI, "export-model", run, "--format", "onnx", "--python", PYTHON],
    {
      encoding: "utf8",
      timeout: 300_000,
    },
  );
  assert.equal(exported.status, 0, exported.stderr);
  const reference = JSON.parse(readFileSync(join(run, "reference.json"), "utf8")) as Reference;
  built = { run, onnx: join(run, "exports", "step-3-onnx"), reference };
  return built;
}

const PARTS: PromptParts = {
  kind: "tactic",
  prefix: "theorem add_zero (n : Nat) : n + 0 = n := by\n  ",
  suffix: "",
  indent: 2,
};
const PROMPT = { style: "auto" as const, showGoal: false, maxPromptTokens: 256 };
const GREEDY: SamplingSettings = { temperature: 0, topP: 1, maxNewTokens: 6 };

function ok(result: GenerateResult) {
  assert.equal(result.kind, "ok", result.kind === "error" ? `${result.cause}: ${result.message}` : "");
  return result as Extract<GenerateResult, { kind: "ok" }>;
}

test(
  "onnx: the exported model's greedy tokens equal PyTorch's, through the KV cache, for every sample",
  { skip: missing },
  async () => {
    const { onnx, reference } = fixture();
    const opened = await OnnxBackend.open(onnx, { prompt: PROMPT, threads: 1 });
    assert.equal(opened.kind, "ok", opened.kind === "error" ? opened.message : "");
    if (opened.kind !== "ok") return;
    const backend = opened.backend;
    try {
      assert.equal(backend.identity.promptStyle, "qwen");
      assert.match(backend.identity.digest ?? "", /^[0-9a-f]{16}$/);
      const samples = await backend.generateIds(reference.input_ids, 2, {
        ...GREEDY,
        maxNewTokens: reference.greedy.length,
      });
      assert.ok(Array.isArray(samples), JSON.stringify(samples));
      for (const sample of samples) assert.deepEqual(sample.ids, reference.greedy);
      assert.ok(new Set(reference.greedy).size > 1, "the reference varies, so a broken cache would show");

      // Through the interface: the trainer's FIM prompt, tokens counted, candidates cleaned.
      const result = ok(
        await backend.generate(PARTS, 3, { temperature: 0.8, topP: 0.95, maxNewTokens: 12, seed: 5 }),
      );
      assert.equal(result.prompt, `<|fim_prefix|>${PARTS.prefix}<|fim_suffix|><|fim_middle|>`);
      assert.equal(result.candidates.length, 3);
      for (const c of result.candidates) {
        assert.ok(c.promptTokens! > 5 && c.completionTokens! >= 1 && c.completionTokens! <= 12);
        assert.ok(!c.text.includes("<|endoftext|>") && !c.text.includes("<|fim_pad|>"));
      }
      const again = ok(
        await backend.generate(PARTS, 3, { temperature: 0.8, topP: 0.95, maxNewTokens: 12, seed: 5 }),
      );
      assert.deepEqual(
        again.candidates.map((c) => c.raw),
        result.candidates.map((c) => c.raw),
        "the same seed repeats the samples",
      );

      // One run's signal is shared by every call: each call takes its listener off again (issue 25 item 10:
      // every eval printed MaxListenersExceededWarning after its eleventh call).
      const run = new AbortController();
      for (let call = 0; call < 12; call++)
        ok(await backend.generate(PARTS, 1, { ...GREEDY, maxNewTokens: 2 }, run.signal));
      assert.equal(getEventListeners(run.signal, "abort").length, 0);
    } finally {
      await backend.close();
    }
  },
);

test(
  "onnx: cancellation, a killed model process, and a folder that is not an export",
  { skip: missing },
  async () => {
    const { onnx } = fixture();
    const opened = await OnnxBackend.open(onnx, { prompt: PROMPT, threads: 1 });
    assert.equal(opened.kind, "ok");
    if (opened.kind !== "ok") return;
    const backend = opened.backend;
    try {
      const controller = new AbortController();
      const pending = backend.generate(PARTS, 2, { ...GREEDY, maxNewTokens: 400 }, controller.signal);
      controller.abort();
      const aborted = await pending;
      assert.equal(aborted.kind === "error" && aborted.cause, "aborted");

      const pid = backend.processId;
      assert.ok(pid !== undefined && pid !== process.pid, "the model runs in its own process");
      const inFlight = backend.generate(PARTS, 2, { ...GREEDY, maxNewTokens: 400 });
      process.kill(pid, "SIGKILL");
      const crashed = await inFlight;
      assert.equal(crashed.kind === "error" && crashed.cause, "crashed", JSON.stringify(crashed));
      ok(await backend.generate(PARTS, 1, GREEDY));
      assert.notEqual(backend.processId, pid, "a new model process serves the next call");
    } finally {
      await backend.close();
    }
    const notExport = await openBackend(
      { kind: "onnx", dir: join(fixture().run, "checkpoints") },
      { prompt: PROMPT },
    );
    assert.equal(notExport.kind, "error");
    assert.equal(notExport.kind === "error" && notExport.cause, "model-files");
  },
);

test(
  "hf: the checkpoint through the trainer's Python gives PyTorch's greedy tokens and the trainer's prompt",
  { skip: missing },
  async () => {
    const { run, onnx } = fixture();
    const opened = await openBackend(
      { kind: "hf", path: join(run, "checkpoints", "step-3") },
      { prompt: PROMPT, python: PYTHON, threads: 1 },
    );
    assert.equal(opened.kind, "ok", opened.kind === "error" ? `${opened.message} ${opened.hint}` : "");
    if (opened.kind !== "ok") return;
    const hf = opened.backend;
    const local = await OnnxBackend.open(onnx, { prompt: PROMPT, threads: 1 });
    if (local.kind !== "ok") throw new Error(local.message);
    try {
      assert.equal(hf.identity.promptStyle, "qwen");
      const sampling = { ...GREEDY, maxNewTokens: 8 };
      const fromPython = ok(await hf.generate(PARTS, 2, sampling));
      const fromOnnx = ok(await local.backend.generate(PARTS, 1, sampling));
      assert.equal(fromPython.prompt, fromOnnx.prompt);
      // The same weights, greedy: the same completion from PyTorch and from the ONNX export.
      for (const c of fromPython.candidates) {
        assert.equal(c.raw, fromOnnx.candidates[0]!.raw);
        assert.equal(c.promptTokens, fromOnnx.candidates[0]!.promptTokens);
      }
      const missingModel = await openBackend(
        { kind: "hf", path: join(run, "nowhere") },
        { prompt: PROMPT, python: PYTHON },
      );
      assert.equal(missingModel.kind === "error" && missingModel.cause, "model-files");
    } finally {
      await hf.close();
      await local.backend.close();
    }
  },
);
