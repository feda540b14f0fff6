/**
 * The training dashboard: a webview (script and styles from dist/ and media/, strict content security
 * policy, no CDN) fed by the same DashboardMessage reducer the extension keeps, so a dashboard opened late
 * replays the whole run. A page that does not start (its script never says "ready") is loaded again, then
 * opened anew (state/dashboardBoot.ts).
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
import { BOOT_RELOADS, BootWatch } from "./state/dashboardBoot";
import { DashboardOutbox, type Timers } from "./state/dashboardOutbox";
import { log, outputChannel } from "./log";

export const DASHBOARD_VIEW_TYPE = "fimRlvr.dashboard";

const TIMERS: Timers = {
  set: (run, ms) => setTimeout(run, ms),
  clear: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export class Dashboard implements vscode.Disposable, vscode.WebviewPanelSerializer {
  private state: DashboardState = emptyDashboard();
  private panel: vscode.WebviewPanel | undefined;
  /** Whether the panel's page started (its script said "ready"); reloads it, then makes a new panel. */
  private readonly boot = new BootWatch(
    {
      reload: (attempt) => {
        log.warn(
          `The training dashboard's page did not start (its script did not run): ${attempt === 1 ? "loading it again" : "opening it anew"} (${attempt}/${BOOT_RELOADS}).`,
        );
        if (attempt === 1 && this.panel) this.load(this.panel);
        else this.recreate();
      },
      giveUp: (reloads) => void this.giveUp(reloads),
    },
    TIMERS,
  );
  /** The page gets the full state when it asks, then live messages in batches. */
  private readonly outbox = new DashboardOutbox(
    (message) => void this.panel?.webview.postMessage(message),
    TIMERS,
  );

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
    this.outbox.post(message);
  }

  show(): void {
    if (this.panel) {
      this.panel.reveal(undefined, true);
      return;
    }
    this.adopt(this.createPanel(vscode.ViewColumn.Beside));
  }

  private createPanel(viewColumn: vscode.ViewColumn): vscode.WebviewPanel {
    return vscode.window.createWebviewPanel(
      DASHBOARD_VIEW_TYPE,
      "FIM-RLVR Training",
      { viewColumn, preserveFocus: true },
      this.options(),
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
    panel.webview.onDidReceiveMessage((message: DashboardRequest) => {
      if (message.type !== "ready" || this.panel !== panel) return;
      this.boot.ready();
      this.outbox.ready(this.state);
    });
    // VS Code drops a hidden webview's page and loads it again when its tab is shown.
    let visible = panel.visible;
    panel.onDidChangeViewState(() => {
      if (this.panel !== panel) return;
      if (panel.visible && !visible) this.boot.expect();
      if (!panel.visible) {
        this.boot.hidden();
        this.outbox.reset();
      }
      visible = panel.visible;
    });
    panel.onDidDispose(() => {
      if (this.panel !== panel) return;
      this.panel = undefined;
      this.boot.hidden();
      this.outbox.reset();
    });
    this.panel = panel;
    this.load(panel);
  }

  /** Sets the page (a fresh nonce each time, so VS Code loads it even when nothing else changed). */
  private load(panel: vscode.WebviewPanel): void {
    this.outbox.reset();
    panel.webview.html = this.html(panel.webview);
    if (panel.visible) this.boot.expect();
  }

  /** A page that did not start after a reload: a new panel (a new webview frame) where the old one was. */
  private recreate(): void {
    const old = this.panel;
    this.panel = undefined;
    old?.dispose();
    this.adopt(this.createPanel(old?.viewColumn ?? vscode.ViewColumn.Beside));
  }

  private async giveUp(reloads: number): Promise<void> {
    const message = `FIM-RLVR: the training dashboard did not load (its page did not start, ${reloads} tries). Close its tab and run "FIM-RLVR: Show Training Dashboard" again; if it stays blank, run "Developer: Reload Window".`;
    log.error(message);
    if ((await vscode.window.showWarningMessage(message, "Show Log")) === "Show Log")
      outputChannel().show(true);
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
    this.boot.dispose();
    this.outbox.reset();
    this.panel = undefined;
  }
}
