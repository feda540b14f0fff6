/**
 * "FIM-RLVR: Fill Hole with Model": the hole at the cursor (a `sorry`, a selection, or the proof from the cursor's
 * line), n candidates from the configured model, each verified through the pool in the user's own project, a quick
 * pick with a diff preview, and the chosen candidate inserted, annotated as training annotates holes (same gutter
 * icon and hover). Cancellable; results are cached per checked text, hole and model settings, and the model's
 * answers per prompt (an edit in an earlier declaration re-checks, never re-asks). Untrusted workspaces cannot run
 * it (Lean runs the workspace's code).
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { relative } from "node:path";
import * as vscode from "vscode";
import { holeAt, type EditorHole } from "../../lean-bridge/fill/editorHole";
import { FillCache, fillKey } from "../../lean-bridge/fill/fillCache";
import { fillHole, type FilledCandidate, type FillResult } from "../../lean-bridge/fill/fillHole";
import { openModel } from "../../lean-bridge/eval/openModel";
import type { ModelBackend } from "../../lean-bridge/models/backend";
import { asRange } from "../converters";
import { log } from "../log";
import type { HoleStore } from "../state/holeStore";
import { innermostProject } from "../state/leanProject";
import { fillAttempt, filledHole } from "./fillAnnotation";
import { FillPreviews, pickCandidate } from "./fillPick";
import { GenerationCache } from "./generationCache";
import { FillVerifiers } from "./fillVerifier";
import { fillModel, type FillModel } from "./modelSettings";

/** What the command ended with (returned to callers such as tests; the user sees messages). */
export type FillOutcome =
  | { kind: "inserted"; candidate: FilledCandidate }
  | { kind: "dismissed" }
  | { kind: "cancelled" }
  | { kind: "refused"; message: string };

const FS = {
  exists: existsSync,
  subfolders: (dir: string) => {
    try {
      return readdirSync(dir).filter((n) => statSync(`${dir}/${n}`).isDirectory());
    } catch {
      return [];
    }
  },
};

export class FillHoleCommand implements vscode.Disposable {
  private readonly cache = new FillCache();
  private readonly generations = new GenerationCache();
  private readonly verifiers = new FillVerifiers();
  private readonly previews = new FillPreviews();
  private backend: { key: string; backend: ModelBackend } | undefined;

  /** `store`: training's hole annotations, where an inserted candidate is recorded (same icons and hovers). */
  constructor(
    private readonly secrets: vscode.SecretStorage,
    private readonly store: HoleStore,
    /** The workspace state ("Export for the editor" records its export there). */
    private readonly state: vscode.Memento,
  ) {}

  /** `target`: the hole a code action names; anything else (a palette or menu call) uses the editor's selection. */
  async run(argument?: unknown): Promise<FillOutcome> {
    const target = isTarget(argument) ? argument : undefined;
    if (!vscode.workspace.isTrusted)
      return this.refuse(
        "FIM-RLVR cannot fill holes in a workspace you have not trusted: candidates are verified by running Lean on the workspace's code. Trust the workspace to continue.",
      );
    const editor = target
      ? await vscode.window.showTextDocument(target.uri, { preserveFocus: false })
      : vscode.window.activeTextEditor;
    if (!editor || !editor.document.uri.fsPath.endsWith(".lean"))
      return this.refuse(
        "Open a Lean file and put the cursor on a `sorry` (or select tactics) to fill a hole.",
      );
    const document = editor.document;
    const selection = target?.range ?? editor.selection;
    const text = document.getText();
    const found = holeAt(text, { start: selection.start, end: selection.end });
    if (found.kind === "none") return this.refuse(found.message);
    const hole = found.hole;
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const project = innermostProject(document.uri.fsPath, folders, FS);
    if (!project)
      return this.refuse(
        `${document.uri.fsPath} is not inside a Lean project of this workspace (no lean-toolchain above it).`,
      );
    const model = await fillModel(this.secrets, project, this.state);
    if (model.kind === "error") return this.refuse(model.message, model.action === "settings");
    const key = fillKey({
      document: document.uri.toString(),
      text,
      start: hole.start,
      end: hole.end,
      declarationEnd: hole.declarationEnd,
      model: model.model.cacheKey,
    });
    let result: FillResult | undefined = this.cache.get(key);
    const verifierLabel = { value: "" };
    if (result) log.info(`Fill Hole: '${hole.declaration}' answered from the cache.`);
    else {
      result = await this.generateAndVerify(document, project, hole, model.model, verifierLabel);
      this.cache.remember(key, result);
    }
    if (result.kind === "cancelled") return { kind: "cancelled" };
    if (result.kind === "error")
      return this.refuse(`The model failed: ${result.message} ${result.hint}`, true);
    if (result.candidates.length === 0)
      return this.refuse(
        `The model wrote nothing usable for '${hole.declaration}' in ${result.samples} sample(s). Try again, or raise fimRlvr.fill.samples.`,
      );
    const label = verifierLabel.value || result.candidates[0]!.verdict.verifier.label;
    const chosen = await pickCandidate(document, hole, result.candidates, label, this.previews);
    if (!chosen) return { kind: "dismissed" };
    return this.insert(document, hole, chosen, model.model.specText);
  }

