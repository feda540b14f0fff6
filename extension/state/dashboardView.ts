/**
 * What the dashboard shows, as pure functions of its state (the webview script only draws them), so every
 * figure on screen is unit-tested against the numbers it claims to show: the header, the tiles, the reward
 * chart's series, the step axis's ticks, and the webview's own copy of the state.
 */
import {
  cacheHitRate,
  latest,
  reduceDashboard,
  type DashboardMessage,
  type DashboardState,
  type EvalStage,
} from "./dashboardModel";

export const NO_RUN = "No run yet. Start one with “FIM-RLVR: Start FIM-RLVR Training”.";

/**
 * The webview's copy of the state. A webview (re)loads with an empty state and asks for the full one; live
 * messages that reach it before that answer are deltas against a state it does not have (applied to the
 * empty state they drew steps under "No run yet" and no verifier label), so they are dropped: the full state
 * the extension sends was taken after they were posted, and includes them.
 */
export interface WebviewCopy {
  synced: boolean;
  state: DashboardState;
}

export function applyInWebview(copy: WebviewCopy, message: DashboardMessage): WebviewCopy {
  if (message.type === "state") return { synced: true, state: message.state };
  if (!copy.synced) return copy;
  return { synced: true, state: reduceDashboard(copy.state, message) };
}

/** The line under the title: status, phase, algorithm, verifier, run folder; or how to start a run. */
export function headerText(state: DashboardState): string {
  if (!state.runDir) return NO_RUN;
  const status =
    state.phase && state.status !== "stopping" ? `${state.status}: ${state.phase}` : state.status;
  return `${status} · ${state.algorithm} · verifier: ${state.verifier} · ${state.runDir}`;
}

const STAGE_NAMES: Record<EvalStage, string> = { before: "before", sft: "after SFT", after: "after RL" };

/** "12.5% before → 25.0% after SFT → 37.5% after RL" with the stages measured so far. */
export function heldOutText(state: DashboardState): string {
  const parts = (["before", "sft", "after"] as const)
    .filter((stage) => state.evals[stage])
    .map((stage) => `${(state.evals[stage]!.passAt1 * 100).toFixed(1)}% ${STAGE_NAMES[stage]}`);
  return parts.length ? parts.join(" → ") : "–";
}

export interface Tile {
  label: string;
  value: string;
  /** Said on hover: where the figure comes from. */
  title: string;
}

function figure(value: number | null, digits: number): string {
  return value === null ? "–" : value.toFixed(digits);
}

export function tiles(state: DashboardState): Tile[] {
  const step = state.steps.at(-1);
  const rate = cacheHitRate(state);
  const tasks = Math.max(0, ...Object.values(state.evals).map((e) => e?.tasks ?? 0));
  return [
    {
      label: "step",
      value: step === undefined ? "–" : `${step}/${state.totalSteps}`,
      title: "Optimiser steps done / the run's total",
    },
    {
      label: "reward",
      value: figure(latest(state.curves.reward), 2),
      title: "Mean reward of the latest step's samples",
    },
    {
      label: "pass rate",
      value: figure(latest(state.curves.passRate), 2),
      title: "Share of the latest step's samples proved (timeouts and crashes not counted)",
    },
    {
      label: "held-out pass@1",
      value: heldOutText(state),
      title: `Greedy pass@1 on ${tasks || "the"} held-out test holes, before training, after the SFT warm start and after RL`,
    },
    {
      label: "tokens/s",
      value: figure(latest(state.curves.tokensPerSecond), 0),
      title: "Generation speed in the latest step",
    },
    {
      // The same figure as the throughput chart at the latest step (metrics.jsonl's checks_per_second).
      label: "checks/s",
      value: figure(latest(state.curves.checksPerSecond), 1),
      title: "Verifier checks per second of checking in the latest step (as metrics.jsonl records it)",
    },
    {
      label: "cache hits",
      value: rate === null ? "–" : `${(rate * 100).toFixed(0)}%`,
      title: `${state.verifierCacheHits} of ${state.verifierChecks + state.verifierCacheHits} verification requests answered from the verifier's cache`,
    },
    { label: "samples", value: String(state.samples), title: "Verified samples received" },
  ];
}

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  /** Drawn dashed, so a line that runs along another stays visible. */
  dashed?: boolean;
}

function sameCurve(a: readonly (number | null)[], b: readonly (number | null)[]): boolean {
  return (
    a.length === b.length && a.every((v, k) => v === null || b[k] === null || Math.abs(v - b[k]!) < 1e-9)
  );
}

/**
 * Reward and pass rate. With binary rewards they are often the same numbers, and one line hid the other: then
 * one line says so in its label; otherwise the reward is drawn dashed over the pass rate.
 */
export function rewardSeries(state: DashboardState): ChartSeries[] {
  const { reward, passRate } = state.curves;
  if (reward.some((v) => v !== null) && sameCurve(reward, passRate))
    return [{ label: `reward = pass rate (${state.reward} reward)`, values: reward }];
  return [
    { label: "pass rate", values: passRate },
    { label: `reward (${state.reward})`, values: reward, dashed: true },
  ];
}

/**
 * Tick positions for the step axis: whole steps only (no 2.5), at 1, 2 or 5 × 10^k apart, at most about
 * `maxTicks` of them between `min` and `max`.
 */
export function integerTicks(min: number, max: number, maxTicks: number): number[] {
  if (!Number.isFinite(min) || !Number.isFinite(max) || max < min) return [];
  const span = Math.max(1, max - min);
  const budget = Math.max(1, maxTicks);
  // 1, 2, 5, 10, 20, 50, ...: the first increment that keeps the ticks within budget.
  let increment = 1;
  for (let k = 0; span / increment > budget; k++) increment = [1, 2, 5][k % 3]! * 10 ** Math.floor(k / 3);
  const ticks: number[] = [];
  for (let tick = Math.ceil(min / increment) * increment; tick <= max; tick += increment) ticks.push(tick);
  return ticks;
}
