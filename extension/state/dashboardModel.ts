/**
 * The training dashboard's data, shared by the extension (which keeps it, so a dashboard opened late
 * replays the whole run) and the webview script (which applies the same messages live). Plain JSON only:
 * it crosses `postMessage`. No `vscode` and no DOM here.
 */
import { isMaskedVerdict, type VerdictCause, type VerdictKind } from "../../lean-bridge/protocol/trainer";

/** The per-step curves, each aligned with `steps` (null where a step did not report the metric). */
export const CURVES = {
  reward: "reward_mean",
  passRate: "pass_rate",
  loss: "loss",
  kl: "kl",
  clipFraction: "clip_fraction",
  tokensPerSecond: "tokens_per_second",
  checksPerSecond: "checks_per_second",
} as const;
export type CurveName = keyof typeof CURVES;

/** Held-out pass@1 at the three stages the trainer measures (train/eval). */
export type EvalStage = "before" | "sft" | "after";
export interface StageEval {
  passAt1: number;
  tasks: number;
}

export interface DashboardState {
  /** "idle" | "starting" | "running" | "stopping" | "completed" | "stopped" | "failed". */
  status: string;
  /** What the run is doing now, in words ("evaluating held-out holes before training", "SFT step 50/60"). */
  phase: string;
  /** The run folder and the verifier label (simulator runs say so). */
  runDir: string;
  verifier: string;
  algorithm: string;
  /** How verdicts become rewards: with "binary" the reward curve can coincide with the pass rate. */
  reward: "binary" | "partial";
  evals: Partial<Record<EvalStage, StageEval>>;
  totalSteps: number;
  steps: number[];
  curves: Record<CurveName, (number | null)[]>;
  /** Pass rate by hole kind, from the samples: for each step in `kindSteps`, [proved, counted] per kind. */
  kindSteps: number[];
  kindCounts: Record<string, [number, number][]>;
  samples: number;
  verifierChecks: number;
  verifierCacheHits: number;
  verifierChecksPerSecond: number | null;
}

/** One step as metrics.jsonl recorded it (the numeric fields; the rest are ignored). */
export interface RecordedStep {
  step: number;
  metrics: Record<string, number>;
}

/** One verified sample as samples.jsonl recorded it. */
export interface RecordedSample {
  step: number;
  kind: string;
  verdict: VerdictKind;
}

export type DashboardMessage =
  | {
      type: "reset";
      runDir: string;
      verifier: string;
      algorithm: string;
      reward: "binary" | "partial";
      /** A resumed run's recorded steps and evaluations, so they stay on screen whatever happens next. */
      history?: {
        steps: RecordedStep[];
        totalSteps: number;
        evals: Partial<Record<EvalStage, StageEval>>;
        /** samples.jsonl's verdicts (for the sample count and pass rate by kind). */
        samples?: RecordedSample[];
      };
    }
  | { type: "status"; status: string }
  | { type: "phase"; phase: string }
  | { type: "eval"; stage: EvalStage; passAt1: number; tasks: number }
  | { type: "progress"; step: number; totalSteps: number; metrics: Record<string, number> }
  | { type: "sample"; step: number; kind: string; verdict: VerdictKind; cause?: VerdictCause }
  | { type: "verifier"; checks: number; cacheHits: number; checksPerSecond: number }
  | { type: "state"; state: DashboardState }
  /** Live messages sent together (state/dashboardOutbox.ts), applied in order. */
  | { type: "batch"; messages: DashboardMessage[] };

/** Webview → extension: the script is ready for the full state. */
export type DashboardRequest = { type: "ready" };

function emptyCurves(): Record<CurveName, (number | null)[]> {
  return {
    reward: [],
    passRate: [],
    loss: [],
    kl: [],
    clipFraction: [],
    tokensPerSecond: [],
    checksPerSecond: [],
  };
}

export function emptyDashboard(): DashboardState {
  return {
    status: "idle",
    phase: "",
    runDir: "",
    verifier: "",
    algorithm: "",
    reward: "binary",
    evals: {},
    totalSteps: 0,
    steps: [],
    curves: emptyCurves(),
    kindSteps: [],
    kindCounts: {},
    samples: 0,
    verifierChecks: 0,
    verifierCacheHits: 0,
    verifierChecksPerSecond: null,
  };
}

function finite(value: number | undefined): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** The index of `step` in a sorted step list, inserting it (and a slot in every aligned array) if new. */
function stepIndex(steps: number[], step: number, aligned: unknown[][]): number {
  const last = steps.length - 1;
  if (last >= 0 && steps[last] === step) return last;
  let at = steps.length;
  while (at > 0 && steps[at - 1]! > step) at--;
  if (at > 0 && steps[at - 1] === step) return at - 1;
  steps.splice(at, 0, step);
  for (const array of aligned) array.splice(at, 0, null);
  return at;
}

