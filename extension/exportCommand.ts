/** The VS Code side of the export command: pickers, a cancellable progress notification, the summary. */
import * as vscode from "vscode";
import { join } from "node:path";
import { runExportFlow, type ExportUi, type VerifyChoice } from "./exportFlow";
import { childProcessRunner } from "./exportProcess";
import { findLake, leanToolchainHere } from "./settings";

function vscodeUi(): ExportUi {
  return {
    async pickWorkspace() {
      const folders = vscode.workspace.workspaceFolders ?? [];
      if (folders.length === 1) return folders[0]!.uri.fsPath;
      if (folders.length > 1) {
        const pick = await vscode.window.showQuickPick(
          folders.map((f) => ({ label: f.name, description: f.uri.fsPath })),
          { title: "FIM-RLVR: which Lean workspace?", placeHolder: "Pick the folder to mine" },
        );
        return pick?.description;
      }
      const chosen = await vscode.window.showOpenDialog({
        canSelectFolders: true,
        canSelectFiles: false,
        openLabel: "Mine this workspace",
      });
      return chosen?.[0]?.fsPath;
    },
    async pickOutput(suggested) {
      const pick = await vscode.window.showQuickPick(
        [
          { label: "$(folder) Default output folder", description: suggested, value: suggested },
          { label: "$(folder-opened) Choose another folder…", description: "", value: "" },
        ],
        { title: "FIM-RLVR: where should the dataset go?" },
      );
      if (!pick) return undefined;
      if (pick.value) return pick.value;
      const chosen = await vscode.window.showOpenDialog({
        canSelectFolders: true,
        canSelectFiles: false,
        openLabel: "Write the dataset here",
      });
      return chosen?.[0]?.fsPath;
    },
    async pickVerification() {
      const lake = findLake() !== undefined;
      const items: (vscode.QuickPickItem & { value: VerifyChoice })[] = [
        {
          label: "$(check-all) Verify with Lean",
          description: lake ? "keeps only holes whose own proof Lean accepts" : "Lean's `lake` was not found",
          detail: lake ? undefined : "Install Lean with elan, or set fimRlvr.verifier.lakePath",
          value: { kind: "lean" },
        },
        {
          label: "$(circle-large-outline) Do not verify",
          description: "fast; keeps every mined hole (the card says they were not verified)",
          value: "none",
        },
        {
          label: "$(beaker) Verify with the simulator (not Lean)",
          description: "a dry run of the verification pass; no real check",
          value: { kind: "simulator" },
        },
      ];
      if (!lake) items.push(items.shift()!);
      const pick = await vscode.window.showQuickPick(items, {
        title: "FIM-RLVR: verify each hole's own proof?",
      });
      return pick?.value;
    },
    withProgress(title, task) {
      return Promise.resolve(
        vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title, cancellable: true },
          async (progress, token) => {
            const abort = new AbortController();
            token.onCancellationRequested(() => abort.abort());
            let reported = 0;
            return task((message, fraction) => {
              const increment = Math.max(0, fraction * 100 - reported);
              reported += increment;
              progress.report({ message, increment });
            }, abort.signal);
          },
        ),
      );
    },
    async info(message, ...actions) {
      return vscode.window.showInformationMessage(message, ...actions);
    },
    error(message, detail) {
      void vscode.window.showErrorMessage(message, { modal: true, ...(detail ? { detail } : {}) });
    },
    async openFile(path) {
      await vscode.commands
        .executeCommand("markdown.showPreview", vscode.Uri.file(path))
        .then(undefined, async () => {
          await vscode.window.showTextDocument(vscode.Uri.file(path));
        });
    },
  };
}

export async function exportWorkspaceAsDataset(): Promise<void> {
  try {
    // The bundled worker sits beside dist/extension.js.
    await runExportFlow(
      vscodeUi(),
      childProcessRunner(join(__dirname, "exportWorker.js"), undefined, () => leanToolchainHere().env),
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const copy = "Copy Details";
    const choice = await vscode.window.showErrorMessage(
      `FIM-RLVR export hit an internal error: ${message}. Please report it with the details.`,
      copy,
    );
    if (choice === copy)
      await vscode.env.clipboard.writeText(error instanceof Error ? (error.stack ?? message) : message);
  }
}
