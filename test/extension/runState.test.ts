/** The run state machine behind the status bar and the commands' enablement, and the dashboard's reducer. */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  IDLE,
  enablement,
  reduceRun,
  statusText,
  type RunEvent,
  type RunState,
} from "../../extension/state/runState";
import {
  cacheHitRate,
  emptyDashboard,
  latest,
  passRateByKind,
  reduceDashboard,
  type DashboardMessage,
} from "../../extension/state/dashboardModel";
import { dashboardHtml } from "../../extension/state/dashboardHtml";

function run(events: RunEvent[], from: RunState = IDLE): RunState {
  return events.reduce(reduceRun, from);
}

test("commands are enabled only when they can work", () => {
  const base = { resumableRun: undefined, annotatedHoles: 0 };
  assert.deepEqual(enablement({ ...base, state: IDLE }), {
    "fimRlvr.busy": false,
    "fimRlvr.canStop": false,
    "fimRlvr.canResume": false,
    "fimRlvr.hasAnnotations": false,
  });
  const running = run([{ type: "start-requested" }, { type: "started", runDir: "/r", totalSteps: 10 }]);
  assert.equal(running.phase, "running");
  const e = enablement({ ...base, state: running, resumableRun: "/r", annotatedHoles: 3 });
  assert.equal(e["fimRlvr.busy"], true, "no second Start while one runs");
  assert.equal(e["fimRlvr.canStop"], true);
  assert.equal(e["fimRlvr.canResume"], false, "no resume while running");
  assert.equal(e["fimRlvr.hasAnnotations"], true);
  assert.equal(enablement({ ...base, state: IDLE, resumableRun: "/r" })["fimRlvr.canResume"], true);
});

test("the state machine ignores events that do not fit its phase, and the status bar follows it", () => {
  assert.deepEqual(run([{ type: "stop-requested" }]), IDLE, "Stop without a run does nothing");
  assert.deepEqual(run([{ type: "started", runDir: "/r" }]), IDLE, "a start nobody asked for is ignored");
  const starting = run([{ type: "start-requested" }, { type: "phase", detail: "mining" }]);
  assert.deepEqual(starting, { phase: "starting", detail: "mining" });
  assert.match(statusText(starting).text, /mining/);
  const progressed = run(
    [
      { type: "started", runDir: "/r" },
      { type: "phase", detail: "SFT step 50/60" },
    ],
    starting,
  );
  assert.equal(
    statusText(progressed).text,
    "$(sync~spin) FIM-RLVR: SFT step 50/60",
    "before the first RL step the status bar names the phase, not step 0",
  );
  const stepped = run(
    [
      { type: "phase", detail: "RL" },
      { type: "progress", step: 3, totalSteps: 20, reward: 0.25 },
      { type: "progress", step: 4, totalSteps: 20, reward: null },
    ],
    progressed,
  );
  assert.deepEqual(stepped, {
    phase: "running",
    runDir: "/r",
    step: 4,
    totalSteps: 20,
    lastReward: 0.25,
    detail: "RL",
  });
  assert.equal(statusText(stepped).text, "$(pulse) FIM-RLVR step 4/20 · reward 0.25");
  const evaluating = reduceRun(stepped, {
    type: "phase",
    detail: "evaluating held-out holes after training",
  });
  assert.match(statusText(evaluating).text, /evaluating held-out holes after training · step 4\/20/);
  const stopping = reduceRun(stepped, { type: "stop-requested" });
  assert.deepEqual(stopping, { phase: "stopping", runDir: "/r" });
  assert.equal(
    enablement({ state: stopping, resumableRun: "/r", annotatedHoles: 0 })["fimRlvr.canStop"],
    false,
  );
  assert.deepEqual(reduceRun(stopping, { type: "ended" }), IDLE);
});

test("the dashboard reducer builds aligned curves, pass rate by kind from samples, and the cache hit rate", () => {
  const messages: DashboardMessage[] = [
    { type: "reset", runDir: "/r", verifier: "simulator (not Lean)", algorithm: "grpo", reward: "binary" },
    { type: "progress", step: 2, totalSteps: 5, metrics: { reward_mean: 0.5, loss: 1.5, kl: 0.01 } },
    {
      type: "progress",
      step: 1,
      totalSteps: 5,
      metrics: { reward_mean: 0.25, loss: 2, clip_fraction: 0.1, tokens_per_second: 40 },
    },
    { type: "sample", step: 1, kind: "tactic", verdict: "proved" },
    { type: "sample", step: 1, kind: "tactic", verdict: "failed" },
    { type: "sample", step: 1, kind: "tactic", verdict: "timeout", cause: "infrastructure" },
    { type: "sample", step: 2, kind: "proof", verdict: "failed" },
    { type: "sample", step: 2, kind: "proof", verdict: "timeout", cause: "candidate" },
    { type: "verifier", checks: 6, cacheHits: 2, checksPerSecond: 3.5 },
  ];
  const before = emptyDashboard();
  const state = messages.reduce(reduceDashboard, before);
  assert.deepEqual(before, emptyDashboard(), "the reducer does not mutate its input");
  assert.equal(state.status, "running");
  assert.deepEqual(state.steps, [1, 2], "steps stay sorted when progress arrives out of order");
  assert.deepEqual(state.curves.reward, [0.25, 0.5]);
  assert.deepEqual(state.curves.loss, [2, 1.5]);
  assert.deepEqual(state.curves.kl, [null, 0.01]);
  assert.deepEqual(state.curves.clipFraction, [0.1, null]);
  assert.equal(latest(state.curves.tokensPerSecond), 40);
  assert.deepEqual(
    passRateByKind(state),
    { tactic: [0.5, null], proof: [null, 0] },
    "masked timeouts are not counted; the candidate's own are failures",
  );
  assert.deepEqual(state.kindCounts.proof?.[1], [0, 2]);
  assert.equal(state.samples, 5);
  assert.equal(cacheHitRate(state), 0.25);
  assert.deepEqual(
    reduceDashboard(emptyDashboard(), { type: "state", state }),
    state,
    "a late view replays the state",
  );
  assert.equal(
    JSON.stringify(JSON.parse(JSON.stringify(state))),
    JSON.stringify(state),
    "plain JSON for postMessage",
  );
});

test("the dashboard document has a strict content security policy and loads only bundled files", () => {
  const html = dashboardHtml({
    cspSource: "https://file+.vscode-resource.vscode-cdn.net",
    nonce: "abc123",
    uplotCss: "webview:/dist/uplot.css",
    dashboardCss: "webview:/media/dashboard.css",
    script: "webview:/dist/dashboard.js",
  });
  const csp = /http-equiv="Content-Security-Policy" content="([^"]+)"/.exec(html)?.[1] ?? "";
  assert.match(csp, /^default-src 'none';/);
  assert.match(csp, /script-src 'nonce-abc123'$/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval|\*/);
  const scripts = [...html.matchAll(/<script([^>]*)>/g)].map((m) => m[1]!);
  assert.deepEqual(
    scripts,
    [' nonce="abc123" src="webview:/dist/dashboard.js"'],
    "one script, by nonce, bundled",
  );
  assert.doesNotMatch(html, /style=|<style|https?:\/\/(?!file\+)/, "no inline styles, no CDN");
  for (const id of [
    "chart-reward",
    "chart-kinds",
    "chart-loss",
    "chart-kl",
    "chart-clip",
    "chart-speed",
    "tiles",
  ])
    assert.match(html, new RegExp(`id="${id}"`));
});
