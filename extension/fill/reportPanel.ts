/**
 * An evaluation's report.html in a webview panel: the page is self-contained (inline CSS and SVG, no script), so
 * the panel runs no script and its policy allows nothing but inline styles and data: images.
 */
import { readFileSync } from "node:fs";
import * as vscode from "vscode";

const POLICY = "default-src 'none'; style-src 'unsafe-inline'; img-src data:;";

export function openEvalReport(path: string, title: string): vscode.WebviewPanel {
  const panel = vscode.window.createWebviewPanel("fimRlvr.evalReport", title, vscode.ViewColumn.Active, {
    enableScripts: false,
    localResourceRoots: [],
  });
  const html = readFileSync(path, "utf8");
  panel.webview.html = html.replace(
    /<head>/i,
    `<head><meta http-equiv="Content-Security-Policy" content="${POLICY}">`,
  );
  return panel;
}
