/** The model commands (Fill Hole, the API key, Evaluate Model) and the `sorry` code action, registered in one place. */
import * as vscode from "vscode";
import { evaluateWorkspace } from "./evalWorkspace";
import { FillCodeActions, FillHoleCommand } from "./fillCommand";
import { setApiKey } from "./modelSettings";
import type { HoleStore } from "../state/holeStore";

export function registerFillCommands(context: vscode.ExtensionContext, store: HoleStore): void {
  const fill = new FillHoleCommand(context.secrets, store, context.workspaceState);
  context.subscriptions.push(
    fill,
    vscode.commands.registerCommand("fimRlvr.fillHole", (target?: unknown) => fill.run(target)),
    vscode.commands.registerCommand("fimRlvr.setModelApiKey", () => setApiKey(context.secrets)),
    vscode.commands.registerCommand("fimRlvr.evaluateModel", () =>
      evaluateWorkspace(context.secrets, context.workspaceState),
    ),
    // By file pattern, not language id: it works with or without the Lean 4 extension installed.
    vscode.languages.registerCodeActionsProvider(
      { scheme: "file", pattern: "**/*.lean" },
      new FillCodeActions(),
      {
        providedCodeActionKinds: FillCodeActions.kinds,
      },
    ),
  );
}
