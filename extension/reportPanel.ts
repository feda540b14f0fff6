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
const TITLE = "FIM-RLVR Report: ";

export class ReportPanels implements vscode.Disposable, vscode.WebviewPanelSerializer {
  private readonly panels = new Map<string, vscode.WebviewPanel>();
  /** Finds a run's report.html by the run's name (set by the training controller). */
  locate: (run: string) => string | undefined = () => undefined;

  constructor(private readonly extensionUri: vscode.Uri) {}

  /**
   * A report tab after a window reload: shown again from its run's report.html, else closed (rather than left
   * as an empty editor group).
   */
  async deserializeWebviewPanel(panel: vscode.WebviewPanel): Promise<void> {
    const run = panel.title.startsWith(TITLE) ? panel.title.slice(TITLE.length) : "";
    const path = run ? this.locate(run) : undefined;
    const page = path ? this.page(path) : undefined;
    if (!path || !page || this.panels.has(path)) {
      panel.dispose();
      return Promise.resolve();
    }
    this.adopt(panel, path);
    panel.webview.html = page;
    return Promise.resolve();
  }

  /** Shows the report (a panel per run, refreshed when opened again); says what to do when it cannot. */
  show(reportPath: string): void {
    const page = this.page(reportPath, (message) => void vscode.window.showErrorMessage(message));
    if (page === undefined) return;
    let panel = this.panels.get(reportPath);
    if (panel) panel.reveal(undefined, false);
    else {
      panel = vscode.window.createWebviewPanel(
        REPORT_VIEW_TYPE,
        `${TITLE}${basename(dirname(reportPath))}`,
        { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
        { enableScripts: false, localResourceRoots: [] },
      );
      this.adopt(panel, reportPath);
    }
    panel.webview.html = page;
  }

  private adopt(panel: vscode.WebviewPanel, reportPath: string): void {
    panel.webview.options = { enableScripts: false, localResourceRoots: [] };
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, "media", "icon.svg");
    panel.onDidDispose(() => this.panels.delete(reportPath));
    this.panels.set(reportPath, panel);
  }

  /** The report as the panel's page, or undefined (said through `fail`, when given). */
  private page(reportPath: string, fail?: (message: string) => void): string | undefined {
    let html: string;
    try {
      html = readFileSync(reportPath, "utf8");
    } catch (error) {
      fail?.(
        `FIM-RLVR cannot open the report ${reportPath}: ${error instanceof Error ? error.message : String(error)}. ` +
          "It is written when a run ends; resume or finish the run to write it.",
      );
      return undefined;
    }
    const page = reportWebviewHtml(html);
    if (page === undefined)
      fail?.(`FIM-RLVR cannot show ${reportPath}: it is not a report this extension wrote (no <head>).`);
    return page;
  }

  dispose(): void {
    for (const panel of this.panels.values()) panel.dispose();
  }
}
