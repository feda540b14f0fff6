/**
 * Fill Hole with Model inside VS Code's extension host: an OpenAI-compatible stub on 127.0.0.1 (the endpoint
 * backend, exactly as users configure it), the simulator as verifier, a `sorry` in the example workspace. The
 * proved candidate is offered first in the quick pick and inserted, and the filled hole gets training's annotation
 * (gutter icon, hover naming the model and the simulator); the same hole again is answered from the cache without
 * asking the model; the code action on `sorry` is offered.
 */
import assert from "node:assert/strict";
import { suite, suiteSetup, suiteTeardown, test } from "mocha";
import * as vscode from "vscode";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { EvalWorkspaceOutcome } from "../../../extension/fill/evalWorkspace";
import type { FillOutcome } from "../../../extension/fill/fillCommand";
import { hoverFor } from "../../../extension/decorations";
import type { FimRlvrApi } from "../../../extension/main";
import { startStub, type Stub } from "../../models/openaiStub";

const EXTENSION_ID = "fim-rlvr.fim-rlvr-lean4";
const FILE = "FimExamples/Arith.lean";
const THEOREM = "theorem add_le_add_1 ";

/** Waits for a condition the extension reaches asynchronously (bounded; not a timing measurement). */
async function until(what: string, condition: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs Fill Hole and presses Enter in its quick pick once it shows (bounded; the pick's first item is the best). */
async function fillAndAccept(accept: boolean): Promise<FillOutcome> {
  let settled = false;
  const running = Promise.resolve(vscode.commands.executeCommand<FillOutcome>("fimRlvr.fillHole")).finally(
    () => (settled = true),
  );
  for (let k = 0; k < 600 && !settled; k++) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    await vscode.commands.executeCommand(
      accept ? "workbench.action.acceptSelectedQuickOpenItem" : "workbench.action.closeQuickOpen",
    );
  }
  return running;
}

export function defineFillSuites(): void {
  let stub: Stub;
  let api: FimRlvrApi;
  let editor: vscode.TextEditor;
  let line: number;

  suite("Fill Hole with Model", () => {
    suiteSetup(async function () {
      this.timeout(120_000);
      const extension = vscode.extensions.getExtension<FimRlvrApi>(EXTENSION_ID);
      assert.ok(extension);
      api = await extension.activate();
      // Choice 0 is the example's own proof (the simulator accepts it), choice 1 a tactic that does not exist.
      stub = await startStub({
        model: "tiny-coder",
        answer: (_prompt, index) => (index === 0 ? "omega" : "exact fim_rlvr_wrong"),
      });
      const c = vscode.workspace.getConfiguration("fimRlvr");
      const target = vscode.ConfigurationTarget.Workspace;
      await c.update("verifier.mode", "simulator", target);
      await c.update("fill.model", "endpoint", target);
      await c.update("fill.endpoint.baseUrl", stub.baseUrl, target);
      await c.update("fill.endpoint.model", "tiny-coder", target);
      await c.update("fill.promptStyle", "fim", target);
      await c.update("fill.fimFamily", "qwen", target);
      await c.update("fill.samples", 2, target);
      const folder = vscode.workspace.workspaceFolders![0]!.uri;
      editor = await vscode.window.showTextDocument(vscode.Uri.joinPath(folder, FILE), { preview: false });
      line =
        editor.document
          .getText()
          .split("\n")
          .findIndex((l) => l.startsWith(THEOREM)) + 1;
      assert.equal(editor.document.lineAt(line).text, "  omega");
      // The simulator takes the workspace's own proofs from disk: the edits below must stay unsaved.
      assert.equal(vscode.workspace.getConfiguration("files").get("autoSave"), "off");
    });

    suiteTeardown(async () => {
      await stub?.close();
    });

    const putSorry = async () => {
      editor = await vscode.window.showTextDocument(editor.document, { preview: false });
      await editor.edit((e) => e.replace(editor.document.lineAt(line).range, "  sorry"));
      editor.selection = new vscode.Selection(line, 4, line, 4);
    };

    test("inserts the candidate Lean (here: the simulator) proved, offered first", async function () {
      this.timeout(180_000);
      await putSorry();
      const outcome = await fillAndAccept(true);
      assert.equal(outcome.kind, "inserted", JSON.stringify(outcome));
      assert.equal(
        outcome.kind === "inserted" && outcome.candidate.outcome,
        "proved",
        JSON.stringify(outcome).slice(0, 1500),
      );
      assert.equal(editor.document.lineAt(line).text, "  omega");
      assert.ok(stub.requests.length >= 1, "the endpoint was asked");
      const prompt = String(stub.requests[0]!.body.prompt);
      assert.ok(
        prompt.startsWith("<|fim_prefix|>") && prompt.includes(THEOREM),
        "the trainer's FIM prompt of the hole",
      );
    });

    test("the filled hole gets training's gutter icon and a hover naming the model and the simulator", async () => {
      const file = editor.document.uri.fsPath;
      const [hole] = api.store.holesIn(file).filter((h) => h.range.start.line === line);
      assert.ok(
        hole,
        `the inserted candidate is annotated (holes: ${JSON.stringify(api.store.holesIn(file))})`,
      );
      assert.deepEqual(hole.range, { start: { line, character: 2 }, end: { line, character: 7 } });
      assert.equal(hole.best, "proved");
      assert.equal(hole.latest.candidate, "omega");
      assert.equal(hole.latest.model, `openai:${stub.baseUrl}#tiny-coder`);
      assert.match(hole.latest.verifier ?? "", /^simulator .*\(not Lean\)$/);
      // Drawn by training's decorations (the same renderer): its count of drawn holes covers this one.
      await until("the filled hole drawn", () => (api.decorations.drawn.get(file) ?? 0) >= 1);
      const hover = hoverFor(hole).value;
      assert.match(
        hover,
        /proof hole in \S*add_le_add_1 · best so far: \*\*proved\*\* · verifier: simulator/,
      );
      assert.ok(hover.includes(`Fill Hole · model openai:${stub.baseUrl}#tiny-coder`), hover);
      assert.doesNotMatch(hover, /Lean's messages/);
    });

    test("the same hole again comes from the cache; Escape inserts nothing", async function () {
      this.timeout(120_000);
      await putSorry();
      const asked = stub.requests.length;
      const outcome = await fillAndAccept(false);
      assert.equal(outcome.kind, "dismissed", JSON.stringify(outcome));
      assert.equal(stub.requests.length, asked, "no new request for the same hole, text and settings");
      assert.equal(editor.document.lineAt(line).text, "  sorry");
    });

    test("a code action on sorry offers the fill", async () => {
      const range = new vscode.Range(line, 3, line, 3);
      const actions = await vscode.commands.executeCommand<vscode.CodeAction[]>(
        "vscode.executeCodeActionProvider",
        editor.document.uri,
        range,
      );
      assert.ok(
        actions.some((a) => a.command?.command === "fimRlvr.fillHole"),
        "Fill this sorry is offered",
      );
    });

    test("Evaluate Model on Workspace runs fim-rlvr eval with the same model and opens its report", async function () {
      this.timeout(300_000);
      const outcome = await vscode.commands.executeCommand<EvalWorkspaceOutcome>("fimRlvr.evaluateModel");
      assert.equal(outcome.kind, "done", JSON.stringify(outcome).slice(0, 800));
      if (outcome.kind !== "done") return;
      const summary = JSON.parse(readFileSync(join(outcome.dir, "summary.json"), "utf8")) as {
        run: { model: { spec: string }; verifier: { kind: string } };
        overall: { passAtK: Record<string, { value: number | null }>; outcomes: { proved: number } };
      };
      assert.equal(summary.run.model.spec, `openai:${stub.baseUrl}#tiny-coder`);
      assert.equal(summary.run.verifier.kind, "simulator");
      assert.ok(summary.overall.outcomes.proved > 0, "the stub's omega proves the omega holes");
      assert.ok(existsSync(join(outcome.dir, "report.html")));
      assert.equal(outcome.panel.title.startsWith("Evaluation"), true);
      outcome.panel.dispose();
    });

    test("outside a tactic proof it says where to put the cursor and asks nothing", async () => {
      editor = await vscode.window.showTextDocument(editor.document, { preview: false });
      editor.selection = new vscode.Selection(0, 0, 0, 0);
      const asked = stub.requests.length;
      const outcome = await fillAndAccept(false);
      assert.equal(outcome.kind, "refused", JSON.stringify(outcome).slice(0, 300));
      assert.equal(stub.requests.length, asked);
    });
  });
}
