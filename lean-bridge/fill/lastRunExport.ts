/**
 * The last training run's ONNX export, for the editor's "last run" model: the newest run folder (under the runs
 * folder the editor trains into) that holds `exports/step-N-onnx` (what `fim-rlvr export-model --format onnx`
 * writes by default), its highest step.
 */
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

export type LastExport =
  { kind: "ok"; dir: string; run: string; step: number } | { kind: "none"; message: string };

function folders(dir: string): string[] {
  try {
    return readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory());
  } catch {
    return [];
  }
}

export function lastRunOnnxExport(runsDir: string): LastExport {
  if (!existsSync(runsDir))
    return {
      kind: "none",
      message: `No training run was found (${runsDir} does not exist). Train a model first, or choose an ONNX folder or an endpoint in the fimRlvr.fill settings.`,
    };
  const runs = folders(runsDir)
    .map((name) => ({ name, mtime: statSync(join(runsDir, name)).mtimeMs }))
    .sort((a, b) => b.mtime - a.mtime || b.name.localeCompare(a.name));
  for (const run of runs) {
    const exports = join(runsDir, run.name, "exports");
    const onnx = folders(exports)
      .map((name) => ({ name, step: Number(/^step-(\d+)-onnx$/.exec(name)?.[1] ?? Number.NaN) }))
      .filter((e) => Number.isInteger(e.step))
      .sort((a, b) => b.step - a.step)[0];
    if (onnx)
      return { kind: "ok", dir: join(exports, onnx.name), run: join(runsDir, run.name), step: onnx.step };
  }
  return {
    kind: "none",
    message:
      `No training run under ${runsDir} has an ONNX export. Export one with \`fim-rlvr export-model RUN_DIR --format onnx\`, ` +
      "or choose an ONNX folder or an endpoint in the fimRlvr.fill settings.",
  };
}
