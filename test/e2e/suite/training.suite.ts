/**
 * Mocha suites that run inside VS Code's extension host (code-server here, @vscode/test-electron on hosted
 * CI): activation on a Lean workspace, command registration, a short training run with the simulator that
 * produces samples and decorations, and Stop keeping a checkpoint. The workspace's settings choose the
 * simulator and the trainer (see test/e2e/training.test.ts).
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { suite, suiteSetup, test } from "mocha";
import * as vscode from "vscode";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { AnnotationPersistence } from "../../../extension/annotationPersistence";
import type { FimRlvrApi } from "../../../extension/main";
import { EXPORT_FOR_EDITOR } from "../../../extension/fill/editorExport";
import type { OnnxExporter, OnnxExportRequest } from "../../../extension/fill/onnxExport";
import { HoleStore } from "../../../extension/state/holeStore";

const EXTENSION_ID = "fim-rlvr.fim-rlvr-lean4";

/** Waits for a condition the extension reaches asynchronously (bounded; not a timing measurement). */
async function until(what: string, condition: () => boolean, timeoutMs = 90_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * A STUB of the trainer's ONNX export (the real one is tested in test/extension/onnxExport.test.ts; here it would
 * take minutes): it writes RUN_DIR/exports/step-N-onnx/onnx/model.onnx as an empty file (not a model) for the
 * run's latest checkpoint, reports one progress line, and records what it was asked.
 */
function stubOnnxExporter(asked: OnnxExportRequest[]): OnnxExporter {
  return async (request) => {
    asked.push(request);
    const latest = readFileSync(join(request.runDir, "checkpoints", "latest"), "utf8").trim();
    const step = Number(/^step-(\d+)$/.exec(latest)?.[1]);
    const dir = join(request.runDir, "exports", `step-${step}-onnx`);
    mkdirSync(join(dir, "onnx"), { recursive: true });
    writeFileSync(join(dir, "onnx", "model.onnx"), "");
    request.onProgress("stub export (not a model)");
    return { kind: "ok", dir, step, reused: false, check: null };
  };
}

