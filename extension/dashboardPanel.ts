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

export const DASHBOARD_VIEW_TYPE = "fimRlvr.dashboard";

export class Dashboard implements vscode.Disposable, vscode.WebviewPanelSerializer {
  private state: DashboardState = emptyDashboard();
  private panel: vscode.WebviewPanel | undefined;

  constructor(private readonly extensionUri: vscode.Uri) {}

  /** A window reload brings the dashboard tab back (VS Code keeps the tab, the extension fills it). */
  async deserializeWebviewPanel(panel: vscode.WebviewPanel): Promise<void> {
    if (this.panel) {
      panel.dispose();
      return;
    }
    this.adopt(panel);
    return Promise.resolve();
  }

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
    this.adopt(
      vscode.window.createWebviewPanel(
        DASHBOARD_VIEW_TYPE,
        "FIM-RLVR Training",
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        this.options(),
      ),
    );
  }

  private options(): vscode.WebviewOptions {
    return {
      enableScripts: true,
      localResourceRoots: [
        vscode.Uri.joinPath(this.extensionUri, "dist"),
        vscode.Uri.joinPath(this.extensionUri, "media"),
      ],
    };
  }

  private adopt(panel: vscode.WebviewPanel): void {
    panel.webview.options = this.options();
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

  /**
   * The panel is left open: the extension is deactivated when the window reloads, and a tab closed then would
   * not come back through the serializer. VS Code disposes it with the extension host.
   */
  dispose(): void {
    this.panel = undefined;
  }
}
