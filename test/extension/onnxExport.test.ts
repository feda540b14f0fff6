/**
 * "Export for the editor"'s exporter (extension/fill/onnxExport.ts): the trainer's ONNX export of a run's latest
 * checkpoint into the run folder, an export already there reused, and failures that say what to do (the pip line
 * for the trainer's ONNX extra when a module is missing). The real trainer (trainer/.venv) exports a tiny fixture
 * checkpoint (trainer/tests/export_fixtures.py); it is skipped, with the reason, where that venv lacks onnx.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";
import { toolSkip } from "../toolSkip";
import { trainerOnnxExporter, type OnnxExportRequest } from "../../extension/fill/onnxExport";
import { tempDir } from "../tempDirs";

const TRAINER = join(REPO, "trainer");
const PYTHON = join(TRAINER, ".venv", "bin", "python");
const FIXTURE = join(TRAINER, "tests", "export_fixtures.py");
const missing = !existsSync(PYTHON)
  ? `${PYTHON} is missing (npm run test:setup creates it)`
  : spawnSync(PYTHON, ["-c", "import onnx, onnxscript, peft"]).status !== 0
    ? `${PYTHON} lacks onnx, onnxscript or peft (pip install -e 'trainer[test]')`
    : undefined;
const skipReal = toolSkip("Export for the editor with the real trainer", missing);

/** A run folder with complete checkpoints step-1 and step-2 (no weights: enough for everything before Python). */
function runWithCheckpoints(): string {
  const run = join(tempDir("fim-editor-export-"), "run");
  for (const step of [1, 2]) {
    mkdirSync(join(run, "checkpoints", `step-${step}`), { recursive: true });
    writeFileSync(join(run, "checkpoints", `step-${step}`, "state.json"), "{}");
  }
  return run;
}

function request(runDir: string, python: string | undefined, lines: string[] = []): OnnxExportRequest {
  return {
    runDir,
    python,
    trainerRoot: TRAINER,
    onProgress: (line) => lines.push(line),
    signal: new AbortController().signal,
  };
}

/** A stand-in interpreter: a shell script that writes `stderr` and exits 1, as a Python lacking a module does. */
function fakePython(stderr: string): string {
  const path = join(tempDir("fim-fake-python-"), "python");
  writeFileSync(path, `#!/bin/sh\necho ${JSON.stringify(stderr)} >&2\nexit 1\n`);
  chmodSync(path, 0o755);
  return path;
}

test("an export of the latest checkpoint already in the run folder is used as it is", async () => {
  const run = runWithCheckpoints();
  const dir = join(run, "exports", "step-2-onnx");
  mkdirSync(join(dir, "onnx"), { recursive: true });
  writeFileSync(join(dir, "onnx", "model.onnx"), "");
  const result = await trainerOnnxExporter(request(run, "/nonexistent/python"));
  assert.deepEqual(result, { kind: "ok", dir, step: 2, reused: true, check: null });
});

test("no checkpoint, or no Python: what happened and what to do", async () => {
  const empty = join(tempDir("fim-editor-export-"), "run");
  mkdirSync(empty);
  const none = await trainerOnnxExporter(request(empty, PYTHON));
  assert.equal(none.kind, "error");
  assert.match(none.kind === "error" ? `${none.message} ${none.hint}` : "", /no complete checkpoint.*Train/);
  const gone = await trainerOnnxExporter(request(runWithCheckpoints(), "/nonexistent/python"));
  assert.equal(gone.kind, "error");
  assert.match(gone.kind === "error" ? gone.hint : "", /fimRlvr\.trainer\.python/);
});

test("a Python that lacks a module the export needs: the error names the install command", async () => {
  const python = fakePython("ModuleNotFoundError: No module named 'onnx'");
  const result = await trainerOnnxExporter(request(runWithCheckpoints(), python));
  assert.equal(result.kind, "error");
  if (result.kind !== "error") return;
  assert.match(result.message, /No module named 'onnx'/);
  assert.ok(
    result.hint.includes(`${python} -m pip install -e '${TRAINER}[onnx]'`),
    `the hint names the install line: ${result.hint}`,
  );
});

test(
  "the real trainer exports the latest checkpoint into RUN_DIR/exports/step-N-onnx, with progress",
  { skip: skipReal, timeout: 600_000 },
  async () => {
    const run = join(tempDir("fim-editor-export-real-"), "run");
    const made = spawnSync(PYTHON, [FIXTURE, run, "--kind", "full", "--arch", "qwen2"], {
      encoding: "utf8",
      timeout: 300_000,
    });
    assert.equal(made.status, 0, made.stderr);
    const lines: string[] = [];
    const result = await trainerOnnxExporter(request(run, PYTHON, lines));
    assert.equal(result.kind, "ok", JSON.stringify(result));
    if (result.kind !== "ok") return;
    assert.equal(result.dir, join(run, "exports", `step-${result.step}-onnx`));
    assert.equal(result.reused, false);
    assert.ok(existsSync(join(result.dir, "onnx", "model.onnx")));
    assert.ok(existsSync(join(result.dir, "tokenizer.json")));
    assert.ok(
      lines.some((l) => /tracing the model for ONNX/.test(l)),
      lines.join("\n"),
    );
    const again = await trainerOnnxExporter(request(run, PYTHON));
    assert.deepEqual(again, { kind: "ok", dir: result.dir, step: result.step, reused: true, check: null });
  },
);
