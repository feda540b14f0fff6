/**
 * One evaluation from start to end, shared by `fim-rlvr eval` and the editor: the dataset and its project, the
 * model, the verifier pool, the loop, then summary.json and report.html (written atomically, also when stopped).
 * `--resume` keeps the whole tasks of results.jsonl and runs the others, refusing results written with other
 * settings.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  formatModelSpec,
  type BackendOptions,
  type ModelSpec,
  type PromptOptions,
  type SamplingSettings,
} from "../models/backend";
import { prepareTarget } from "../train/dataset";
import { writeFileAtomic } from "../util/atomicWrite";
import type { Verifier } from "../verify/verifier";
import { datasetIdentity, referenceLookup, selectTasks, type SplitChoice } from "./evalTasks";
import { openModel } from "./openModel";
import { EvalProgress } from "./progress";
import type { EvalIdentity, EvalSummary, ResultLine } from "./records";
import { evalReportHtml } from "./report";
import { compactResults, countLines, readResults, resumeMismatch } from "./resultsFile";
import { runEvalLoop } from "./runEval";
import { summarise } from "./summary";

/**
 * Whether prompts show the goal at the hole. `auto` is the trainer's own default (`goal_in_prompt: null`): shown
 * when the tasks carry a goal, as a real-Lean dataset's do, so a model trained by `fim-rlvr train` is asked the
 * way it was trained.
 */
export type GoalInPrompt = "yes" | "no" | "auto";
export const GOAL_IN_PROMPT: readonly GoalInPrompt[] = ["yes", "no", "auto"];

/** The model's options, but for whether the goal is shown: that is decided from the tasks (`goalInPrompt`). */
export type EvalBackendOptions = Omit<BackendOptions, "prompt"> & { prompt: Omit<PromptOptions, "showGoal"> };

export interface EvalSettings {
  dataset: string;
  out: string;
  spec: ModelSpec;
  backend: EvalBackendOptions;
  goalInPrompt: GoalInPrompt;
  n: number;
  ks: number[];
  sampling: Omit<SamplingSettings, "seed">;
  seed: number;
  repair: number;
  split: SplitChoice;
  kinds: string[];
  resume: boolean;
  /** Tasks worked on at once (and verifier slots). */
  workers: number;
  retries: number;
  /** Only the first N selected tasks (0: all). */
  limit: number;
  verifier: "lean" | "simulator";
  startPool(
    projectRoot: string,
    slots: number,
  ): Promise<{ kind: "ok"; pool: Verifier } | { kind: "error"; message: string }>;
  signal: AbortSignal;
  /** Progress and notes (stderr in the CLI, the progress notification in the editor). */
  log(line: string): void;
}

export type EvalOutcome =
  | { kind: "done"; summary: EvalSummary; dir: string }
  | { kind: "aborted"; summary: EvalSummary | undefined; dir: string }
  | { kind: "error"; message: string; hint: string; summary?: EvalSummary };

export const RESULTS = "results.jsonl";
export const SUMMARY = "summary.json";
export const REPORT = "report.html";