  private async generateAndVerify(
    document: vscode.TextDocument,
    project: string,
    hole: EditorHole,
    model: FillModel,
    verifierLabel: { value: string },
  ): Promise<FillResult> {
    return vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Filling '${hole.declaration}'`,
        cancellable: true,
      },
      async (progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        progress.report({ message: "starting the verifier…" });
        const pool = await this.verifiers.pool(project);
        if (pool.kind === "error")
          return { kind: "error", cause: "crashed", message: pool.message, hint: "" };
        verifierLabel.value = pool.pool.identity.label;
        progress.report({ message: `asking ${model.specText} for ${model.n} candidate(s)…` });
        const backend = await this.openBackend(model, controller.signal);
        if (backend.kind === "error") return backend;
        const file = relative(project, document.uri.fsPath);
        const text = document.getText();
        const result = await fillHole({
          backend: this.generations.wrap(backend.backend, document.uri.toString(), model.cacheKey),
          parts: hole.parts,
          n: model.n,
          sampling: model.sampling,
          verify: (candidate) => pool.pool.verify({ file, hole: hole.range, text }, candidate),
          signal: controller.signal,
          onProgress: (stage, done, total) =>
            progress.report({
              message:
                stage === "generated"
                  ? `checking ${done} candidate(s) with ${verifierLabel.value}…`
                  : `checked ${done} of ${total}`,
            }),
        });
        if (result.kind === "ok")
          log.info(
            `Fill Hole: '${hole.declaration}': ${result.candidates.filter((c) => c.outcome === "proved").length} of ${result.candidates.length} distinct candidate(s) proved (${verifierLabel.value}).`,
          );
        return result;
      },
    );
  }

  /** The backend of the current settings, kept open between fills (a local model loads once). */
  private async openBackend(
    model: FillModel,
    signal: AbortSignal,
  ): Promise<{ kind: "ok"; backend: ModelBackend } | Extract<FillResult, { kind: "error" }>> {
    const key = JSON.stringify({
      spec: model.specText,
      prompt: model.backend.prompt,
      tokenizer: model.backend.tokenizerDir,
      key: model.backend.apiKey !== undefined,
    });
    if (this.backend?.key === key) return { kind: "ok", backend: this.backend.backend };
    await this.backend?.backend.close();
    this.backend = undefined;
    const opened = await openModel(model.spec, model.backend, undefined, signal);
    if (opened.kind === "error")
      return { kind: "error", cause: opened.cause, message: opened.message, hint: opened.hint };
    this.backend = { key, backend: opened.backend };
    return opened;
  }

  private async insert(
    document: vscode.TextDocument,
    hole: EditorHole,
    chosen: FilledCandidate,
    modelText: string,
  ): Promise<FillOutcome> {
    const range = new vscode.Range(
      hole.range.start.line,
      hole.range.start.character,
      hole.range.end.line,
      hole.range.end.character,
    );
    if (document.getText(range) !== hole.original)
      return this.refuse(
        "The document changed where the hole was while the model worked; nothing was inserted. Run Fill Hole again.",
      );
    const edit = new vscode.WorkspaceEdit();
    edit.replace(document.uri, range, chosen.text);
    if (!(await vscode.workspace.applyEdit(edit)))
      return this.refuse("VS Code refused the edit; nothing was inserted.");
    // Recorded at the candidate's range once the document holds it: the store (which moves holes through each
    // change event) has then seen the insertion, so it is not moved twice.
    const placed = filledHole(document.uri.fsPath, hole, chosen.text);
    if (document.getText(asRange(placed.range)) === chosen.text)
      this.store.recordAt(placed, fillAttempt(chosen, modelText));
    else log.warn("Fill Hole: the document changed as the candidate went in; the hole is not annotated.");
    log.info(`Fill Hole: inserted a ${chosen.outcome} candidate into '${hole.declaration}'.`);
    return { kind: "inserted", candidate: chosen };
  }

  private refuse(message: string, offerSettings = false): FillOutcome {
    log.warn(`Fill Hole: ${message}`);
    const actions = offerSettings ? ["Open Settings"] : [];
    void vscode.window.showWarningMessage(`FIM-RLVR: ${message}`, ...actions).then((choice) => {
      if (choice === "Open Settings")
        void vscode.commands.executeCommand("workbench.action.openSettings", "fimRlvr.fill");
    });
    return { kind: "refused", message };
  }

  dispose(): void {
    void this.backend?.backend.close();
    this.verifiers.dispose();
    this.previews.dispose();
    this.cache.clear();
    this.generations.clear();
  }
}

function isTarget(value: unknown): value is { uri: vscode.Uri; range: vscode.Range } {
  const v = value as { uri?: unknown; range?: unknown } | null;
  return (
    typeof v === "object" && v !== null && v.uri instanceof vscode.Uri && v.range instanceof vscode.Range
  );
}

/** The code action on a `sorry`: "Fill with model". */
export class FillCodeActions implements vscode.CodeActionProvider {
  static readonly kinds = [vscode.CodeActionKind.QuickFix];

  provideCodeActions(
    document: vscode.TextDocument,
    range: vscode.Range | vscode.Selection,
  ): vscode.CodeAction[] {
    const word = document.getWordRangeAtPosition(range.start, /\bsorry\b/);
    // Filling runs Lean on the workspace's code: nothing is offered in Restricted Mode.
    if (!word || !vscode.workspace.isTrusted) return [];
    const action = new vscode.CodeAction(
      "Fill this sorry with the model (FIM-RLVR)",
      vscode.CodeActionKind.QuickFix,
    );
    action.command = {
      command: "fimRlvr.fillHole",
      title: "Fill Hole with Model",
      arguments: [{ uri: document.uri, range: word }],
    };
    return [action];
  }
}
