/** Extension entry point: every command is listed once here. */
import * as vscode from "vscode";
import { exportWorkspaceAsDataset } from "./exportCommand";

const COMMANDS: Record<string, () => Promise<void>> = {
  "fimRlvr.exportDataset": exportWorkspaceAsDataset,
};

export function activate(context: vscode.ExtensionContext): void {
  for (const [id, run] of Object.entries(COMMANDS))
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
}

export function deactivate(): void {}