export async function evaluate(settings: EvalSettings): Promise<EvalOutcome> {
  const started = performance.now();
  const dir = resolve(settings.out);
  const resultsPath = join(dir, RESULTS);
  if (existsSync(resultsPath) && !settings.resume)
    return {
      kind: "error",
      message: `${dir} already holds results (${RESULTS})`,
      hint: "Pass --resume to continue that evaluation, or choose another --out.",
    };
  mkdirSync(dir, { recursive: true });
  const target = await prepareTarget(settings.dataset, dir, {
    resume: true,
    verifier: settings.verifier,
    signal: settings.signal,
  });
  if (target.kind === "error") return target;
  const { dataset, projectRoot } = target;
  let tasks = selectTasks(dataset, settings.split, settings.kinds);
  if (settings.limit > 0) tasks = tasks.slice(0, settings.limit);
  if (tasks.length === 0)
    return {
      kind: "error",
      message: `the dataset ${dataset.dir} has no ${settings.split === "all" ? "" : settings.split + " "}tasks of the kinds ${settings.kinds.join(", ")}`,
      hint: "Choose another --split (train, validation, test or all) or --kinds.",
    };

  const showGoal =
    settings.goalInPrompt === "auto"
      ? tasks.some((t) => t.parts.goal !== undefined)
      : settings.goalInPrompt === "yes";
  const backendOptions: BackendOptions = {
    ...settings.backend,
    prompt: { ...settings.backend.prompt, showGoal },
  };
  const opened = await openModel(settings.spec, backendOptions, referenceLookup(tasks), settings.signal);
  if (opened.kind === "error") return opened;
  const backend = opened.backend;
  const poolStart = await settings.startPool(projectRoot, settings.workers);
  if (poolStart.kind === "error") {
    await backend.close();
    return {
      kind: "error",
      message: poolStart.message,
      hint: "Check the verifier options (--simulator for a dry run).",
    };
  }
  const pool = poolStart.pool;
  try {
    const run: EvalIdentity = {
      model: {
        spec: formatModelSpec(settings.spec),
        backend: backend.identity.backend,
        name: backend.identity.model,
        ...(backend.identity.digest ? { digest: backend.identity.digest } : {}),
      },
      prompt: {
        style: backend.identity.promptStyle,
        asked: settings.backend.prompt.style,
        showGoal,
        maxPromptTokens: settings.backend.prompt.maxPromptTokens,
      },
      sampling: { n: settings.n, ...settings.sampling },
      seed: settings.seed,
      repair: settings.repair,
      verifier: pool.identity,
      dataset: datasetIdentity(dataset),
      selection: { split: settings.split, kinds: [...settings.kinds] },
    };
    const onDisk = countLines(resultsPath);
    const previous = readResults(resultsPath, settings.n);
    const recorded = previous.lines[0]?.run;
    if (recorded) {
      const differ = resumeMismatch(recorded, run);
      if (differ)
        return {
          kind: "error",
          message: `${resultsPath} was written with other settings (${differ} differ)`,
          hint: "Resume with the options it was started with, or evaluate into another --out.",
        };
    }
    compactResults(resultsPath, previous, onDisk);
    if (previous.torn) settings.log(`eval: dropped ${previous.torn} torn line(s) at the end of ${RESULTS}`);
    const todo = tasks.filter((t) => !previous.complete.has(t.id));
    const wanted = new Set(tasks.map((t) => t.id));
    const lines: ResultLine[] = previous.lines.filter((l) => wanted.has(l.task_id));
    if (settings.resume && lines.length)
      settings.log(`eval: resuming, ${tasks.length - todo.length} of ${tasks.length} tasks already done`);
    settings.log(
      `eval: ${todo.length} task(s) × ${settings.n} sample(s) from ${run.model.spec} (prompt ${run.prompt.style}), verified by ${pool.identity.label}`,
    );
    const progress = new EvalProgress(tasks.length, tasks.length - todo.length, settings.log);
    const result = await runEvalLoop({
      backend,
      verify: (task, candidate) =>
        pool.verify({ file: task.file, hole: task.range, text: dataset.files.get(task.file) }, candidate),
      tasks: todo,
      n: settings.n,
      sampling: settings.sampling,
      run,
      resultsPath,
      concurrency: settings.workers,
      retries: settings.retries,
      signal: settings.signal,
      onTaskDone: (done) => {
        lines.push(...done);
        progress.taskDone(done);
      },
    });
    const summary = summarise(lines, {
      run,
      ks: settings.ks,
      selected: tasks.length,
      partial: result.kind !== "done",
      wallSeconds: (performance.now() - started) / 1000,
    });
    writeFileAtomic(join(dir, SUMMARY), JSON.stringify(summary, null, 2) + "\n");
    writeFileAtomic(
      join(dir, REPORT),
      evalReportHtml([{ name: dataset.dir === dir ? "eval" : baseName(dir), summary }], lines),
    );
    if (result.kind === "backend-failed")
      return {
        kind: "error",
        message: `the model failed (${result.cause}): ${result.message}`,
        hint: result.hint,
        summary,
      };
    return result.kind === "aborted" ? { kind: "aborted", summary, dir } : { kind: "done", summary, dir };
  } finally {
    await backend.close();
    await pool.stop();
  }
}

function baseName(path: string): string {
  return path.split(/[\\/]/).filter(Boolean).pop() ?? path;
}
