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
import { dashboardHtml } from "./state/dashboardHtml";

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
    const uri = (...path: string[]) =>
      webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, ...path)).toString();
    return dashboardHtml({
      cspSource: webview.cspSource,
      nonce: randomBytes(16).toString("base64"),
      uplotCss: uri("dist", "uplot.css"),
      dashboardCss: uri("media", "dashboard.css"),
      script: uri("dist", "dashboard.js"),
    });
  }

  dispose(): void {
    this.panel?.dispose();
  }
}
