/**
 * "FIM-RLVR: Export Workspace as Dataset", independent of the editor API: the VS Code adapter
 * (exportCommand.ts) supplies an `ExportUi`, tests supply a fake one.
 */
import { join } from "node:path";
import type { ExportProgress, ExportReport } from "../lean-bridge/dataset/exporter";
import { HOLE_KINDS } from "../lean-bridge/holes/mine";
import type { WorkerVerifier } from "../lean-bridge/dataset/workerProtocol";
import { defaultDatasetPath } from "../lean-bridge/util/projectLayout";
import type { ExportRunner } from "./exportProcess";

/** Whether (and with what) the export verifies each hole's own proof; "none" keeps every mined hole. */
export type VerifyChoice = "none" | WorkerVerifier;

export interface ExportUi {
  /** The workspace folder to mine; undefined when the user backs out. */
  pickWorkspace(): Promise<string | undefined>;
  /** The output folder, offering `suggested`; undefined when the user backs out. */
  pickOutput(suggested: string): Promise<string | undefined>;
  /** Verify each hole's own proof (with Lean, or the simulator), or not; undefined when the user backs out. */
  pickVerification(): Promise<VerifyChoice | undefined>;
  /** Runs `task` with a cancellable progress notification. */
  withProgress<T>(
    title: string,
    task: (report: (message: string, fraction: number) => void, signal: AbortSignal) => Promise<T>,
  ): Promise<T>;
  info(message: string, ...actions: string[]): Promise<string | undefined>;
  /** A failure: a short message, and the whole story in `detail` (shown in full, not cut off in a toast). */
  error(message: string, detail?: string): void;
  openFile(path: string): Promise<void>;
}

export const OPEN_CARD = "Open Dataset Card";

const PHASES: Record<ExportProgress["phase"], [number, number]> = {
  mining: [0, 0.8],
  verifying: [0.8, 0.95],
  writing: [0.95, 1],
};

export function summary(report: ExportReport, out: string): string {
  const kinds =
    Object.entries(report.holes.kept.byKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ") || "none";
  const skippedDecls = Object.values(report.declarations.skipped).reduce((a, b) => a + b, 0);
  return (
    `Exported ${report.holes.kept.total} tasks (${kinds}) from ${report.files.mined} files to ${out}. ` +
    `Skipped: ${report.files.skipped.length} files, ${skippedDecls} declarations without tactic proofs, ${report.holes.duplicatesDropped} duplicates.`
  );
}

/**
 * The exporter's messages are written for the CLI (`--out X exists, ...`); in the editor the folder was picked
 * in a dialog, so name it as a folder.
 */
export function editorMessage(message: string): string {
  return message.replace(/^--out /, "The output folder ");
}

export type FlowResult = "exported" | "cancelled" | "backed-out" | "failed";

/**
 * The command's flow. `run` performs the export; the editor passes a child-process runner (exportProcess.ts)
 * so mining never blocks the extension host.
 */
export async function runExportFlow(ui: ExportUi, run: ExportRunner): Promise<FlowResult> {
  const workspace = await ui.pickWorkspace();
  if (!workspace) return "backed-out";
  const out = await ui.pickOutput(defaultDatasetPath(workspace));
  if (!out) return "backed-out";
  const verify = await ui.pickVerification();
  if (!verify) return "backed-out";
  const result = await ui.withProgress("FIM-RLVR: exporting the workspace as a dataset", (report, signal) =>
    run(
      {
        workspace,
        out,
        kinds: [...HOLE_KINDS],
        seed: 0,
        maxFileBytes: 4 * 1024 * 1024,
        formats: ["native"],
        ...(verify === "none" ? {} : { verifier: verify }),
      },
      (p) => {
        const [from, to] = PHASES[p.phase];
        report(`${p.phase} ${p.done}/${p.total}`, from + (to - from) * (p.total ? p.done / p.total : 1));
      },
      signal,
    ),
  );
  switch (result.kind) {
    case "cancelled":
      await ui.info(
        "Export cancelled: nothing was written, and any earlier dataset in that folder is unchanged.",
      );
      return "cancelled";
    case "error":
      ui.error("FIM-RLVR export failed.", editorMessage(result.message));
      return "failed";
    case "empty":
      ui.error("FIM-RLVR found nothing to export.", editorMessage(result.message));
      return "failed";
    case "ok": {
      const choice = await ui.info(summary(result.report, result.out), OPEN_CARD);
      if (choice === OPEN_CARD) await ui.openFile(join(result.out, "README.md"));
      return "exported";
    }
  }
}
