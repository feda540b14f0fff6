/**
 * The training dashboard: a webview (script and styles from dist/ and media/, strict content security
 * policy, no CDN) fed by the same DashboardMessage reducer the extension keeps, so a dashboard opened late
 * replays the whole run.
 */
import { randomBytes } from "node:crypto";
import * as vscode from "vscode";
import {
  emptyDashboard,
  reduceDashboard,
  type DashboardMessage,
  type DashboardRequest,
  type DashboardState,
} from "./state/dashboardModel";

export class Dashboard implements vscode.Disposable {
  private state: DashboardState = emptyDashboard();
  private panel: vscode.WebviewPanel | undefined;

  constructor(private readonly extensionUri: vscode.Uri) {}

  get current(): DashboardState {
    return this.state;
  }

  post(message: DashboardMessage): void {
    this.state = reduceDashboard(this.state, message);
    void this.panel?.webview.postMessage(message);
  }

  show(): void {
    if (this.panel) {
      this.panel.reveal(undefined, true);
      return;
    }
    const roots = [
      vscode.Uri.joinPath(this.extensionUri, "dist"),
      vscode.Uri.joinPath(this.extensionUri, "media"),
    ];
    const panel = vscode.window.createWebviewPanel(
      "fimRlvr.dashboard",
      "FIM-RLVR Training",
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, localResourceRoots: roots },
    );
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, "media", "icon.svg");
    panel.webview.html = this.html(panel.webview);
    panel.webview.onDidReceiveMessage((message: DashboardRequest) => {
      if (message.type === "ready")
        void panel.webview.postMessage({ type: "state", state: this.state } satisfies DashboardMessage);
    });
    panel.onDidDispose(() => (this.panel = undefined));
    this.panel = panel;
  }

  private html(webview: vscode.Webview): string {
    const nonce = randomBytes(16).toString("base64");
    const uri = (...path: string[]) =>
      webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, ...path)).toString();
    const csp = [
      "default-src 'none'",
      `img-src ${webview.cspSource} data:`,
      `style-src ${webview.cspSource}`,
      `font-src ${webview.cspSource}`,
      `script-src 'nonce-${nonce}'`,
    ].join("; ");
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${uri("dist", "uplot.css")}">
<link rel="stylesheet" href="${uri("media", "dashboard.css")}">
<title>FIM-RLVR Training</title>
</head>
<body>
<header>
  <h1>FIM-RLVR training</h1>
  <p id="run" class="muted">No run yet. Start one with “FIM-RLVR: Start FIM-RLVR Training”.</p>
</header>
<section id="tiles" class="tiles" aria-label="Latest figures"></section>
<section class="charts">
  <figure><figcaption>Reward and pass rate</figcaption><div id="chart-reward" class="chart"></div></figure>
  <figure><figcaption>Pass rate by hole kind</figcaption><div id="chart-kinds" class="chart"></div></figure>
  <figure><figcaption>Loss</figcaption><div id="chart-loss" class="chart"></div></figure>
  <figure><figcaption>KL to the reference</figcaption><div id="chart-kl" class="chart"></div></figure>
  <figure><figcaption>Clip fraction</figcaption><div id="chart-clip" class="chart"></div></figure>
  <figure><figcaption>Throughput: tokens/s and verifier checks/s</figcaption><div id="chart-speed" class="chart"></div></figure>
</section>
<script nonce="${nonce}" src="${uri("dist", "dashboard.js")}"></script>
</body>
</html>`;
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
