/**
 * `fim-rlvr eval DATASET_DIR --model openai:URL#MODEL|onnx:DIR|hf:PATH … --out EVAL_DIR` (a public interface,
 * spelled as README.md documents it): samples n candidates per task, verifies each, and writes
 * EVAL_DIR/results.jsonl, summary.json and report.html with unbiased pass@k. `fim-rlvr eval --compare A B
 * [--out FILE]` sets two or more evaluations side by side. Exit codes: 0 done, 1 failed (the model or the
 * dataset; the message says what to do), 2 bad usage, 130 interrupted (what was done is written; --resume
 * continues).
 */
import { resolve } from "node:path";
import { HOLE_KINDS } from "../holes/mine";
import {
  PROMPT_STYLE_NAMES,
  parseModelSpec,
  FIM_FAMILIES,
  type FimFamily,
  type PromptStyleName,
} from "../models/backend";
import { GOAL_IN_PROMPT, evaluate, type EvalSettings } from "../eval/evaluate";
import { SPLITS, type SplitChoice } from "../eval/evalTasks";
import { parseKs } from "../eval/passAtK";
import { summaryText } from "../eval/summaryText";
import { folderTargetProblem } from "../train/dataset";
import { discardUnstarted, givenRunFolder } from "../train/runFolder";
import { type CliCommand, flagOption, stringOption, type ParsedArgs } from "./command";
import { compareEvaluations } from "./evalCompare";
import { statementTarget } from "./importCommand";
import { SERVER_OPTIONS, chooseVerifier, openPool } from "./pool";
import { UsageError, parseCount, requireExisting } from "./usage";

function number(name: string, text: string | undefined, fallback: number, min: number, max: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < min || value > max)
    throw new UsageError(`${name} must be a number from ${min} to ${max}, got "${text}"`);
  return value;
}

const FIM_ROUTES = ["prompt", "suffix", "infill", "codestral", "probe"] as const;

function atLeastOne(name: string, text: string | undefined, fallback: number): number {
  return parseCount(name, text, fallback, 1);
}

function oneOf<T extends string>(
  name: string,
  text: string | undefined,
  choices: readonly T[],
  fallback: T,
): T {
  if (text === undefined) return fallback;
  if (!choices.includes(text as T))
    throw new UsageError(`${name} must be one of ${choices.join(", ")}, got "${text}"`);
  return text as T;
}

function kindsOption(text: string | undefined): string[] {
  if (text === undefined) return [...HOLE_KINDS];
  const kinds = text
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  const unknown = kinds.filter((k) => !HOLE_KINDS.includes(k as (typeof HOLE_KINDS)[number]));
  if (unknown.length || kinds.length === 0)
    throw new UsageError(
      `--kinds takes hole kinds separated by commas (${HOLE_KINDS.join(", ")}), got "${text}"`,
    );
  return kinds;
}

