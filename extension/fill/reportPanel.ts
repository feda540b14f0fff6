/**
 * An evaluation's report.html in a webview panel, under the policy run reports get (state/reportHtml.ts): no
 * script, nothing fetched, only the report's own styles by hash — the page holds text the model wrote.
 */
import { readFileSync } from "node:fs";
import * as vscode from "vscode";
import { reportWebviewHtml } from "../state/reportHtml";

export function openEvalReport(path: string, title: string): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel("fimRlvr.evalReport", title, vscode.ViewColumn.Active, {
    enableScripts: false,
    localResourceRoots: [],
  });
  const html = readFileSync(path, "utf8");
  panel.webview.html = reportWebviewHtml(html) ?? `<p>${path} is not a report (it has no &lt;head&gt;).</p>`;
  return panel;
}
