/**
 * `fim-rlvr export-model RUN_DIR --format adapter|merged|onnx` (a public interface, spelled as README.md
 * documents it): a training run's checkpoint as a LoRA adapter, a merged transformers model, or an ONNX model
 * folder that @huggingface/transformers (transformers.js) loads in Node. The trainer's Python does the work
 * (`python -m fim_rlvr.model.export`, which prints progress on stderr and one JSON answer on stdout); this
 * file checks what it can without Python, runs it, and turns its answer into a summary and an exit code (0
 * exported, 1 failed, 2 bad usage, 130 interrupted).
 */
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { checkGivenPython, managedVenvDir } from "../train/python";
import { defaultTrainerRoot } from "../train/session";
import { type CliCommand, flagOption, stringOption } from "./command";
import { UsageError, requireExisting } from "./usage";

export const MODEL_EXPORT_FORMATS = ["adapter", "merged", "onnx"] as const;
export type ModelExportFormat = (typeof MODEL_EXPORT_FORMATS)[number];

/** The exporter's answer (trainer/fim_rlvr/model/export.py, ExportResult and ExportError). */
export type ModelExportAnswer =
  | {
      kind: "ok";
      format: ModelExportFormat;
      /** Absolute path of the exported folder. */
      path: string;
      size_bytes: number;
      /** Files under `path`, relative to it. */
      files: string[];
      /** The checkpoint folder exported. */
      checkpoint: string;
      step: number;
      /** `full`: a full fine-tuning checkpoint; `lora`: a peft adapter over a base model. */
      checkpoint_kind: "full" | "lora";
      /** What was checked after writing (ONNX: onnxruntime against PyTorch), or null. */
      check: string | null;
      /** A LoRA checkpoint's base model folder (an adapter export needs it to be loaded), or null. */
      base_model: string | null;
    }
  | { kind: "error"; message: string; hint: string };

function isAnswer(value: unknown): value is ModelExportAnswer {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  if (v.kind === "error") return typeof v.message === "string" && typeof v.hint === "string";
  return (
    v.kind === "ok" &&
    typeof v.path === "string" &&
    typeof v.size_bytes === "number" &&
    Array.isArray(v.files) &&
    typeof v.step === "number" &&
    (v.checkpoint_kind === "full" || v.checkpoint_kind === "lora") &&
    MODEL_EXPORT_FORMATS.includes(v.format as ModelExportFormat)
  );
}

