/**
 * The dashboard after a window reload: the last run read back from the files the real trainer wrote (the
 * current record shapes: test/fixtures/run-records), and the watch that loads the dashboard's page again when
 * its script never started (the restored tab that showed only "No run yet" and no styles).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { emptyDashboard, reduceDashboard } from "../../extension/state/dashboardModel";
import { headerText, tiles } from "../../extension/state/dashboardView";
import { restoredRunMessages } from "../../extension/state/runHistory";
import { BootWatch } from "../../extension/state/dashboardBoot";
import { REPO } from "../helpers";
import { fakeTimers } from "./fakeTimers";

const RECORDS = join(REPO, "test", "fixtures", "run-records");
const read = (name: string) => readFileSync(join(RECORDS, name), "utf8");
const FILES = {
  metrics: read("metrics.jsonl"),
  samples: read("samples.jsonl"),
  evals: read("eval.json"),
  config: read("config.json"),
};
const RUN = {
  runDir: "/ws/.fim-rlvr/runs/2026-11-25T02-29-01",
  verifier: "simulator (not Lean)",
  algorithm: "grpo",
  reward: "binary" as const,
  outcome: "completed" as const,
};

function tile(state: ReturnType<typeof emptyDashboard>, label: string): string {
  return tiles(state).find((t) => t.label === label)!.value;
}

test("a finished run comes back from the real trainer's files: final step count, verifier, every evaluation", () => {
  const lastLine = JSON.parse(FILES.metrics.trim().split("\n").at(-1)!) as Record<string, unknown>;
  const state = restoredRunMessages(RUN, FILES).reduce(reduceDashboard, emptyDashboard());
  assert.equal(tile(state, "step"), "20/20");
  assert.match(headerText(state), /^completed · grpo · verifier: simulator \(not Lean\) · \/ws\//);
  assert.equal(
    tile(state, "held-out pass@1"),
    "0.0% before → 0.0% after SFT → 0.0% after RL",
    "a run shown as it ended keeps its final evaluation",
  );
  assert.equal(
    tile(state, "checks/s"),
    (lastLine.checks_per_second as number).toFixed(1),
    "the last line's figure, as metrics.jsonl recorded it",
  );
  assert.equal(tile(state, "samples"), String(FILES.samples.trim().split("\n").length));
  assert.deepEqual(
    state.steps,
    Array.from({ length: 20 }, (_, k) => k + 1),
  );
  assert.ok(
    state.curves.kl.every((v) => typeof v === "number"),
    "every step's KL is drawn (nested and string fields of a line are skipped, not the line)",
  );
});

test("a restored run the workspace knew less of: config.json names the algorithm, an unknown end reads stopped", () => {
  const state = restoredRunMessages({ ...RUN, algorithm: "", outcome: undefined }, FILES).reduce(
    reduceDashboard,
    emptyDashboard(),
  );
  assert.match(headerText(state), /^stopped · grpo · /);
  const bare = restoredRunMessages(RUN, {
    metrics: undefined,
    samples: undefined,
    evals: undefined,
    config: undefined,
  }).reduce(reduceDashboard, emptyDashboard());
  assert.equal(tile(bare, "step"), "–", "a run folder without records shows no step, and does not throw");
});

test("a dashboard page whose script never says ready is loaded again, with longer waits, then the user is told", () => {
  const timers = fakeTimers();
  const reloads: number[] = [];
  const gaveUp: number[] = [];
  const watch = new BootWatch(
    {
      reload: (attempt) => {
        reloads.push(attempt);
        watch.expect(); // as the panel does: the new document is due in turn
      },
      giveUp: (n) => gaveUp.push(n),
    },
    timers,
    1_000,
    3,
  );
  watch.expect();
  timers.advance(999);
  assert.deepEqual(reloads, [], "not before the wait is over");
  timers.advance(1);
  assert.deepEqual(reloads, [1]);
  timers.advance(1_999);
  assert.deepEqual(reloads, [1], "the second wait is twice the first");
  timers.advance(1);
  timers.advance(4_000);
  assert.deepEqual(reloads, [1, 2, 3]);
  assert.deepEqual(gaveUp, []);
  timers.advance(8_000);
  assert.deepEqual(gaveUp, [3], "after the last reload went unanswered, once");
  assert.equal(timers.pending(), 0, "and nothing is left waiting");
});

test("a page that says ready is left alone; a hidden one is not waited for; a later failure gets its reloads again", () => {
  const timers = fakeTimers();
  const reloads: number[] = [];
  const watch = new BootWatch(
    { reload: (n) => reloads.push(n), giveUp: () => assert.fail() },
    timers,
    1_000,
    3,
  );
  watch.expect();
  timers.advance(500);
  watch.ready();
  timers.advance(10_000);
  assert.deepEqual(reloads, [], "ready in time: never reloaded");
  assert.equal(watch.waiting, false);

  watch.expect(); // shown again: VS Code loads a hidden webview's page anew
  watch.hidden();
  timers.advance(10_000);
  assert.deepEqual(reloads, [], "hidden: no page runs, none is overdue");

  watch.expect();
  timers.advance(1_000);
  assert.deepEqual(reloads, [1]);
  watch.ready();
  watch.expect();
  timers.advance(1_000);
  assert.deepEqual(reloads, [1, 1], "a ready resets the count and the wait");
  watch.dispose();
  timers.advance(10_000);
  assert.deepEqual(reloads, [1, 1], "a closed panel is not reloaded");
});