/** The settings of one evaluation from the command line (every check a user can fail is a usage error). */
export function evalSettings(args: ParsedArgs, signal: AbortSignal): EvalSettings {
  const { values, positionals } = args;
  if (positionals.length !== 1)
    throw new UsageError(
      "give one DATASET_DIR (a folder written by `fim-rlvr export` or `import`), or a statement FILE with --project DIR",
    );
  const targets =
    "a dataset folder written by `fim-rlvr export` or `import`, or a statement file (JSONL/Parquet) with --project";
  requireExisting(positionals[0]!, targets);
  const wrongFolder = folderTargetProblem(positionals[0]!);
  if (wrongFolder !== undefined) throw new UsageError(`${wrongFolder}; give ${targets}`);
  const modelText = stringOption(values, "model");
  if (!modelText) throw new UsageError("--model is required: openai:URL#MODEL, onnx:DIR or hf:PATH");
  const spec = parseModelSpec(modelText);
  if (spec.kind === "error") throw new UsageError(spec.message);
  const out = stringOption(values, "out");
  if (!out)
    throw new UsageError("--out EVAL_DIR is required: where results.jsonl, summary.json and report.html go");
  const n = atLeastOne("-n", stringOption(values, "samples"), 8);
  const ks = parseKs(stringOption(values, "pass-at") ?? ([1, 8, 32].filter((k) => k <= n).join(",") || "1"));
  if (ks.kind === "error") throw new UsageError(ks.message);
  const tooBig = ks.ks.filter((k) => k > n);
  if (tooBig.length)
    throw new UsageError(
      `pass@k needs n >= k: -n ${n} is fewer than k = ${tooBig.join(", ")} (raise -n or lower -k)`,
    );
  const style = oneOf<PromptStyleName>(
    "--prompt-style",
    stringOption(values, "prompt-style"),
    PROMPT_STYLE_NAMES,
    "auto",
  );
  const fimFamily = stringOption(values, "fim-family");
  const goalInPrompt = oneOf(
    "--goal-in-prompt",
    stringOption(values, "goal-in-prompt"),
    GOAL_IN_PROMPT,
    "auto",
  );
  const tokenizer = stringOption(values, "tokenizer");
  const fimRouteText = stringOption(values, "fim-route");
  const fimRoute = fimRouteText ? oneOf("--fim-route", fimRouteText, FIM_ROUTES, "prompt") : undefined;
  const workers = parseCount("--workers", stringOption(values, "workers"), 2, 1);
  return {
    dataset: positionals[0]!,
    out,
    spec: spec.spec,
    goalInPrompt,
    backend: {
      prompt: {
        style,
        maxPromptTokens: parseCount("--max-prompt-tokens", stringOption(values, "max-prompt-tokens"), 256),
        ...(fimFamily
          ? { fimFamily: oneOf<FimFamily>("--fim-family", fimFamily, FIM_FAMILIES, "qwen") }
          : {}),
      },
      ...(process.env.OPENAI_API_KEY ? { apiKey: process.env.OPENAI_API_KEY } : {}),
      ...(tokenizer ? { tokenizerDir: tokenizer } : {}),
      ...(fimRoute ? { fimRoute } : {}),
      ...(stringOption(values, "python") ? { python: stringOption(values, "python")! } : {}),
    },
    n,
    ks: ks.ks,
    sampling: {
      temperature: number("--temperature", stringOption(values, "temperature"), 0.4, 0, 10),
      topP: number("--top-p", stringOption(values, "top-p"), 1, Number.MIN_VALUE, 1),
      maxNewTokens: atLeastOne("--max-new-tokens", stringOption(values, "max-new-tokens"), 48),
    },
    seed: parseCount("--seed", stringOption(values, "seed"), 0),
    repair: parseCount("--repair", stringOption(values, "repair"), 0),
    split: oneOf<SplitChoice>("--split", stringOption(values, "split"), SPLITS, "test"),
    kinds: kindsOption(stringOption(values, "kinds")),
    resume: flagOption(values, "resume"),
    workers: Math.max(1, workers),
    retries: parseCount("--retries", stringOption(values, "retries"), 2),
    limit: parseCount("--limit", stringOption(values, "limit"), 0),
    verifier: chooseVerifier(values, workers, "results").spec.kind === "simulator" ? "simulator" : "lean",
    startPool: async (projectRoot, slots) => {
      try {
        return { kind: "ok", pool: await openPool(projectRoot, values, slots, "results") };
      } catch (error) {
        return { kind: "error", message: error instanceof Error ? error.message : String(error) };
      }
    },
    signal,
    log: (line) => process.stderr.write(line + "\n"),
  };
}

