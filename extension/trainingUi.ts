/** The VS Code side of starting a run: the pickers and messages startFlow asks for, and the verifier's label. */
import * as vscode from "vscode";
import { log } from "./log";
import type { StartUi } from "./state/startFlow";

export function verifierLabel(kind: "lean" | "simulator" | "kimina"): string {
  return kind === "simulator" ? "simulator (not Lean)" : kind === "kimina" ? "Kimina Lean Server" : "Lean";
}

export function vscodeStartUi(): StartUi {
  return {
    async pick(title, items) {
      const picked = await vscode.window.showQuickPick(items, {
        title,
        matchOnDescription: true,
        matchOnDetail: true,
      });
      return picked?.value;
    },
    async pickFolder(title) {
      const chosen = await vscode.window.showOpenDialog({
        canSelectFolders: true,
        canSelectFiles: false,
        openLabel: title,
      });
      return chosen?.[0]?.fsPath;
    },
    warn: async (message, ...actions) => vscode.window.showWarningMessage(message, ...actions),
    error: async (message, ...actions) => vscode.window.showErrorMessage(message, ...actions),
    openUrl: (url) => void vscode.env.openExternal(vscode.Uri.parse(url)),
    manageTrust: () => void vscode.commands.executeCommand("workbench.trust.manage"),
    log: (message) => log.info(message),
  };
}
