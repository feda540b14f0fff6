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

export interface DashboardState {
  /** "idle" | "starting" | "running" | "stopping" | "completed" | "stopped" | "failed". */
  status: string;
  /** The run folder and the verifier label (simulator runs say so). */
  runDir: string;
  verifier: string;
  algorithm: string;
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

export type DashboardMessage =
  | { type: "reset"; runDir: string; verifier: string; algorithm: string }
  | { type: "status"; status: string }
  | { type: "progress"; step: number; totalSteps: number; metrics: Record<string, number> }
  | { type: "sample"; step: number; kind: string; verdict: VerdictKind; cause?: VerdictCause }
  | { type: "verifier"; checks: number; cacheHits: number; checksPerSecond: number }
  | { type: "state"; state: DashboardState };

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
    runDir: "",
    verifier: "",
    algorithm: "",
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
    case "reset":
      return {
        ...emptyDashboard(),
        status: "starting",
        ...pick(message, ["runDir", "verifier", "algorithm"]),
      };
    case "status":
      return { ...state, status: message.status };
    case "progress": {
      const steps = [...state.steps];
      const curves = Object.fromEntries(
        Object.entries(state.curves).map(([name, values]) => [name, [...values]]),
      ) as Record<CurveName, (number | null)[]>;
      const at = stepIndex(steps, message.step, Object.values(curves));
      for (const [name, key] of Object.entries(CURVES) as [CurveName, string][])
        curves[name][at] = finite(message.metrics[key]);
      return { ...state, status: "running", totalSteps: message.totalSteps, steps, curves };
    }
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