async function run(args: ParsedArgs): Promise<number> {
  if (flagOption(args.values, "compare"))
    return compareEvaluations(args.positionals, stringOption(args.values, "out"));
  const controller = new AbortController();
  // Parse before installing the handler: a usage error must not leave it behind.
  const settings = evalSettings(args, controller.signal);
  // A folder this evaluation makes is removed again if it fails before writing a result, so a failed start
  // leaves no empty EVAL_DIR behind; one that existed before (--resume, an earlier evaluation) is never removed.
  const folder = givenRunFolder(settings.out);
  // A statement file is imported into EVAL_DIR/dataset first (checked by this evaluation's verifier), as train does.
  const target = await statementTarget(
    settings.dataset,
    stringOption(args.values, "project"),
    resolve(settings.out),
    settings.resume,
    chooseVerifier(args.values, settings.workers, "results").spec,
  );
  if (target.kind === "error") {
    discardUnstarted(folder);
    process.stderr.write(`fim-rlvr eval: ${target.message}\n`);
    return 1;
  }
  settings.dataset = target.target;
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (++interrupts > 1) process.exit(130);
    process.stderr.write(
      `\neval: ${signal === "SIGINT" ? "interrupted" : "terminated"}; writing what is done (Ctrl-C again to quit at once)\n`,
    );
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const outcome = await evaluate(settings);
    if (outcome.kind === "error") {
      process.stderr.write(`fim-rlvr eval: ${outcome.message}\n${outcome.hint ? outcome.hint + "\n" : ""}`);
      if (outcome.summary)
        process.stderr.write(`What was done is in ${settings.out} (--resume continues).\n`);
      else discardUnstarted(folder);
      return 1;
    }
    if (outcome.summary) process.stdout.write(summaryText(outcome.summary, outcome.dir) + "\n");
    if (outcome.kind === "aborted") {
      process.stderr.write(
        `eval: stopped; ${outcome.dir} holds what was done. Run the same command with --resume to continue.\n`,
      );
      return 130;
    }
    return 0;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

export const evalCommand: CliCommand = {
  name: "eval",
  summary: "Measure a model: unbiased pass@k of its candidates, verified, per hole kind and file",
  synopsis:
    'DATASET_DIR|FILE --project DIR --model openai:URL#MODEL|onnx:DIR|hf:PATH [-n N] [-k 1,8,32] [--repair R] [--simulator|--server "CMD"] --out EVAL_DIR\n' +
    "       fim-rlvr eval --compare EVAL_A EVAL_B [...] [--out FILE]",
  description:
    "Samples n candidates per task of the dataset's split from the model (prompts built as in training), verifies each " +
    "with Lean (or the simulator, named as such), and writes EVAL_DIR/results.jsonl (every candidate with its verdict and " +
    "outcome: proved, sorry, lean-error, timeout or infrastructure), summary.json (unbiased pass@k overall, per hole kind, " +
    "per file, novel against memorised; the verdict mix; latency p50/p95; tokens) and report.html. Infrastructure " +
    "failures (the model's server, the verifier's own faults, a broken workspace) are retried, then left out of " +
    "pass@k; a model that never answered stops the evaluation (exit 1). A candidate's own timeout is a miss. With --repair R a failed candidate gets up to R more turns with Lean's " +
    "messages in the prompt; pass@k counts the last turn. Ctrl-C writes what is done and exits 130; --resume continues. " +
    "A statement file (JSONL or Parquet) with --project DIR is first imported into EVAL_DIR/dataset as `fim-rlvr import` " +
    "does (the statements checked with `sorry` by this evaluation's verifier). " +
    "The API key of an endpoint is read from OPENAI_API_KEY. Exit codes: 0 done, 1 failed, 2 bad usage, 130 interrupted.",
  positionals: {
    name: "DATASET_DIR",
    help: "A folder written by `fim-rlvr export` or `import`, or a statement file (.jsonl, .parquet) with --project (with --compare: evaluation folders).",
    max: 16,
  },
  options: {
    model: {
      type: "string",
      value: "SPEC",
      help: "openai:URL#MODEL (an OpenAI-compatible endpoint), onnx:DIR (an ONNX export) or hf:PATH (a transformers folder or checkpoint).",
    },
    "prompt-style": {
      type: "string",
      value: "auto|fim|chat|instruction",
      help: "How prompts are written (the trainer's prompt_style).",
      default: "auto",
    },
    samples: { type: "string", short: "n", value: "N", help: "Candidates per task.", default: "8" },
    "pass-at": {
      type: "string",
      short: "k",
      value: "K,K,...",
      help: "The k of pass@k (each at most n).",
      default: "1,8,32 up to n",
    },
    temperature: { type: "string", value: "T", help: "Sampling temperature (0: greedy).", default: "0.4" },
    "top-p": { type: "string", value: "P", help: "Nucleus sampling threshold.", default: "1" },
    "max-new-tokens": { type: "string", value: "M", help: "Longest candidate, in tokens.", default: "48" },
    split: { type: "string", value: "train|validation|test|all", help: "Which tasks.", default: "test" },
    kinds: {
      type: "string",
      value: "KINDS",
      help: `Hole kinds, comma-separated (${HOLE_KINDS.join(", ")}).`,
      default: "all",
    },
    repair: {
      type: "string",
      value: "R",
      help: "Repair turns after a failed candidate, with Lean's messages in the prompt.",
      default: "0",
    },
    seed: {
      type: "string",
      value: "S",
      help: "Seed of the sampling requests (recorded with every result).",
      default: "0",
    },
    out: {
      type: "string",
      value: "EVAL_DIR",
      help: "Where results.jsonl, summary.json and report.html go (with --compare: the HTML file).",
    },
    project: {
      type: "string",
      value: "DIR",
      help: "With a statement file (JSONL/Parquet) as the target: the Lean project it is imported into first (into EVAL_DIR/dataset).",
    },
    resume: {
      type: "boolean",
      help: "Continue the evaluation in EVAL_DIR (same options): only tasks not yet recorded run.",
    },
    compare: {
      type: "boolean",
      help: "Set the evaluations given as arguments side by side (text on stdout; HTML with --out FILE).",
    },
    workers: {
      type: "string",
      value: "K",
      help: "Tasks worked on at once, and verifier slots.",
      default: "2",
    },
    tokenizer: {
      type: "string",
      value: "DIR",
      help: "openai: a folder with the served model's tokenizer files, so prompts are exactly the trainer's.",
    },
    "fim-family": {
      type: "string",
      value: "qwen|starcoder|deepseek|codestral",
      help: "openai without --tokenizer: the FIM tokens the model knows.",
    },
    "fim-route": {
      type: "string",
      value: "prompt|suffix|infill|codestral|probe",
      help: "openai, FIM: the trainer's FIM text as a plain prompt, or the server's native FIM (probe: the first that works).",
      default: "prompt",
    },
    "goal-in-prompt": {
      type: "string",
      value: "yes|no|auto",
      help: "Show the goal at the hole as a Lean comment (when the dataset recorded it); auto: when the tasks carry a goal, as `fim-rlvr train` does.",
      default: "auto",
    },
    "max-prompt-tokens": {
      type: "string",
      value: "N",
      help: "Prefix and suffix are fitted to this many tokens.",
      default: "256",
    },
    python: {
      type: "string",
      value: "PATH",
      help: "hf: the Python with the trainer installed.",
      advanced: true,
    },
    retries: {
      type: "string",
      value: "N",
      help: "Retries of an infrastructure failure before it is recorded apart.",
      default: "2",
      advanced: true,
    },
    limit: {
      type: "string",
      value: "N",
      help: "Only the first N selected tasks.",
      default: "all",
      advanced: true,
    },
    ...SERVER_OPTIONS,
  },
  examples: [
    "fim-rlvr eval out/dataset --model openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-Coder-1.5B -n 8 -k 1,8 --out out/eval-qwen",
    "fim-rlvr eval out/dataset --model onnx:runs/run-1/export-onnx --simulator -n 4 -k 1,4 --repair 1 --out out/eval-onnx",
    "fim-rlvr eval --compare out/eval-qwen out/eval-onnx --out compare.html",
  ],
  run,
};
