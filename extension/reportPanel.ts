/**
 * "Open Report": a run's report.html in a webview panel (no scripts, a hash-only style policy; see
 * state/reportHtml.ts). The extension host reads the file, so it works where the run folder is: desktop,
 * remote and VS Code in a browser alike.
 */
import { readFileSync } from "node:fs";
import { basename, dirname } from "node:path";
import * as vscode from "vscode";
import { reportWebviewHtml } from "./state/reportHtml";

export const REPORT_VIEW_TYPE = "fimRlvr.report";

export class ReportPanels implements vscode.Disposable {
  private readonly panels = new Map<string, vscode.WebviewPanel>();

  constructor(private readonly extensionUri: vscode.Uri) {}

  /** Shows the report (a panel per run, refreshed when opened again); says what to do when it cannot. */
  show(reportPath: string): void {
    let html: string;
    try {
      html = readFileSync(reportPath, "utf8");
    } catch (error) {
      void vscode.window.showErrorMessage(
        `FIM-RLVR cannot open the report ${reportPath}: ${error instanceof Error ? error.message : String(error)}. ` +
          "It is written when a run ends; resume or finish the run to write it.",
      );
      return;
    }
    const page = reportWebviewHtml(html);
    if (page === undefined) {
      void vscode.window.showErrorMessage(
        `FIM-RLVR cannot show ${reportPath}: it is not a report this extension wrote (no <head>).`,
      );
      return;
    }
    const run = basename(dirname(reportPath));
    let panel = this.panels.get(reportPath);
    if (panel) panel.reveal(undefined, false);
    else {
      panel = vscode.window.createWebviewPanel(
        REPORT_VIEW_TYPE,
        `FIM-RLVR Report: ${run}`,
        { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
        { enableScripts: false, localResourceRoots: [] },
      );
      panel.iconPath = vscode.Uri.joinPath(this.extensionUri, "media", "icon.svg");
      panel.onDidDispose(() => this.panels.delete(reportPath));
      this.panels.set(reportPath, panel);
    }
    panel.webview.html = page;
  }

  dispose(): void {
    for (const panel of this.panels.values()) panel.dispose();
  }
}
