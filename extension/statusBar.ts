/** The status bar item: run state, step/total, last reward; a click opens the dashboard. */
import * as vscode from "vscode";
import { statusText, type RunState } from "./state/runState";

export class RunStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(
    "fimRlvr.run",
    vscode.StatusBarAlignment.Left,
    10,
  );

  constructor() {
    this.item.name = "FIM-RLVR Training";
    this.item.command = "fimRlvr.showDashboard";
  }

  /** Shown only in Lean workspaces (after activation) and while a run exists: quiet until needed. */
  update(state: RunState, hasRunOrAnnotations: boolean): void {
    const { text, tooltip } = statusText(state);
    this.item.text = text;
    this.item.tooltip = tooltip;
    if (state.phase !== "idle" || hasRunOrAnnotations) this.item.show();
    else this.item.hide();
  }

  dispose(): void {
    this.item.dispose();
  }
}