/** The last stdout line that parses as an answer (libraries may print before it). */
export function parseExportAnswer(stdout: string): ModelExportAnswer | undefined {
  for (const line of stdout.trim().split("\n").reverse()) {
    try {
      const parsed: unknown = JSON.parse(line);
      if (isAnswer(parsed)) return parsed;
    } catch {
      // Not our line.
    }
  }
  return undefined;
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KB", "MB", "GB", "TB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

const HOW_TO_LOAD: Record<ModelExportFormat, (path: string) => string> = {
  adapter: (p) => `peft: PeftModel.from_pretrained(base_model, ${JSON.stringify(p)})`,
  merged: (p) => `transformers: AutoModelForCausalLM.from_pretrained(${JSON.stringify(p)})`,
  onnx: (p) =>
    `transformers.js: AutoModelForCausalLM.from_pretrained(${JSON.stringify(p)}, { local_files_only: true })`,
};

export function summary(answer: Extract<ModelExportAnswer, { kind: "ok" }>): string {
  const what = answer.checkpoint_kind === "lora" && answer.format !== "adapter" ? " (LoRA merged)" : "";
  return [
    `${answer.path}`,
    `  format: ${answer.format}, from step-${answer.step}${what} of ${answer.checkpoint}`,
    `  size: ${formatSize(answer.size_bytes)} in ${answer.files.length} files (${answer.files.join(", ")})`,
    ...(answer.check ? [`  checked: ${answer.check}`] : []),
    ...(answer.format === "adapter" && answer.base_model
      ? [`  base model (not copied, the adapter needs it): ${answer.base_model}`]
      : []),
    `  load with ${HOW_TO_LOAD[answer.format](answer.path)}`,
  ].join("\n");
}

function parseFormat(text: string | undefined): ModelExportFormat {
  if (text === undefined)
    throw new UsageError(`--format is required: one of ${MODEL_EXPORT_FORMATS.join(", ")}`);
  if (!MODEL_EXPORT_FORMATS.includes(text as ModelExportFormat))
    throw new UsageError(`unknown --format "${text}" (one of ${MODEL_EXPORT_FORMATS.join(", ")})`);
  return text as ModelExportFormat;
}

function parseCheckpoint(text: string | undefined): string {
  const value = text ?? "latest";
  if (value !== "latest" && !/^(step-)?\d+$/.test(value))
    throw new UsageError(`--checkpoint must be latest, a step number or step-N, got "${value}"`);
  return value;
}

/** A failure found before Python starts: what happened and what to do. */
function runFolderProblem(runDir: string): string | undefined {
  if (!existsSync(runDir) || !statSync(runDir).isDirectory())
    return `${runDir} is not a folder.\nPass the run folder that \`fim-rlvr train\` printed.`;
  if (!existsSync(join(runDir, "checkpoints")))
    return (
      `${runDir} is not a training run folder (it has no checkpoints/ folder).\n` +
      "Pass the run folder that `fim-rlvr train` printed (it holds metrics.jsonl and checkpoints/)."
    );
  return undefined;
}

function trainerPython(
  given: string | undefined,
  trainerRoot: string,
): { python: string } | { error: string } {
  if (given) {
    const checked = checkGivenPython(given);
    return checked.kind === "ok"
      ? { python: checked.python }
      : { error: `${checked.message}\n${checked.hint}` };
  }
  const managed = join(managedVenvDir(trainerRoot), "bin", "python");
  if (existsSync(managed)) return { python: managed };
  return {
    error:
      "no trainer Python yet. Pass --python PATH (an interpreter with the trainer's dependencies, e.g. after\n" +
      `\`pip install -e '${trainerRoot}[onnx]'\`), or run \`fim-rlvr train\` once: it creates the managed environment in\n` +
      `${managedVenvDir(trainerRoot)}.`,
  };
}

/**
 * Runs the exporter with stderr passed through (its progress) and stdout collected (its answer). Ctrl-C (or
 * SIGTERM) is passed on as SIGINT, on which the exporter removes its temporary folder and exits; the command
 * then exits 130.
 */
function runExporter(
  python: string,
  args: string[],
  trainerRoot: string,
): Promise<{ code: number | null; interrupted: boolean; stdout: string; error?: string }> {
  return new Promise((done) => {
    const child = spawn(python, ["-m", "fim_rlvr.model.export", ...args], {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, PYTHONPATH: [trainerRoot, process.env.PYTHONPATH].filter(Boolean).join(":") },
    });
    let stdout = "";
    let interrupted = false;
    const onSignal = () => {
      if (interrupted) process.exit(130);
      interrupted = true;
      child.kill("SIGINT");
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    const finish = (result: { code: number | null; error?: string }) => {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
      done({ ...result, interrupted, stdout });
    };
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.once("error", (error) => finish({ code: null, error: error.message }));
    child.once("close", (code) => finish({ code }));
  });
}

export const exportModelCommand: CliCommand = {
  name: "export-model",
  summary: "Export a run's checkpoint: LoRA adapter, merged model, or ONNX for transformers.js",
  synopsis: "RUN_DIR --format FORMAT [--out DIR] [--checkpoint STEP|latest] [--force]",
  description: [
    "Exports the policy of a training run's checkpoint (the newest one unless --checkpoint says otherwise) in",
    "one FORMAT:",
    "  adapter  the LoRA adapter as peft saved it, with the tokenizer (LoRA runs only);",
    "  merged   a transformers model folder (safetensors, tokenizer), the adapter merged into its base;",
    "  onnx     the merged model in fp32 as @huggingface/transformers (transformers.js) loads it: config.json,",
    "           tokenizer.json, tokenizer_config.json, generation_config.json and onnx/model.onnx (with the",
    "           KV cache), checked against PyTorch with onnxruntime when it is installed.",
    "The folder is written beside its destination and renamed into place when complete; an existing one is",
    "replaced only with --force. Progress goes to stderr, the summary (path, format, size) to stdout.",
    "Runs the trainer's Python (--python, or the managed environment `fim-rlvr train` creates); onnx needs",
    "the onnx extra: pip install 'onnx>=1.16' 'onnxscript>=0.1' 'onnxruntime>=1.20'. Exit codes: 0 exported,",
    "1 failed (the message says why and what to do), 2 bad usage, 130 interrupted (nothing is left behind).",
  ].join("\n"),
  positionals: {
    name: "RUN_DIR",
    help: "A run folder written by `fim-rlvr train` (it holds checkpoints/).",
    max: 1,
  },
  options: {
    format: {
      type: "string",
      value: "FORMAT",
      help: "What to export (required): adapter, merged or onnx.",
    },
    out: {
      type: "string",
      value: "DIR",
      help: "The folder to write.",
      default: "RUN_DIR/exports/step-N-FORMAT",
    },
    checkpoint: {
      type: "string",
      value: "STEP|latest",
      help: "Which checkpoint: a step number (or step-N), or latest.",
      default: "latest",
    },
    force: { type: "boolean", help: "Replace the output folder if it exists." },
    python: {
      type: "string",
      value: "PATH",
      help: "Python interpreter with the trainer's dependencies.",
      default: "the managed venv",
    },
    "base-model": {
      type: "string",
      value: "DIR",
      help: "The base model folder of a LoRA checkpoint whose base_model/ is missing and whose adapter names a model that is not a local folder.",
      advanced: true,
    },
    json: { type: "boolean", help: "Print the exporter's JSON answer instead of the summary." },
  },
  examples: [
    "fim-rlvr export-model runs/2026-01-01T00-00-00 --format onnx",
    "fim-rlvr export-model runs/2026-01-01T00-00-00 --format merged --checkpoint 200 --out merged-200",
    "fim-rlvr export-model runs/2026-01-01T00-00-00 --format adapter --python trainer/.venv/bin/python",
  ],
  async run({ values, positionals }) {
    const given = positionals[0];
    if (given === undefined)
      throw new UsageError("RUN_DIR is required (the folder `fim-rlvr train` printed)");
    const format = parseFormat(stringOption(values, "format"));
    const checkpoint = parseCheckpoint(stringOption(values, "checkpoint"));
    const runDir = resolve(given);
    const fail = (message: string): number => {
      process.stderr.write(`fim-rlvr export-model: ${message}\n`);
      return 1;
    };
    requireExisting(given, "the run folder that `fim-rlvr train` printed (it holds checkpoints/)");
    // An existing folder that is no run folder is bad usage too, as a dataset folder without tasks.jsonl is to filter.
    const problem = runFolderProblem(runDir);
    if (problem) throw new UsageError(problem);
    const trainerRoot = defaultTrainerRoot();
    const found = trainerPython(stringOption(values, "python"), trainerRoot);
    if ("error" in found) return fail(found.error);
    const out = stringOption(values, "out");
    const base = stringOption(values, "base-model");
    const args = [
      runDir,
      "--format",
      format,
      "--checkpoint",
      checkpoint,
      ...(out ? ["--out", resolve(out)] : []),
      ...(base ? ["--base-model", resolve(base)] : []),
      ...(flagOption(values, "force") ? ["--force"] : []),
    ];
    const ran = await runExporter(found.python, args, trainerRoot);
    if (ran.interrupted) return 130;
    const answer = parseExportAnswer(ran.stdout);
    if (!answer)
      return fail(
        `running ${found.python} -m fim_rlvr.model.export failed (${ran.error ?? `exit code ${ran.code}`}) ` +
          "without an answer; its output is above.\n" +
          "If it says a module is missing, install the trainer's dependencies into that Python " +
          `(pip install -e '${trainerRoot}[onnx]') or pass another one with --python.`,
      );
    if (answer.kind === "error") return fail(`${answer.message}\n${answer.hint}`);
    process.stdout.write(flagOption(values, "json") ? JSON.stringify(answer) + "\n" : summary(answer) + "\n");
    return 0;
  },
};
