/**
 * What a run folder already recorded (metrics.jsonl, samples.jsonl, eval.json, config.json), read back for the
 * dashboard when a run is resumed (its steps stay on screen whether the resumed trainer starts or fails) and
 * after a window reload (the last run as it ended). Pure over the files' text; a torn or foreign line is
 * skipped, never thrown; keys the reader does not use (validation records, prompt_style_resolved) are ignored.
 */
import type { VerdictKind } from "../../lean-bridge/protocol/trainer";
import { VERDICT_RANK } from "./holeStore";
import type { DashboardMessage, EvalStage, RecordedSample, RecordedStep, StageEval } from "./dashboardModel";

export interface RunHistory {
  steps: RecordedStep[];
  samples: RecordedSample[];
  totalSteps: number;
  evals: Partial<Record<EvalStage, StageEval>>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** metrics.jsonl: one object per step; its numeric fields are the metrics. */
export function recordedSteps(metricsJsonl: string): RecordedStep[] {
  const steps: RecordedStep[] = [];
  for (const line of metricsJsonl.split("\n")) {
    const row = line.trim() ? parse(line) : undefined;
    if (!isObject(row) || typeof row.step !== "number" || !Number.isInteger(row.step)) continue;
    const metrics: Record<string, number> = {};
    for (const [key, value] of Object.entries(row))
      if (key !== "step" && typeof value === "number" && Number.isFinite(value)) metrics[key] = value;
    steps.push({ step: row.step, metrics });
  }
  return steps;
}

/** samples.jsonl: `{step, kind, verdict, ...}` per verified sample. */
export function recordedSamples(samplesJsonl: string): RecordedSample[] {
  const samples: RecordedSample[] = [];
  for (const line of samplesJsonl.split("\n")) {
    const row = line.trim() ? parse(line) : undefined;
    if (
      isObject(row) &&
      typeof row.step === "number" &&
      typeof row.kind === "string" &&
      VERDICT_RANK.includes(row.verdict as VerdictKind)
    )
      samples.push({ step: row.step, kind: row.kind, verdict: row.verdict as VerdictKind });
  }
  return samples;
}

/** eval.json: `{before|sft|after: {pass_at_1, tasks, ...}}` as the trainer writes it. */
export function recordedEvals(evalJson: string | undefined): Partial<Record<EvalStage, StageEval>> {
  const data = evalJson === undefined ? undefined : parse(evalJson);
  const evals: Partial<Record<EvalStage, StageEval>> = {};
  if (!isObject(data)) return evals;
  for (const stage of ["before", "sft", "after"] as const) {
    const entry = data[stage];
    if (isObject(entry) && typeof entry.pass_at_1 === "number")
      evals[stage] = {
        passAt1: entry.pass_at_1,
        tasks: typeof entry.tasks === "number" ? entry.tasks : 0,
      };
  }
  return evals;
}

/**
 * `resuming`: the run is about to continue, and its "after" evaluation (if any, from an earlier end) will be
 * measured again, so it is left out; a run shown as it ended (after a window reload) keeps it.
 */
export function runHistory(
  files: {
    metrics: string | undefined;
    samples?: string | undefined;
    evals: string | undefined;
    config: string | undefined;
  },
  resuming = true,
): RunHistory {
  const steps = recordedSteps(files.metrics ?? "");
  const config = files.config === undefined ? undefined : parse(files.config);
  const configured = isObject(config) && typeof config.steps === "number" ? config.steps : 0;
  const evals = recordedEvals(files.evals);
  // The trainer measures "after" again at the end of a resumed run (train.py drops the old one).
  if (resuming) delete evals.after;
  return {
    steps,
    samples: recordedSamples(files.samples ?? ""),
    totalSteps: Math.max(configured, steps.at(-1)?.step ?? 0),
    evals,
  };
}

/** What the workspace remembers of its last run, as the dashboard names it. */
export interface RememberedDashboardRun {
  runDir: string;
  /** The verifier's label ("simulator (not Lean)"). */
  verifier: string;
  /** Empty when the workspace did not record it: config.json's is used then. */
  algorithm: string;
  reward: "binary" | "partial";
  /** How it ended, when a window saw it end; otherwise it is shown as stopped. */
  outcome?: "completed" | "stopped" | "failed" | undefined;
}

/**
 * The dashboard's messages for a run shown as it ended, after a window reload: its recorded steps, samples and
 * evaluations (its "after" one kept), then how it ended.
 */
export function restoredRunMessages(
  run: RememberedDashboardRun,
  files: Parameters<typeof runHistory>[0],
): DashboardMessage[] {
  const config = files.config === undefined ? undefined : parse(files.config);
  const configured = isObject(config) && typeof config.algorithm === "string" ? config.algorithm : "";
  return [
    {
      type: "reset",
      runDir: run.runDir,
      verifier: run.verifier,
      algorithm: run.algorithm || configured,
      reward: run.reward,
      history: runHistory(files, false),
    },
    { type: "status", status: run.outcome ?? "stopped" },
  ];
}