/** Applies one message; returns a new state (the input is not changed). */
export function reduceDashboard(state: DashboardState, message: DashboardMessage): DashboardState {
  switch (message.type) {
    case "state":
      return message.state;
    case "batch":
      return message.messages.reduce(reduceDashboard, state);
    case "reset": {
      const fresh: DashboardState = {
        ...emptyDashboard(),
        status: "starting",
        ...pick(message, ["runDir", "verifier", "algorithm", "reward"]),
      };
      const history = message.history;
      if (!history) return fresh;
      const recorded: DashboardState = {
        ...withSteps(fresh, history.steps),
        totalSteps: history.totalSteps,
        evals: { ...history.evals },
      };
      return (history.samples ?? []).reduce(
        (state, sample) => reduceDashboard(state, { type: "sample", ...sample }),
        recorded,
      );
    }
    case "status":
      // A run that ended has no current phase.
      return { ...state, status: message.status, phase: message.status === "running" ? state.phase : "" };
    case "phase":
      return { ...state, phase: message.phase };
    case "eval":
      return {
        ...state,
        evals: { ...state.evals, [message.stage]: { passAt1: message.passAt1, tasks: message.tasks } },
      };
    case "progress":
      return {
        ...withSteps(state, [message]),
        // Steps also arrive while stopping (the trainer finishes the step under way): keep saying so.
        status: state.status === "stopping" ? "stopping" : "running",
        totalSteps: message.totalSteps,
      };
    case "sample": {
      const kindSteps = [...state.kindSteps];
      const kindCounts: Record<string, [number, number][]> = {};
      for (const [kind, counts] of Object.entries(state.kindCounts))
        kindCounts[kind] = counts.map((c) => [...c]);
      kindCounts[message.kind] ??= kindSteps.map((): [number, number] => [0, 0]);
      const at = stepIndex(kindSteps, message.step, Object.values(kindCounts));
      for (const counts of Object.values(kindCounts)) counts[at] ??= [0, 0];
      if (!isMaskedVerdict({ kind: message.verdict, ...(message.cause ? { cause: message.cause } : {}) })) {
        const cell = kindCounts[message.kind]![at]!;
        cell[1]++;
        if (message.verdict === "proved") cell[0]++;
      }
      return { ...state, kindSteps, kindCounts, samples: state.samples + 1 };
    }
    case "verifier":
      return {
        ...state,
        verifierChecks: message.checks,
        verifierCacheHits: message.cacheHits,
        verifierChecksPerSecond: message.checksPerSecond,
      };
  }
}

/** The state with these steps' metrics put in (a step already there is replaced, as a resumed run repeats it). */
function withSteps(state: DashboardState, recorded: readonly RecordedStep[]): DashboardState {
  const steps = [...state.steps];
  const curves = Object.fromEntries(
    Object.entries(state.curves).map(([name, values]) => [name, [...values]]),
  ) as Record<CurveName, (number | null)[]>;
  for (const { step, metrics } of recorded) {
    const at = stepIndex(steps, step, Object.values(curves));
    for (const [name, key] of Object.entries(CURVES) as [CurveName, string][])
      curves[name][at] = finite(metrics[key]);
  }
  return { ...state, steps, curves };
}

function pick<T extends object, K extends keyof T>(value: T, keys: K[]): Pick<T, K> {
  return Object.fromEntries(keys.map((k) => [k, value[k]])) as Pick<T, K>;
}

/** Pass rate per kind aligned with `kindSteps` (null where that kind had no counted sample at a step). */
export function passRateByKind(state: DashboardState): Record<string, (number | null)[]> {
  return Object.fromEntries(
    Object.entries(state.kindCounts).map(([kind, counts]) => [
      kind,
      counts.map(([proved, counted]) => (counted > 0 ? proved / counted : null)),
    ]),
  );
}

/** Share of verification requests answered from the cache, or null before any. */
export function cacheHitRate(state: DashboardState): number | null {
  const all = state.verifierChecks + state.verifierCacheHits;
  return all > 0 ? state.verifierCacheHits / all : null;
}

/** The latest non-null value of a curve. */
export function latest(values: readonly (number | null)[]): number | null {
  for (let k = values.length - 1; k >= 0; k--)
    if (values[k] !== null && values[k] !== undefined) return values[k]!;
  return null;
}
