/** Extension entry point: every command is listed once here. */
import * as vscode from "vscode";
import { startTraining } from "../lean-bridge/train/session";
import { AnnotationPersistence } from "./annotationPersistence";
import { exportWorkspaceAsDataset } from "./exportCommand";
import { ATTEMPTS_SCHEME, AttemptsDocuments, AttemptsLens, showAttempts } from "./attempts";
import { DASHBOARD_VIEW_TYPE, Dashboard } from "./dashboardPanel";
import { EditorExport } from "./fill/editorExport";
import { registerFillCommands } from "./fill/register";
import { HoleDecorations } from "./decorations";
import { HolesTree } from "./holesTree";
import { log, mirrorLogToConsole, outputChannel } from "./log";
import { REPORT_VIEW_TYPE, ReportPanels } from "./reportPanel";
import { RunStatusBar } from "./statusBar";
import { leanToolchainHere } from "./settings";
import { HoleStore } from "./state/holeStore";
import { TrainingController, type StartTraining } from "./trainingController";

/** What tests in the extension host reach through `extensions.getExtension(...).exports`. */
export interface FimRlvrApi {
  readonly store: HoleStore;
  readonly controller: TrainingController;
  readonly dashboard: Dashboard;
  readonly decorations: HoleDecorations;
  readonly reports: ReportPanels;
  readonly editorExport: EditorExport;
}

const CLEAR = "Clear";

/** Clearing drops every hole's attempts, saved ones included: ask first. */
async function clearAnnotations(store: HoleStore, persistence: AnnotationPersistence): Promise<void> {
  const holes = store.size;
  const files = store.files().length;
  const choice = await vscode.window.showWarningMessage(
    `Clear the FIM-RLVR annotations of ${holes} hole${holes === 1 ? "" : "s"} in ${files} file${files === 1 ? "" : "s"}?`,
    {
      modal: true,
      detail:
        "Gutter icons, CodeLenses, hovers, the FIM Holes view and the saved annotations go. The runs' files " +
        "(samples.jsonl, checkpoints, reports) stay.",
    },
    CLEAR,
  );
  if (choice !== CLEAR) return;
  store.clear();
  persistence.forgetPending();
}

export function activate(context: vscode.ExtensionContext): FimRlvrApi {
  mirrorLogToConsole(context.extensionMode === vscode.ExtensionMode.Test);
  const store = new HoleStore();
  const persistence = new AnnotationPersistence(store, context.storageUri);
  const dashboard = new Dashboard(context.extensionUri);
  const reports = new ReportPanels(context.extensionUri);
  const statusBar = new RunStatusBar();
  const editorExport = new EditorExport(context.workspaceState);
  const controller = new TrainingController(
    context,
    store,
    dashboard,
    statusBar,
    reports,
    // The run's verifier finds Lean as the user set it up for the Lean 4 extension, through its own environment.
    ((options, events) =>
      startTraining(
        { ...options, verifier: { ...options.verifier, env: leanToolchainHere().env } },
        events,
      )) satisfies StartTraining,
    editorExport,
  );
  reports.locate = (run) => controller.reportOf(run);
  const commands: Record<string, (...args: unknown[]) => unknown> = {
    "fimRlvr.exportDataset": exportWorkspaceAsDataset,
    "fimRlvr.startTraining": (preset) => controller.start(preset),
    "fimRlvr.stopTraining": () => controller.stop(),
    "fimRlvr.resumeTraining": () => controller.resume(),
    "fimRlvr.showDashboard": () => dashboard.show(),
    "fimRlvr.openReport": () => controller.openReport(),
    "fimRlvr.clearAnnotations": () => clearAnnotations(store, persistence),
    "fimRlvr.showAttempts": (taskId) => showAttempts(store, taskId),
    "fimRlvr.showLog": () => outputChannel().show(true),
  };
  for (const [id, run] of Object.entries(commands))
    context.subscriptions.push(vscode.commands.registerCommand(id, run));
  registerFillCommands(context, store);
  const lens = new AttemptsLens(store);
  const attemptDocuments = new AttemptsDocuments(store);
  const decorations = new HoleDecorations(store, context.extensionUri);
  const tree = new HolesTree(store, context.extensionUri);
  context.subscriptions.push(
    outputChannel(),
    persistence,
    statusBar,
    reports,
    // Restores the dashboard tab after a window reload (the tab survives; the extension fills it again).
    vscode.window.registerWebviewPanelSerializer(DASHBOARD_VIEW_TYPE, dashboard),
    vscode.window.registerWebviewPanelSerializer(REPORT_VIEW_TYPE, reports),
    controller,
    attemptDocuments,
    vscode.workspace.registerTextDocumentContentProvider(ATTEMPTS_SCHEME, attemptDocuments),
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
  return { store, controller, dashboard, decorations, reports, editorExport };
}

export function deactivate(): void {}
