/** Extension entry point: every command is listed once here. */
import * as vscode from "vscode";
import { startTraining } from "../lean-bridge/train/session";
import { AnnotationPersistence } from "./annotationPersistence";
import { exportWorkspaceAsDataset } from "./exportCommand";
import { AttemptsLens, showAttempts } from "./attempts";
import { Dashboard } from "./dashboardPanel";
import { registerFillCommands } from "./fill/register";
import { HoleDecorations } from "./decorations";
import { HolesTree } from "./holesTree";
import { log, mirrorLogToConsole, outputChannel } from "./log";
import { RunStatusBar } from "./statusBar";
import { HoleStore } from "./state/holeStore";
import { TrainingController, type StartTraining } from "./trainingController";

/** What tests in the extension host reach through `extensions.getExtension(...).exports`. */
export interface FimRlvrApi {
  readonly store: HoleStore;
  readonly controller: TrainingController;
  readonly dashboard: Dashboard;
  readonly decorations: HoleDecorations;
}

export function activate(context: vscode.ExtensionContext): FimRlvrApi {
  mirrorLogToConsole(context.extensionMode === vscode.ExtensionMode.Test);
  const store = new HoleStore();
  const persistence = new AnnotationPersistence(store, context.storageUri);
  const dashboard = new Dashboard(context.extensionUri);
  const statusBar = new RunStatusBar();
  const controller = new TrainingController(
    context,
    store,
    dashboard,
    statusBar,
    startTraining satisfies StartTraining,
  );
  const commands: Record<string, (...args: unknown[]) => unknown> = {
    "fimRlvr.exportDataset": exportWorkspaceAsDataset,
    "fimRlvr.startTraining": (preset) => controller.start(preset),
    "fimRlvr.stopTraining": () => controller.stop(),
    "fimRlvr.resumeTraining": () => controller.resume(),
    "fimRlvr.showDashboard": () => dashboard.show(),
    "fimRlvr.clearAnnotations": () => {
      store.clear();
      persistence.forgetPending();
    },
    "fimRlvr.showAttempts": (taskId) => showAttempts(store, taskId),
    "fimRlvr.showLog": () => outputChannel().show(true),
  };
  for (const [id, run] of Object.entries(commands))
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  registerFillCommands(context);
  const lens = new AttemptsLens(store);
  const decorations = new HoleDecorations(store, context.extensionUri);
  const tree = new HolesTree(store, context.extensionUri);
  context.subscriptions.push(
    outputChannel(),
    persistence,
    statusBar,
    dashboard,
    controller,
    decorations,
    lens,
    // By file pattern, not language id: it works with or without the Lean 4 extension installed.
    vscode.languages.registerCodeLensProvider({ scheme: "file", pattern: "**/*.lean" }, lens),
    tree,
    vscode.window.createTreeView("fimRlvr.holes", { treeDataProvider: tree, showCollapseAll: true }),
  );
  log.info(
    `FIM-RLVR activated (VS Code ${vscode.version}; workspace ${vscode.workspace.isTrusted ? "trusted" : "not trusted"}).`,
  );
  return { store, controller, dashboard, decorations };
}

export function deactivate(): void {}
