/**
 * What reaches the dashboard's page during a fast run: nothing before it asks for the full state, then the
 * deltas in one batch per interval, and the page's copy equals the extension's state. (A page opened during a
 * fast run got its state a minute late behind thousands of single deltas, showing "No run yet" meanwhile.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  emptyDashboard,
  reduceDashboard,
  type DashboardMessage,
  type DashboardState,
} from "../../extension/state/dashboardModel";
import { applyInWebview, headerText, type WebviewCopy } from "../../extension/state/dashboardView";
import { DashboardOutbox } from "../../extension/state/dashboardOutbox";
import { fakeTimers } from "./fakeTimers";

/** One step of a run as the controller posts it: two samples, the progress, the phase. */
function step(n: number): DashboardMessage[] {
  return [
    { type: "sample", step: n, kind: "tactic", verdict: n % 2 ? "proved" : "failed" },
    { type: "sample", step: n, kind: "proof", verdict: "failed" },
    { type: "progress", step: n, totalSteps: 100_000, metrics: { reward_mean: n / 1000, pass_rate: 0.5 } },
    { type: "phase", phase: "RL" },
  ];
}

test("a page opened mid-run gets the full state first, then batched deltas, and ends equal to the extension's", () => {
  const timers = fakeTimers();
  const sent: DashboardMessage[] = [];
  const outbox = new DashboardOutbox((m) => sent.push(m), timers, 200);
  let extension: DashboardState = emptyDashboard();
  const post = (message: DashboardMessage) => {
    extension = reduceDashboard(extension, message);
    outbox.post(message);
  };
  post({
    type: "reset",
    runDir: "/ws/run",
    verifier: "simulator (not Lean)",
    algorithm: "grpo",
    reward: "binary",
  });
  for (let n = 1; n <= 500; n++) step(n).forEach(post);
  assert.equal(sent.length, 0, "nothing goes to a page that has not asked for the state");

  outbox.ready(extension);
  assert.equal(sent.length, 1);
  assert.equal(sent[0]!.type, "state");
  // 100 steps arrive within one interval, then 100 more in the next: one message each.
  for (let n = 501; n <= 600; n++) step(n).forEach(post);
  timers.advance(200);
  for (let n = 601; n <= 700; n++) step(n).forEach(post);
  timers.advance(200);
  assert.equal(sent.length, 3, "800 live messages went as 2 batches");
  assert.deepEqual(
    sent.slice(1).map((m) => m.type),
    ["batch", "batch"],
  );
  let copy: WebviewCopy = { synced: false, state: emptyDashboard() };
  for (const message of sent) copy = applyInWebview(copy, message);
  assert.deepEqual(copy.state, extension, "the page shows exactly what the extension holds");
  assert.match(headerText(copy.state), /^running: RL · grpo · verifier: simulator \(not Lean\)/);
  assert.equal(copy.state.steps.length, 700);
});

test("a page that loads anew gets nothing until it asks again; a lone message goes as itself", () => {
  const timers = fakeTimers();
  const sent: DashboardMessage[] = [];
  const outbox = new DashboardOutbox((m) => sent.push(m), timers, 200);
  outbox.ready(emptyDashboard());
  outbox.post({ type: "phase", phase: "RL" });
  outbox.reset(); // hidden, reloaded or closed before the batch went
  timers.advance(1_000);
  outbox.post({ type: "phase", phase: "SFT step 1/2" });
  timers.advance(1_000);
  assert.deepEqual(
    sent.map((m) => m.type),
    ["state"],
    "deltas for a page that is gone are not sent",
  );
  outbox.ready(emptyDashboard());
  outbox.post({ type: "status", status: "stopping" });
  timers.advance(200);
  assert.deepEqual(sent.at(-1), { type: "status", status: "stopping" });
});
