/**
 * `fim-rlvr filter DATASET --model … -n 8 --keep 0.1-0.9` (a public interface, as README.md documents it; the
 * step is miles' "data filter + RL"): samples the base model n times on every task of DATASET, verifies each
 * sample, and writes a new dataset of the tasks whose pass rate lies in the band (both ends included), with
 * report.json (kept and dropped, and why), pass_rates.jsonl and the samples. Sampling and verification are
 * `eval`'s (evalSettings, evaluate): the same model options, the same verifier options. Exit codes: 0
 * written, 1 failed (the message says what to do), 2 bad usage, 130 interrupted (the samples so far are kept;
 * the same command continues).
 */
import { resolve } from "node:path";
import { isDatasetDir } from "../train/dataset";
import { formatBand, parseKeepBand } from "../filter/band";
import { runFilter } from "../filter/runFilter";
import { type CliCommand, type OptionDefs, type ParsedArgs, stringOption } from "./command";
import { evalCommand, evalSettings } from "./evalCommand";
import { UsageError } from "./usage";

/** eval's model, sampling and verifier options; eval's own output, resume and comparison options are not filter's. */
const SHARED = Object.fromEntries(
  Object.entries(evalCommand.options).filter(
    ([name]) => !["out", "resume", "compare", "pass-at", "repair", "split", "project"].includes(name),
  ),
);

const FILTER_OPTIONS = {
  keep: {
    type: "string",
    value: "LOW-HIGH",
    help: "Keep tasks whose pass rate (proved samples / samples) lies in this band, both ends included.",
    default: "0.1-0.9",
  },
  out: {
    type: "string",
    value: "DATASET_DIR",
    help: "Where the filtered dataset goes (replaced atomically if it is a dataset).",
    default: "DATASET-filtered",
  },
  split: {
    type: "string",
    value: "train|validation|test|all",
    help: "Which tasks are sampled (the others are left out of the new dataset).",
    default: "all",
  },
  ...SHARED,
} as const satisfies OptionDefs;

async function run(args: ParsedArgs): Promise<number> {
  const { values, positionals } = args;
  if (positionals.length !== 1)
    throw new UsageError("give one DATASET (a folder written by `fim-rlvr export` or `fim-rlvr import`)");
  const dataset = positionals[0]!;
  if (!isDatasetDir(resolve(dataset)))
    throw new UsageError(
      `${dataset} is not a dataset folder (no tasks.jsonl): export a workspace or import a statement file first`,
    );
  const band = parseKeepBand(stringOption(values, "keep") ?? "0.1-0.9");
  if (band.kind === "error") throw new UsageError(band.message);
  const out = stringOption(values, "out") ?? `${resolve(dataset)}-filtered`;
  const controller = new AbortController();
  // Parsed before the handler is installed: a usage error must not leave it behind.
  const settings = evalSettings(
    {
      values: { ...values, out, split: stringOption(values, "split") ?? "all", "pass-at": "1" },
      positionals,
    },
    controller.signal,
  );
  let interrupts = 0;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (++interrupts > 1) process.exit(130);
    process.stderr.write(
      `\nfilter: ${signal === "SIGINT" ? "interrupted" : "terminated"}; keeping the samples done so far (Ctrl-C again to quit at once)\n`,
    );
    controller.abort();
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    const outcome = await runFilter({
      eval: { ...settings, log: (line) => process.stderr.write(line.replace(/^eval:/, "filter:") + "\n") },
      out,
      band: band.band,
    });
    if (outcome.kind === "error") {
      process.stderr.write(`fim-rlvr filter: ${outcome.message}\n${outcome.hint ? outcome.hint + "\n" : ""}`);
      return 1;
    }
    if (outcome.kind === "aborted") {
      process.stderr.write(
        `filter: stopped; no dataset was written. The samples so far are in ${outcome.workDir}: run the same command to continue.\n`,
      );
      return 130;
    }
    const t = outcome.report.tasks;
    process.stdout.write(
      `filter: kept ${t.kept} of ${t.evaluated} tasks with a pass rate in ${formatBand(band.band)} ` +
        `(dropped ${t.dropped["too-easy"]} too easy, ${t.dropped["too-hard"]} too hard, ${t.dropped.unmeasured} unmeasured` +
        `${t.notSelected ? `; ${t.notSelected} not selected` : ""})\n` +
        `  sampled ${outcome.report.sampling.n}x from ${outcome.report.model.spec}, verified by ${outcome.report.verifier}\n` +
        `  dataset: ${outcome.out} (per-task pass rates in pass_rates.jsonl, the card in README.md)\n`,
    );
    return 0;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

export const filterCommand: CliCommand = {
  name: "filter",
  summary: "Keep the tasks a model sometimes proves: sample it, verify, filter by pass rate",
  synopsis:
    'DATASET --model openai:URL#MODEL|onnx:DIR|hf:PATH [-n 8] [--keep 0.1-0.9] [--simulator|--server "CMD"|--verifier kimina:URL] [--out DATASET_DIR]',
  description:
    "Samples n candidates per task of DATASET from the model (prompts built as in training, as `fim-rlvr eval` " +
    "does), verifies each, and writes a new dataset of the tasks whose pass rate (proved samples over samples; " +
    "infrastructure failures left out) lies in the --keep band, both ends included. The new dataset has the " +
    "layout of `export` and `import` (tasks.jsonl, files.jsonl, contexts.jsonl, report.json, README.md) plus " +
    "pass_rates.jsonl (every evaluated task's rate, kept or dropped and why) and filter/ (the samples, their " +
    "summary and report.html). It is written in one swap: nothing is written until every task is sampled. " +
    "Ctrl-C keeps the samples so far (whole tasks) beside --out; the same command continues from there. The API " +
    "key of an endpoint is read from OPENAI_API_KEY. Exit codes: 0 written, 1 failed, 2 bad usage, 130 interrupted.",
  positionals: {
    name: "DATASET",
    help: "A folder written by `fim-rlvr export` or `fim-rlvr import`.",
    max: 1,
  },
  options: FILTER_OPTIONS,
  examples: [
    "fim-rlvr filter out/minif2f --model openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-Coder-1.5B -n 8 --keep 0.1-0.9",
    "fim-rlvr filter out/dataset --model onnx:runs/run-1/export-onnx --simulator -n 4 --keep 0.25-0.75 --out out/filtered",
  ],
  run,
};
