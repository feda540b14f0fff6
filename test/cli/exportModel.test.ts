/**
 * `fim-rlvr export-model` (issue #9's contract) with the real exporter (trainer/.venv): checkpoints are built by a
 * Python fixture (trainer/tests/export_fixtures.py, no training), the ONNX export is loaded in Node by
 * @huggingface/transformers from the local folder only, and its logits and greedy continuation are compared with
 * the checkpoint policy's, computed in PyTorch by the fixture. Skipped, with the reason, where trainer/.venv is
 * missing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";
import { loadTransformersJs, type Tensor } from "../tools/transformersJs";
import { toolSkip } from "../toolSkip";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
const FIXTURE = join(REPO, "trainer", "tests", "export_fixtures.py");
const checkPython = () =>
  spawnSync(PYTHON, ["-c", "import onnx, onnxscript, peft"], { encoding: "utf8" }).status === 0;
const missing = !existsSync(PYTHON)
  ? `${PYTHON} is missing (npm run test:setup creates it)`
  : !checkPython()
    ? `${PYTHON} lacks onnx, onnxscript or peft (pip install -e 'trainer[test]')`
    : undefined;
toolSkip("export-model tests", missing);
const transformersJs = loadTransformersJs();
const missingJs = missing ?? (transformersJs.kind === "missing" ? transformersJs.why : undefined);
if (!missing) toolSkip("export-model ONNX loading test", missingJs);

interface Reference {
  prompt: string;
  input_ids: number[];
  /** The checkpoint policy's logits at every prompt position [T][V]. */
  logits: number[][];
  greedy: number[];
}

function cli(args: string[]) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 300_000 });
}

/** A run folder with one checkpoint (step 3) of the given kind and architecture, and the PyTorch reference. */
function fixtureRun(kind: "full" | "lora", arch: "llama" | "qwen2"): { run: string; reference: Reference } {
  const run = join(tempDir("fim-export-model-"), "run");
  const made = spawnSync(PYTHON, [FIXTURE, run, "--kind", kind, "--arch", arch], {
    encoding: "utf8",
    timeout: 300_000,
  });
  assert.equal(made.status, 0, made.stderr);
  const reference = JSON.parse(readFileSync(join(run, "reference.json"), "utf8")) as Reference;
  return { run, reference };
}

test(
  "export-model --format onnx: transformers.js loads the folder offline and agrees with PyTorch",
  { skip: missingJs },
  async () => {
    if (transformersJs.kind !== "ok") throw new Error(transformersJs.why);
    const { AutoModelForCausalLM, AutoTokenizer, env } = transformersJs.module;
    // Qwen2 (grouped-query attention) with a LoRA adapter: the shape of the models people fine-tune.
    const { run, reference } = fixtureRun("lora", "qwen2");
    const r = cli(["export-model", run, "--format", "onnx", "--python", PYTHON]);
    assert.equal(r.status, 0, r.stderr);
    const out = join(run, "exports", "step-3-onnx");
    assert.match(r.stdout, new RegExp(`^${out}\\n  format: onnx, from step-3 \\(LoRA merged\\)`));
    assert.match(r.stdout, /size: [\d.]+ MB in 5 files/);
    assert.match(r.stdout, /checked: onnxruntime [\d.]+ matches PyTorch/);
    assert.match(r.stderr, /export-model: tracing the model for ONNX/);
    assert.deepEqual(readdirSync(out).sort(), [
      "config.json",
      "generation_config.json",
      "onnx",
      "tokenizer.json",
      "tokenizer_config.json",
    ]);
    assert.deepEqual(readdirSync(join(out, "onnx")), ["model.onnx"]);

    env.allowRemoteModels = false;
    env.allowLocalModels = true;
    env.localModelPath = out;
    const tokenizer = await AutoTokenizer.from_pretrained(out, { local_files_only: true });
    const model = await AutoModelForCausalLM.from_pretrained(out, { local_files_only: true });
    try {
      const inputs = tokenizer(reference.prompt) as { input_ids: Tensor; attention_mask: Tensor };
      assert.deepEqual(Array.from(inputs.input_ids.data as BigInt64Array, Number), reference.input_ids);
      const { logits } = (await model(inputs)) as { logits: Tensor };
      const [, positions, vocab] = logits.dims as [number, number, number];
      assert.equal(positions, reference.input_ids.length);
      const data = logits.data as Float32Array;
      let worst = 0;
      for (let t = 0; t < positions; t++)
        for (let v = 0; v < vocab; v++)
          worst = Math.max(worst, Math.abs(data[t * vocab + v]! - reference.logits[t]![v]!));
      assert.ok(worst < 1e-4, `max |logit difference| ${worst}`);
      // Generation goes through the exported KV cache: after the prompt, each step feeds one token.
      const n = reference.greedy.length;
      const generated = (await model.generate({
        ...inputs,
        max_new_tokens: n,
        min_new_tokens: n,
        do_sample: false,
      })) as Tensor;
      const ids = Array.from(generated.data as BigInt64Array, Number).slice(positions);
      assert.deepEqual(ids, reference.greedy);
      assert.ok(
        new Set(ids).size > 1,
        "the fixture's greedy continuation varies, so a broken cache would show",
      );
    } finally {
      await model.dispose();
    }

    const again = cli(["export-model", run, "--format", "onnx", "--python", PYTHON]);
    assert.equal(again.status, 1);
    assert.match(again.stderr, /step-3-onnx already exists\nPass --force to replace it/);

    const adapter = cli(["export-model", run, "--format", "adapter", "--python", PYTHON]);
    assert.equal(adapter.status, 0, adapter.stderr);
    assert.match(adapter.stdout, /format: adapter, from step-3 of /);
    assert.match(adapter.stdout, /adapter_config\.json, adapter_model\.safetensors/);
    assert.match(adapter.stdout, /base model \(not copied, the adapter needs it\): .*step-3\/base_model\n/);
  },
);

