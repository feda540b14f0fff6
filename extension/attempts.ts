/**
 * "Show all attempts": a CodeLens above each annotated hole (off with `fimRlvr.annotations.codeLens`), and a
 * read-only virtual document listing the hole's attempts by run (state/attemptsText.ts): nothing to save.
 */
import { basename } from "node:path";
import * as vscode from "vscode";
import type { Attempt, HoleStore } from "./state/holeStore";
import { SHOW_ATTEMPTS_COMMAND, type HoverMessage } from "./state/hoverText";
import { attemptsDocument } from "./state/attemptsText";
import { holeMarker, lensTitle } from "./state/gutterMarks";
import { asDiagnostics, asRange } from "./converters";

export const ATTEMPTS_SCHEME = "fim-rlvr-attempts";
const LENS_SETTING = "annotations.codeLens";

export class AttemptsLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly subscriptions: { dispose(): void }[];

  constructor(private readonly store: HoleStore) {
    this.subscriptions = [
      store.onDidChange(() => this.changed.fire()),
      vscode.workspace.onDidChangeConfiguration((event) => {
        if (event.affectsConfiguration(`fimRlvr.${LENS_SETTING}`)) this.changed.fire();
      }),
    ];
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    if (!vscode.workspace.getConfiguration("fimRlvr").get<boolean>(LENS_SETTING, true)) return [];
    const holes = this.store.holesIn(document.uri.fsPath);
    return holes.map(
      (hole) =>
        new vscode.CodeLens(asRange(hole.range), {
          title: lensTitle(hole, holeMarker(hole, holes)),
          tooltip:
            "Show all attempts for this hole (turn these lenses off with the setting fimRlvr.annotations.codeLens)",
          command: SHOW_ATTEMPTS_COMMAND,
          arguments: [hole.taskId],
        }),
    );
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
  }
}

function messagesOf(attempt: Attempt): HoverMessage[] {
  return asDiagnostics(attempt.diagnostics).map((d, k) => ({
    severity: vscode.DiagnosticSeverity[d.severity],
    line: attempt.diagnostics[k]?.candidateRange ? d.range.start.line : null,
    message: d.message,
  }));
}

/** Serves `fim-rlvr-attempts:` documents from the store; they follow new samples while open. */
export class AttemptsDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly open = new Map<string, vscode.Uri>();
  private readonly subscription: { dispose(): void };

  constructor(private readonly store: HoleStore) {
    this.subscription = store.onDidChange(() => {
      for (const uri of this.open.values()) this.changed.fire(uri);
    });
  }

  static uriFor(taskId: string, file: string, line: number): vscode.Uri {
    // The path gives the tab its title; the query names the hole.
    return vscode.Uri.from({
      scheme: ATTEMPTS_SCHEME,
      path: `/Attempts ${basename(file)} line ${line + 1}.lean`,
      query: new URLSearchParams({ task: taskId }).toString(),
    });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    const taskId = new URLSearchParams(uri.query).get("task") ?? "";
    this.open.set(taskId, uri);
    const hole = this.store.get(taskId);
    if (!hole)
      return "-- FIM-RLVR has no attempts for this hole any more (annotations were cleared). Close this tab.\n";
    const folder = vscode.workspace.getWorkspaceFolder(vscode.Uri.file(hole.file));
    const label = folder ? vscode.workspace.asRelativePath(hole.file, false) : hole.file;
    return attemptsDocument(hole, label, messagesOf);
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

/** Opens the hole's attempts beside the editor as a read-only document. */
export async function showAttempts(store: HoleStore, taskId: unknown): Promise<void> {
  const hole = typeof taskId === "string" ? store.get(taskId) : undefined;
  if (!hole) {
    void vscode.window.showInformationMessage(
      "FIM-RLVR has no attempts for this hole (annotations were cleared, or no sample reached it yet).",
    );
    return;
  }
  let document = await vscode.workspace.openTextDocument(
    AttemptsDocuments.uriFor(hole.taskId, hole.file, hole.range.start.line),
  );
  // "lean4" exists only when the Lean 4 extension is installed.
  if ((await vscode.languages.getLanguages()).includes("lean4"))
    document = await vscode.languages.setTextDocumentLanguage(document, "lean4");
  await vscode.window.showTextDocument(document, { preview: true, viewColumn: vscode.ViewColumn.Beside });
}
