/**
 * "Export for the editor": the trainer's ONNX export (`python -m fim_rlvr.model.export RUN_DIR --format onnx`,
 * what `fim-rlvr export-model` runs) of a run's latest checkpoint, into the run folder
 * (RUN_DIR/exports/step-N-onnx, where the editor's "last run" model looks). Run with the Python the run trained
 * with; its progress lines are passed on; cancelling interrupts it (the exporter leaves nothing behind). An export
 * of that checkpoint already in place is used as it is. Pure Node: no `vscode` here.
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { parseExportAnswer } from "../../lean-bridge/cli/exportModelCommand";
import { latestCheckpoint } from "../../lean-bridge/train/checkpoints";
import { managedVenvDir } from "../../lean-bridge/train/python";

export interface OnnxExportRequest {
  runDir: string;
  /** The interpreter the run trained with; undefined: the managed environment under `trainerRoot`'s cache. */
  python: string | undefined;
  /** The folder holding the `fim_rlvr` package (trainer/ inside the extension). */
  trainerRoot: string;
  onProgress(line: string): void;
  signal: AbortSignal;
}

export type OnnxExportResult =
  | { kind: "ok"; dir: string; step: number; reused: boolean; check: string | null }
  | { kind: "cancelled" }
  | { kind: "error"; message: string; hint: string };

/** How the editor exports (the real trainer by default; extension-host tests substitute a named stub). */
export type OnnxExporter = (request: OnnxExportRequest) => Promise<OnnxExportResult>;

function stepOf(checkpoint: string): number {
  return Number(/^step-(\d+)$/.exec(basename(checkpoint))?.[1] ?? Number.NaN);
}

/** The install line for the trainer's ONNX extra in `python` (what a missing module needs). */
export function onnxInstallCommand(python: string, trainerRoot: string): string {
  return `${python} -m pip install -e '${trainerRoot}[onnx]'`;
}

export const trainerOnnxExporter: OnnxExporter = async (request) => {
  const checkpoint = latestCheckpoint(request.runDir);
  if (!checkpoint)
    return {
      kind: "error",
      message: `${request.runDir} has no complete checkpoint to export.`,
      hint: "Train (or resume) until a checkpoint is written, then export again.",
    };
  const step = stepOf(checkpoint);
  const target = join(request.runDir, "exports", `step-${step}-onnx`);
  if (existsSync(join(target, "onnx", "model.onnx")))
    return { kind: "ok", dir: target, step, reused: true, check: null };
  const python = request.python ?? join(managedVenvDir(request.trainerRoot), "bin", "python");
  if (!existsSync(python))
    return {
      kind: "error",
      message: `the trainer's Python ${python} is not there any more.`,
      hint: "Start a training run once (it sets up the managed environment), or set fimRlvr.trainer.python.",
    };
  const args = [
    "-m",
    "fim_rlvr.model.export",
    request.runDir,
    "--format",
    "onnx",
    "--checkpoint",
    String(step),
    "--out",
    target,
    // A folder without its model is the remains of something else, not an export to keep.
    ...(existsSync(target) ? ["--force"] : []),
  ];
  request.onProgress(`$ ${python} ${args.join(" ")}`);
  const ran = await new Promise<{ code: number | null; stdout: string; stderr: string; error?: string }>(
    (resolve) => {
      const child = spawn(python, args, {
        stdio: ["ignore", "pipe", "pipe"],
        env: {
          ...process.env,
          PYTHONPATH: [request.trainerRoot, process.env.PYTHONPATH].filter(Boolean).join(":"),
        },
      });
      let stdout = "";
      let stderr = "";
      let partial = "";
      child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        stderr = (stderr + chunk).slice(-8000);
        const lines = (partial + chunk).split("\n");
        partial = lines.pop() ?? "";
        for (const line of lines)
          if (line.startsWith("export-model: ")) request.onProgress(line.slice("export-model: ".length));
      });
      // SIGINT: the exporter removes its temporary folder and exits 130.
      const abort = () => child.kill("SIGINT");
      request.signal.addEventListener("abort", abort, { once: true });
      child.once("error", (error) => resolve({ code: null, stdout, stderr, error: error.message }));
      child.once("close", (code) => {
        request.signal.removeEventListener("abort", abort);
        resolve({ code, stdout, stderr });
      });
    },
  );
  if (request.signal.aborted) return { kind: "cancelled" };
  const answer = parseExportAnswer(ran.stdout);
  if (answer?.kind === "ok")
    return { kind: "ok", dir: answer.path, step: answer.step, reused: false, check: answer.check };
  if (answer?.kind === "error") return answer;
  const tail = ran.stderr.trim().split("\n").slice(-4).join(" / ");
  const missing = /ModuleNotFoundError|No module named/.exec(ran.stderr);
  return {
    kind: "error",
    message: `${python} -m fim_rlvr.model.export ended without an answer (${ran.error ?? `exit code ${ran.code}`})${tail ? `: ${tail}` : ""}.`,
    hint: missing
      ? `That Python lacks a module the export needs. Install the trainer's ONNX extra into it: ${onnxInstallCommand(python, request.trainerRoot)}`
      : `Run \`fim-rlvr export-model ${request.runDir} --format onnx --python ${python}\` in a terminal to see more; if a module is missing: ${onnxInstallCommand(python, request.trainerRoot)}`,
  };
};
