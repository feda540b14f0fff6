/**
 * A run's abort signal is shared by every model call (eval's Ctrl-C): each call's listener comes off again when
 * the call ends, so a long eval neither piles listeners on the signal nor prints Node's
 * MaxListenersExceededWarning (issue 25 item 10: every eval printed it after its eleventh call).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { getEventListeners } from "node:events";
import { interruption } from "../../lean-bridge/models/interruption";

test("calls on one signal leave no listener behind and raise no MaxListenersExceededWarning", async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(w.name);
  process.on("warning", onWarning);
  try {
    const run = new AbortController();
    for (let call = 0; call < 50; call++) {
      const cut = interruption(run.signal, 60_000);
      const outcome = await Promise.race([cut.interrupted, Promise.resolve("answered" as const)]);
      assert.equal(outcome, "answered");
      cut.dispose();
    }
    assert.equal(getEventListeners(run.signal, "abort").length, 0);
    // Warnings are emitted on the next tick: let them come.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(warnings, []);
  } finally {
    process.off("warning", onWarning);
  }
});

test("an abort or the time limit still cuts a call short", async () => {
  const run = new AbortController();
  const cut = interruption(run.signal, 60_000);
  run.abort();
  assert.equal(await cut.interrupted, "aborted");
  cut.dispose();
  const timed = interruption(undefined, 1);
  assert.equal(await timed.interrupted, "timeout");
  timed.dispose();
  const already = interruption(run.signal, undefined);
  assert.equal(await already.interrupted, "aborted");
  already.dispose();
});
