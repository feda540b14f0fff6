/**
 * The dashboard tells the truth: every figure it shows against the numbers it claims to show (the trainer's
 * metrics.jsonl and train/* messages), the webview's copy never draws a run it has not been told about, a
 * resumed run keeps its recorded steps, and the report panel's page runs nothing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import {
  emptyDashboard,
  reduceDashboard,
  type DashboardMessage,
  type DashboardState,
} from "../../extension/state/dashboardModel";
import {
  NO_RUN,
  applyInWebview,
  headerText,
  heldOutText,
  integerTicks,
  rewardSeries,
  tiles,
  type WebviewCopy,
} from "../../extension/state/dashboardView";
import { runHistory } from "../../extension/state/runHistory";
import { reportContentSecurityPolicy, reportWebviewHtml } from "../../extension/state/reportHtml";

const RESET: DashboardMessage = {
  type: "reset",
  runDir: "/ws/.fim-rlvr/runs/r1",
  verifier: "simulator (not Lean)",
  algorithm: "grpo",
  reward: "binary",
};

function progress(step: number, metrics: Record<string, number>, totalSteps = 10): DashboardMessage {
  return { type: "progress", step, totalSteps, metrics };
}

function play(messages: DashboardMessage[], from: DashboardState = emptyDashboard()): DashboardState {
  return messages.reduce(reduceDashboard, from);
}

function tile(state: DashboardState, label: string): string {
  return tiles(state).find((t) => t.label === label)!.value;
}

test("checks/s: the tile shows the step's figure the chart and metrics.jsonl show, not the run's average", () => {
  const state = play([
    RESET,
    progress(1, { checks_per_second: 1100.5 }),
    progress(2, { checks_per_second: 1262.97 }),
    // The host's own average over the whole run (generation time included) is another quantity.
    { type: "verifier", checks: 326, cacheHits: 10, checksPerSecond: 32.6 },
  ]);
  assert.equal(state.curves.checksPerSecond.at(-1), 1262.97, "the chart's latest point");
  assert.equal(tile(state, "checks/s"), "1263.0");
  assert.equal(tile(state, "cache hits"), "3%");
});

test("held-out pass@1 before, after SFT and after RL: a tile, in stage order, kept across a resume", () => {
  const state = play([
    RESET,
    { type: "eval", stage: "before", passAt1: 0.125, tasks: 8 },
    { type: "eval", stage: "sft", passAt1: 0.25, tasks: 8 },
  ]);
  assert.equal(tile(state, "held-out pass@1"), "12.5% before → 25.0% after SFT");
  const done = play([{ type: "eval", stage: "after", passAt1: 0.375, tasks: 8 }], state);
  assert.equal(heldOutText(done), "12.5% before → 25.0% after SFT → 37.5% after RL");
  assert.match(tiles(done).find((t) => t.label === "held-out pass@1")!.title, /8 held-out test holes/);
  assert.equal(tile(emptyDashboard(), "held-out pass@1"), "–");
});

test("binary reward: a reward line equal to the pass rate is one labelled line, not one hidden under another", () => {
  const same = play([
    RESET,
    progress(1, { reward_mean: 0.5, pass_rate: 0.5 }),
    progress(2, { reward_mean: 1, pass_rate: 1 }),
  ]);
  assert.deepEqual(rewardSeries(same), [{ label: "reward = pass rate (binary reward)", values: [0.5, 1] }]);
  const partial = play([
    { ...RESET, reward: "partial" } as DashboardMessage,
    progress(1, { reward_mean: 0.3, pass_rate: 0.25 }),
  ]);
  const series = rewardSeries(partial);
  assert.deepEqual(
    series.map((s) => [s.label, s.values, s.dashed ?? false]),
    [
      ["pass rate", [0.25], false],
      ["reward (partial)", [0.3], true],
    ],
    "different curves: both drawn, the reward dashed so it shows where they meet",
  );
});

test("the step axis has whole-number ticks only, a handful of them", () => {
  for (const [min, max] of [
    [1, 10],
    [0.5, 7.5],
    [1, 2327],
    [3, 3],
    [0, 60],
  ] as const) {
    const ticks = integerTicks(min, max, 6);
    assert.ok(ticks.length >= 1 && ticks.length <= 7, `${min}..${max}: ${ticks.join(",")}`);
    assert.ok(ticks.every(Number.isInteger), `${min}..${max}: ${ticks.join(",")}`);
    assert.ok(ticks.every((t) => t >= min && t <= max));
  }
  assert.deepEqual(integerTicks(0.5, 7.5, 6), [2, 4, 6], "no 2.5 or 7.5");
  assert.deepEqual(integerTicks(0, 3, 6), [0, 1, 2, 3]);
});

test("the header names the phase (SFT warm start, evaluation) while the run has no step yet", () => {
  const sft = play([RESET, { type: "phase", phase: "SFT step 50/60" }]);
  assert.equal(
    headerText(sft),
    "starting: SFT step 50/60 · grpo · verifier: simulator (not Lean) · /ws/.fim-rlvr/runs/r1",
  );
  const ended = play([progress(10, {}), { type: "status", status: "completed" }], sft);
  assert.match(headerText(ended), /^completed · grpo/, "an ended run has no current phase");
  assert.equal(headerText(emptyDashboard()), NO_RUN);
  const stopping = play([{ type: "status", status: "stopping" }, progress(3, {})], sft);
  assert.equal(stopping.status, "stopping", "a step finished while stopping does not say running again");
});

test("the webview never draws deltas it received before the full state (the 'No run yet' race)", () => {
  // Reproduces the flaky UI test: the webview (re)loads, live progress reaches it before its "ready" is
  // answered. Applied to its empty state, those drew 2,327 steps under "No run yet" with no verifier label.
  const extension = play([
    RESET,
    ...Array.from({ length: 5 }, (_, k) => progress(k + 1, { reward_mean: k / 10 })),
  ]);
  let copy: WebviewCopy = { synced: false, state: emptyDashboard() };
  copy = applyInWebview(copy, progress(6, { reward_mean: 0.6 }));
  assert.deepEqual(copy.state.steps, [], "a delta before the full state is dropped");
  assert.equal(headerText(copy.state), NO_RUN, "and nothing claims a run exists");
  const withSix = reduceDashboard(extension, progress(6, { reward_mean: 0.6 }));
  copy = applyInWebview(copy, { type: "state", state: withSix });
  copy = applyInWebview(copy, progress(7, { reward_mean: 0.7 }));
  assert.deepEqual(copy.state.steps, [1, 2, 3, 4, 5, 6, 7]);
  assert.match(headerText(copy.state), /verifier: simulator \(not Lean\)/);
  assert.deepEqual(
    copy.state,
    reduceDashboard(withSix, progress(7, { reward_mean: 0.7 })),
    "the same as the extension's",
  );
});

test("a resumed run's recorded steps and evaluations stay on the dashboard, also when the start fails", () => {
  const history = runHistory({
    metrics: [
      JSON.stringify({
        step: 1,
        reward_mean: 0.25,
        pass_rate: 0.25,
        pass_rate_by_kind: { tactic: 0.5 },
        checks_per_second: 900,
      }),
      JSON.stringify({ step: 2, reward_mean: 0.5, pass_rate: 0.5, checks_per_second: 1262.97 }),
      '{"step": 3, "reward_mean": 0.7', // torn by a kill: skipped
      "",
    ].join("\n"),
    evals: JSON.stringify({
      before: { pass_at_1: 0.125, by_kind: {}, tasks: 8 },
      after: { pass_at_1: 0.5, tasks: 8 },
    }),
    config: JSON.stringify({ steps: 6, algorithm: "grpo" }),
    samples: [
      JSON.stringify({
        step: 1,
        task_id: "a",
        kind: "tactic",
        candidate: "simp",
        verdict: "proved",
        reward: 1,
      }),
      JSON.stringify({
        step: 2,
        task_id: "b",
        kind: "tactic",
        candidate: "rfl",
        verdict: "failed",
        reward: 0,
      }),
      JSON.stringify({ step: 2, task_id: "c", kind: "proof", candidate: "x", verdict: "bogus", reward: 0 }),
    ].join("\n"),
  });
  assert.deepEqual(
    history.steps.map((s) => s.step),
    [1, 2],
  );
  assert.equal(history.totalSteps, 6);
  assert.deepEqual(
    history.evals,
    { before: { passAt1: 0.125, tasks: 8 } },
    "a resumed run measures 'after' again",
  );
  const failed = play([{ ...RESET, history } as DashboardMessage, { type: "status", status: "failed" }]);
  assert.equal(failed.status, "failed");
  assert.deepEqual(failed.steps, [1, 2]);
  assert.equal(tile(failed, "step"), "2/6");
  assert.equal(tile(failed, "reward"), "0.50");
  assert.equal(tile(failed, "checks/s"), "1263.0");
  assert.equal(
    tile(failed, "samples"),
    "2",
    "samples.jsonl's verdicts count (a line with no known verdict does not)",
  );
  assert.deepEqual(failed.kindCounts, {
    tactic: [
      [1, 1],
      [0, 1],
    ],
  });
  const resumed = play([progress(2, { reward_mean: 0.55 }, 6), progress(3, { reward_mean: 0.6 }, 6)], failed);
  assert.deepEqual(resumed.steps, [1, 2, 3], "a repeated step replaces the recorded one");
  assert.deepEqual(resumed.curves.reward, [0.25, 0.55, 0.6]);
  const ended = runHistory(
    { metrics: undefined, evals: JSON.stringify({ after: { pass_at_1: 0.5, tasks: 8 } }), config: undefined },
    false,
  );
  assert.deepEqual(
    ended.evals,
    { after: { passAt1: 0.5, tasks: 8 } },
    "a run shown as it ended keeps 'after'",
  );
  assert.deepEqual(runHistory({ metrics: undefined, evals: "not json", config: undefined }), {
    steps: [],
    samples: [],
    totalSteps: 0,
    evals: {},
  });
});

test("the report panel's page: no script, no resource from anywhere, only the report's own styles by hash", () => {
  const report =
    '<!doctype html><html><head><meta charset="utf-8"><title>r</title><style>body{color:#222}</style></head>' +
    '<body><span class="v" style="background:#54a24b">proved</span><p style="color:#777;font-size:12px">x</p>' +
    '<svg xmlns="http://www.w3.org/2000/svg"></svg><script>alert(1)</script></body></html>';
  const page = reportWebviewHtml(report)!;
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(page)![1]!;
  assert.ok(
    page.indexOf("Content-Security-Policy") < page.indexOf("<style>body{color"),
    "the policy comes first",
  );
  assert.match(csp, /^default-src 'none';/);
  assert.match(csp, /script-src 'none'/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|https?:|\*/);
  const hash = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`;
  for (const style of ["body{color:#222}", "background:#54a24b", "color:#777;font-size:12px"])
    assert.ok(csp.includes(hash(style)), `${style} is allowed by its hash`);
  assert.equal(reportContentSecurityPolicy(report), csp);
  assert.equal(reportWebviewHtml("<p>no head</p>"), undefined);
});
