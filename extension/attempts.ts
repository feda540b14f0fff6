/** "Show all attempts": a CodeLens above each annotated hole, and the quick pick that lists its attempts. */
import * as vscode from "vscode";
import type { HoleStore } from "./state/holeStore";
import { attemptSummary, SHOW_ATTEMPTS_COMMAND } from "./state/hoverText";
import { asDiagnostics, asRange } from "./converters";

export class AttemptsLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly subscription: { dispose(): void };

  constructor(private readonly store: HoleStore) {
    this.subscription = store.onDidChange(() => this.changed.fire());
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    if (!vscode.workspace.getConfiguration("fimRlvr").get<boolean>("annotations.codeLens", true)) return [];
    return this.store.holesIn(document.uri.fsPath).map(
      (hole) =>
        new vscode.CodeLens(asRange(hole.range), {
          title: `FIM-RLVR: ${hole.latest.verdict} (best ${hole.best}) · ${hole.total} attempt${hole.total === 1 ? "" : "s"}`,
          tooltip: "Show all attempts for this hole",
          command: SHOW_ATTEMPTS_COMMAND,
          arguments: [hole.taskId],
        }),
    );
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

/** Lists a hole's recent attempts, newest first; the one picked opens as a Lean document with its messages. */
export async function showAttempts(store: HoleStore, taskId: unknown): Promise<void> {
  const hole = typeof taskId === "string" ? store.get(taskId) : undefined;
  if (!hole) {
    void vscode.window.showInformationMessage(
      "FIM-RLVR has no attempts for this hole (annotations were cleared, or no sample reached it yet).",
    );
    return;
  }
  const items = [...hole.attempts].reverse().map((attempt) => ({
    label: attemptSummary(attempt),
    detail: attempt.candidate.replace(/\s+/g, " ").slice(0, 200),
    attempt,
  }));
  const picked = await vscode.window.showQuickPick(items, {
    title: `FIM-RLVR: ${hole.total} attempt(s) at line ${hole.range.start.line + 1} (the latest ${hole.attempts.length} kept)`,
    matchOnDetail: true,
  });
  if (!picked) return;
  const messages = asDiagnostics(picked.attempt.diagnostics).map(
    (d) =>
      `-- ${vscode.DiagnosticSeverity[d.severity]} at candidate line ${d.range.start.line + 1}: ${d.message.replace(/\n/g, "\n--   ")}`,
  );
  const content = [`-- ${attemptSummary(picked.attempt)}`, ...messages, picked.attempt.candidate, ""].join(
    "\n",
  );
  // "lean4" exists only when the Lean 4 extension is installed.
  const language = (await vscode.languages.getLanguages()).includes("lean4") ? "lean4" : "plaintext";
  const document = await vscode.workspace.openTextDocument({ language, content });
  await vscode.window.showTextDocument(document, { preview: true, viewColumn: vscode.ViewColumn.Beside });
}
