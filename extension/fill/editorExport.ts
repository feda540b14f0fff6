/**
 * "Export for the editor", offered when a training run ends (completed, or stopped with a checkpoint): the
 * trainer's ONNX export of the run's latest checkpoint into the run folder, with a cancellable progress
 * notification, then set as the Fill Hole model (workspace state, and fimRlvr.fill.model "lastRun" in the workspace
 * settings when another model was chosen). A failure says what happened and what to do (e.g. the pip line for the
 * trainer's ONNX extra).
 */
import * as vscode from "vscode";
import { log, outputChannel } from "../log";
import { EDITOR_EXPORT_KEY, type EditorExportChoice } from "./modelSettings";
import { trainerOnnxExporter, type OnnxExporter, type OnnxExportResult } from "./onnxExport";

export const EXPORT_FOR_EDITOR = "Export for the editor";
const SHOW_LOG = "Show Log";
const COPY_COMMAND = "Copy Command";

/** Where the run trained: its folder, the Python it used (undefined: the managed one), the trainer's sources. */
export interface ExportableRun {
  runDir: string;
  python: string | undefined;
  trainerRoot: string;
}

export class EditorExport {
  /** The exporter (the trainer's by default; extension-host tests put a named stub here). */
  exporter: OnnxExporter = trainerOnnxExporter;

  constructor(private readonly state: vscode.Memento) {}

  /** The export Fill Hole uses now, when "Export for the editor" made one. */
  get chosen(): EditorExportChoice | undefined {
    return this.state.get<EditorExportChoice>(EDITOR_EXPORT_KEY);
  }

  async run(run: ExportableRun): Promise<OnnxExportResult> {
    const result = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: "FIM-RLVR: exporting the run for the editor (ONNX)",
        cancellable: true,
      },
      async (progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        return this.exporter({
          ...run,
          signal: controller.signal,
          onProgress: (line) => {
            log.info(`Export for the editor: ${line}`);
            progress.report({ message: line });
          },
        });
      },
    );
    switch (result.kind) {
      case "ok":
        await this.use({ dir: result.dir, runDir: run.runDir, step: result.step });
        log.info(
          `Export for the editor: ${result.reused ? "using the existing" : "wrote the"} ONNX export ${result.dir}` +
            (result.check ? ` (${result.check})` : "") +
            "; Fill Hole uses it now.",
        );
        void vscode.window.showInformationMessage(
          `FIM-RLVR: Fill Hole with Model now uses step ${result.step} of this run (ONNX in ${result.dir}).`,
        );
        break;
      case "cancelled":
        log.info(
          "Export for the editor cancelled; nothing was written and the Fill Hole model is unchanged.",
        );
        break;
      case "error":
        void this.failed(result.message, result.hint);
        break;
    }
    return result;
  }

  /** Makes `choice` the Fill Hole model: remembered for this workspace, and "lastRun" chosen if it was not. */
  private async use(choice: EditorExportChoice): Promise<void> {
    const config = vscode.workspace.getConfiguration("fimRlvr");
    if (config.get<string>("fill.model", "lastRun") !== "lastRun")
      await config.update("fill.model", "lastRun", vscode.ConfigurationTarget.Workspace);
    // Last: once `chosen` names the export, Fill Hole uses it.
    await this.state.update(EDITOR_EXPORT_KEY, choice);
  }

  private async failed(message: string, hint: string): Promise<void> {
    log.error(`Export for the editor failed: ${message} ${hint}`);
    const command = /(\S+ -m pip install .+)$/.exec(hint)?.[1];
    const actions = [...(command ? [COPY_COMMAND] : []), SHOW_LOG];
    const choice = await vscode.window.showErrorMessage(
      `FIM-RLVR could not export the run for the editor: ${message} ${hint}`,
      ...actions,
    );
    if (choice === COPY_COMMAND && command) await vscode.env.clipboard.writeText(command);
    if (choice === SHOW_LOG) outputChannel().show(true);
  }
}
