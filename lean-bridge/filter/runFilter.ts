/**
 * `fim-rlvr filter` from start to end: the base model is sampled on every selected task through the evaluation
 * path (eval/evaluate.ts: the same prompts, sampling, verification, retries and results.jsonl, in a work folder
 * beside the output), then each task's pass rate decides whether it is kept, and the new dataset is written in
 * one swap. Ctrl-C leaves the work folder (whole tasks only): the same command continues where it stopped.
 */
import { existsSync, rmSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { evaluate, RESULTS, type EvalSettings } from "../eval/evaluate";
import { countLines, readResults } from "../eval/resultsFile";
import type { KeepBand } from "./band";
import { rateHistogram, taskRates, type TaskRate } from "./passRates";
import type { FilterReport } from "./report";
import { writeFilteredDataset } from "./writeFiltered";

export interface FilterSettings {
  /** The evaluation that samples the model; its `dataset` is the source, its `out` is ignored (workDir is used). */
  eval: Omit<EvalSettings, "out" | "resume">;
  /** Where the filtered dataset goes. */
  out: string;
  band: KeepBand;
}

export type FilterOutcome =
  | { kind: "done"; out: string; report: FilterReport; rates: TaskRate[] }
  | { kind: "aborted"; workDir: string }
  | { kind: "error"; message: string; hint: string };

/** The work folder of a filter into `out`: its samples, kept until the dataset is written. */
export function filterWorkDir(out: string): string {
  const target = resolve(out);
  return join(dirname(target), `.${basename(target)}.filter-samples`);
}

export async function runFilter(settings: FilterSettings): Promise<FilterOutcome> {
  const started = performance.now();
  const source = resolve(settings.eval.dataset);
  const out = resolve(settings.out);
  if (out === source)
    return {
      kind: "error",
      message: "--out is the source dataset",
      hint: "Write the filtered dataset to another folder (--out DIR).",
    };
  const workDir = filterWorkDir(out);
  const resuming = existsSync(join(workDir, RESULTS));
  if (resuming) settings.eval.log(`filter: continuing the sampling saved in ${workDir}`);
  const evaluated = await evaluate({ ...settings.eval, out: workDir, resume: true });
  if (evaluated.kind === "error")
    return {
      kind: "error",
      message: evaluated.message,
      hint: /other settings/.test(evaluated.message)
        ? `Run filter with the options it was started with, or delete ${workDir} to sample again.`
        : evaluated.hint,
    };
  if (evaluated.kind === "aborted") return { kind: "aborted", workDir };
  const run = evaluated.summary.run;
  const results = readResults(join(workDir, RESULTS), run.sampling.n);
  const rates = taskRates(results.lines, settings.band);
  const kept = rates.filter((r) => r.kept).length;
  const dropped = { "too-easy": 0, "too-hard": 0, unmeasured: 0 };
  for (const r of rates) if (r.reason) dropped[r.reason]++;
  const sourceTasks = countLines(join(source, "tasks.jsonl"));
  const report: FilterReport = {
    source,
    sourceSha256: run.dataset.sha256,
    model: { spec: run.model.spec, backend: run.model.backend, name: run.model.name },
    sampling: { ...run.sampling, seed: run.seed },
    verifier: run.verifier.label,
    keep: settings.band,
    selection: run.selection,
    tasks: {
      source: sourceTasks,
      notSelected: sourceTasks - rates.length,
      evaluated: rates.length,
      kept,
      dropped,
    },
    histogram: rateHistogram(rates),
    timeMs: Math.round(performance.now() - started),
  };
  if (kept === 0)
    return {
      kind: "error",
      message: `no task's pass rate lies in ${settings.band.low}-${settings.band.high} (${dropped["too-easy"]} too easy, ${dropped["too-hard"]} too hard, ${dropped.unmeasured} unmeasured); nothing was written`,
      hint: `The samples are kept in ${workDir}: run again with a wider --keep to reuse them.`,
    };
  const written = writeFilteredDataset({ source, out, evalDir: workDir, rates, report });
  if (written.kind === "error")
    return { kind: "error", message: written.message, hint: `The samples are kept in ${workDir}.` };
  rmSync(workDir, { recursive: true, force: true });
  return { kind: "done", out, report, rates };
}