export function defineSuites(): void {
  let api: FimRlvrApi;

  suite("FIM-RLVR extension", () => {
    suiteSetup(async () => {
      const extension = vscode.extensions.getExtension<FimRlvrApi>(EXTENSION_ID);
      assert.ok(extension, `${EXTENSION_ID} is installed`);
      // The workspace holds a lean-toolchain: activation must happen on its own (workspaceContains).
      await until("activation on the Lean workspace", () => extension.isActive, 30_000);
      api = extension.exports;
    });

    test("registers every command", async () => {
      const commands = await vscode.commands.getCommands(true);
      for (const id of [
        "fimRlvr.startTraining",
        "fimRlvr.stopTraining",
        "fimRlvr.resumeTraining",
        "fimRlvr.showDashboard",
        "fimRlvr.exportDataset",
        "fimRlvr.clearAnnotations",
        "fimRlvr.showAttempts",
      ])
        assert.ok(commands.includes(id), `${id} is registered`);
    });

    test("a short training run with the simulator annotates holes and draws decorations", async function () {
      this.timeout(240_000);
      let ended = false;
      const run = vscode.commands.executeCommand("fimRlvr.startTraining", { algorithm: "grpo", model: null });
      void Promise.resolve(run).finally(() => (ended = true));
      await until("the first train/sample", () => api.store.size > 0 || ended, 180_000);
      assert.ok(
        api.store.size > 0,
        `the run produced samples (dashboard status: ${api.dashboard.current.status})`,
      );
      const file = api.store.files()[0]!;
      await vscode.window.showTextDocument(vscode.Uri.file(file));
      await until("decorations in the editor", () => (api.decorations.drawn.get(file) ?? 0) > 0, 30_000);
      await run;
      const state = api.dashboard.current;
      assert.equal(state.status, "completed");
      assert.ok(state.steps.length > 0, "the dashboard received train/progress");
      assert.ok(state.samples >= api.store.size, "every annotated hole came from a sample");
      for (const name of ["metrics.jsonl", "samples.jsonl", "report.html", join("checkpoints", "latest")])
        assert.ok(existsSync(join(state.runDir, name)), `${name} written in ${state.runDir}`);
      const hole = api.store.holesIn(file)[0]!;
      assert.ok(hole.attempts.length > 0);
      assert.match(readFileSync(file, "utf8"), /theorem|lemma|example/);
    });

    test("annotations are saved to workspace storage and come back in a new window's store", () => {
      assert.ok(api.store.size > 0, "the training test left annotations");
      const storage = vscode.Uri.file(mkdtempSync(join(tmpdir(), "fim-annotations-")));
      // The extension host runs mocha, not node:test (test/tempDirs.ts): the folder is removed here.
      try {
        const saving = new AnnotationPersistence(api.store, storage);
        saving.forgetPending(); // schedules a save
        saving.dispose(); // and flushes it
        assert.ok(existsSync(join(storage.fsPath, "annotations.json")));
        const reloaded = new HoleStore();
        const restoring = new AnnotationPersistence(reloaded, storage);
        assert.equal(reloaded.size, api.store.size, "every hole of an unchanged file comes back");
        const file = reloaded.files()[0]!;
        assert.deepEqual(
          reloaded.holesIn(file).map((h) => [h.taskId, h.range, h.latest]),
          api.store.holesIn(file).map((h) => [h.taskId, h.range, h.latest]),
        );
        restoring.dispose();
      } finally {
        rmSync(storage.fsPath, { recursive: true, force: true });
      }
    });

    test("Stop writes a checkpoint, leaves the run resumable, and offers Export for the editor", async function () {
      this.timeout(240_000);
      // The end-of-run notification is answered here as a user would click it: "Export for the editor".
      const notices: { message: string; actions: string[] }[] = [];
      api.controller.runEndNotice = (message, ...actions) => {
        notices.push({ message, actions });
        return Promise.resolve(actions.includes(EXPORT_FOR_EDITOR) ? EXPORT_FOR_EDITOR : undefined);
      };
      const asked: OnnxExportRequest[] = [];
      api.editorExport.exporter = stubOnnxExporter(asked);
      // Another model chosen before: the export makes the Fill Hole model "lastRun" (its export) again.
      await vscode.workspace
        .getConfiguration("fimRlvr")
        .update("fill.model", "endpoint", vscode.ConfigurationTarget.Workspace);
      await vscode.workspace
        .getConfiguration("fimRlvr")
        .update("trainer.steps", 100_000, vscode.ConfigurationTarget.Global);
      const before = api.dashboard.current.samples;
      const run = vscode.commands.executeCommand("fimRlvr.startTraining", {
        algorithm: "dapo",
        model: null,
        steps: 100_000,
      });
      await until(
        "a sample of the new run",
        () =>
          api.controller.runState.phase === "running" &&
          api.dashboard.current.samples > 0 &&
          api.dashboard.current.samples !== before,
        180_000,
      );
      await vscode.commands.executeCommand("fimRlvr.stopTraining");
      await run;
      const state = api.dashboard.current;
      assert.equal(state.status, "stopped");
      assert.ok(api.store.size > 0);
      assert.equal(api.controller.runState.phase, "idle");
      const latest = readFileSync(join(state.runDir, "checkpoints", "latest"), "utf8").trim();
      assert.ok(existsSync(join(state.runDir, "checkpoints", latest)), `checkpoint ${latest} kept`);
      assert.ok(state.steps.at(-1)! < 100_000, "stopped before the end");
      await until("the export for the editor", () => api.editorExport.chosen?.runDir === state.runDir);
      const notice = notices.at(-1)!;
      assert.ok(notice.actions.includes(EXPORT_FOR_EDITOR), JSON.stringify(notices));
      assert.ok(notice.actions.includes("Resume"), "a stopped run is also offered Resume");
      assert.equal(asked.length, 1);
      assert.equal(asked[0]!.runDir, state.runDir, "the run that ended is exported");
      assert.match(asked[0]!.trainerRoot, /trainer$/);
      const chosen = api.editorExport.chosen!;
      assert.equal(
        chosen.dir,
        join(state.runDir, "exports", `${latest}-onnx`),
        "written into the run folder",
      );
      assert.equal(vscode.workspace.getConfiguration("fimRlvr").get("fill.model"), "lastRun");
    });
  });
}
