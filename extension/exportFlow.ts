/**
 * "FIM-RLVR: Export Workspace as Dataset", independent of the editor API: the VS Code adapter
 * (exportCommand.ts) supplies an `ExportUi`, tests supply a fake one.
 */
import { join } from "node:path";
import type { ExportProgress, ExportReport } from "../lean-bridge/dataset/exporter";
import { HOLE_KINDS } from "../lean-bridge/holes/mine";
import type { ExportRunner } from "./exportProcess";

export interface ExportUi {
  /** The workspace folder to mine; undefined when the user backs out. */
  pickWorkspace(): Promise<string | undefined>;
  /** The output folder, offering `suggested`; undefined when the user backs out. */
  pickOutput(suggested: string): Promise<string | undefined>;
  /** Runs `task` with a cancellable progress notification. */
  withProgress<T>(
    title: string,
    task: (report: (message: string, fraction: number) => void, signal: AbortSignal) => Promise<T>,
  ): Promise<T>;
  info(message: string, ...actions: string[]): Promise<string | undefined>;
  error(message: string): void;
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

export type FlowResult = "exported" | "cancelled" | "backed-out" | "failed";

/**
 * The command's flow. `run` performs the export; the editor passes a child-process runner (exportProcess.ts)
 * so mining never blocks the extension host.
 */
export async function runExportFlow(ui: ExportUi, run: ExportRunner): Promise<FlowResult> {
  const workspace = await ui.pickWorkspace();
  if (!workspace) return "backed-out";
  const out = await ui.pickOutput(join(workspace, ".fim-rlvr", "dataset"));
  if (!out) return "backed-out";
  const result = await ui.withProgress("FIM-RLVR: exporting the workspace as a dataset", (report, signal) =>
    run(
      {
        workspace,
        out,
        kinds: [...HOLE_KINDS],
        seed: 0,
        maxFileBytes: 4 * 1024 * 1024,
        formats: ["native"],
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
      ui.error(`Export failed: ${result.message}`);
      return "failed";
    case "empty":
      ui.error(`Nothing to export: ${result.message}`);
      return "failed";
    case "ok": {
      const choice = await ui.info(summary(result.report, result.out), OPEN_CARD);
      if (choice === OPEN_CARD) await ui.openFile(join(result.out, "README.md"));
      return "exported";
    }
  }
}