test(
  "export-model of a full fine-tuning run: merged works, adapter says to use merged",
  { skip: missing },
  () => {
    const { run } = fixtureRun("full", "llama");
    const adapter = cli(["export-model", run, "--format", "adapter", "--python", PYTHON]);
    assert.equal(adapter.status, 1);
    assert.match(adapter.stderr, /from a full fine-tuning run: it has no LoRA adapter to export/);
    assert.match(adapter.stderr, /--format merged/);
    assert.equal(adapter.stdout, "");
    const out = join(run, "elsewhere");
    const merged = cli([
      "export-model",
      run,
      "--format",
      "merged",
      "--checkpoint",
      "3",
      "--out",
      out,
      "--json",
      "--python",
      PYTHON,
    ]);
    assert.equal(merged.status, 0, merged.stderr);
    const answer = JSON.parse(merged.stdout) as {
      kind: string;
      path: string;
      files: string[];
      checkpoint_kind: string;
    };
    assert.equal(answer.kind, "ok");
    assert.equal(answer.path, out);
    assert.equal(answer.checkpoint_kind, "full");
    assert.ok(answer.files.includes("model.safetensors") && answer.files.includes("tokenizer.json"));
    const wrongStep = cli([
      "export-model",
      run,
      "--format",
      "merged",
      "--checkpoint",
      "7",
      "--python",
      PYTHON,
    ]);
    assert.equal(wrongStep.status, 1);
    assert.match(wrongStep.stderr, /no complete checkpoint step-7 \(available steps: 3\)/);
  },
);

test("export-model usage and run-folder errors need no Python", () => {
  const empty = tempDir("fim-export-model-empty-");
  const noRun = cli(["export-model", empty, "--format", "merged", "--python", "/nonexistent/python"]);
  assert.equal(noRun.status, 2, "a folder that is no run folder is bad usage, as filter's non-dataset is");
  assert.match(noRun.stderr, /is not a training run folder \(it has no checkpoints\/ folder\)/);
  const noFolder = cli(["export-model", join(empty, "nope"), "--format", "onnx"]);
  assert.equal(noFolder.status, 2, "a nonexistent input is bad usage, as in export, import and verify");
  assert.match(
    noFolder.stderr,
    /nope: no such file or folder; give the run folder that `fim-rlvr train` printed/,
  );
  const format = cli(["export-model", empty, "--format", "gguf"]);
  assert.equal(format.status, 2);
  assert.match(format.stderr, /unknown --format "gguf" \(one of adapter, merged, onnx\)/);
  assert.equal(cli(["export-model", empty]).status, 2);
  assert.match(cli(["export-model", "--format", "onnx"]).stderr, /RUN_DIR is required/);
  assert.match(
    cli(["export-model", empty, "--format", "onnx", "--checkpoint", "last"]).stderr,
    /--checkpoint must be latest/,
  );
});
