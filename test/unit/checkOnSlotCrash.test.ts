/**
 * checkOnSlot when a worker dies before Lean receives the wait for its diagnostics: Lean 4.35 then never answers
 * that wait (it holds it until the next edit) but reports the version stopped by a fatal error. Seen on the
 * embedded Lean with a candidate that aborts its worker (test/real-lean/embeddedHacks.test.ts). The check must
 * come back crashed (which the pool retries, then charges to the candidate), never a masked timeout of the
 * infrastructure; a wait that ran out of time without the fatal report stays a timeout.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { LeanServer } from "../../lean-bridge/server/leanServer";
import { checkOnSlot } from "../../lean-bridge/verify/checkOnSlot";
import type { CheckDocument } from "../../lean-bridge/verify/checkDocument";
import type { Slot } from "../../lean-bridge/verify/scheduler";

/** A server whose every wait runs out of time; `fatal` says whether Lean reported the version stopped. */
function stubServer(fatal: boolean): LeanServer {
  const stub = {
    stderr: "",
    isOpen: () => false,
    openDocument: () => Promise.resolve({ kind: "ok", version: 1 }),
    waitForDiagnostics: () => Promise.resolve({ kind: "timeout" }),
    stoppedFatally: () => fatal,
    progressOf: () => ({ kind: "none" }),
  };
  return stub as unknown as LeanServer;
}

const slot = (): Slot => ({
  index: 0,
  uri: "file:///w/Check.lean",
  text: undefined,
  busy: true,
  lastUsed: 0,
});
const doc = { text: "theorem t : True := by\n  trivial\n", declarationStart: 0 } as unknown as CheckDocument;
const ctx = (server: LeanServer) => ({ server, timeoutMs: 50, allowedAxioms: [] });

test("a wait left unanswered after Lean reported the version stopped fatally is a crash, not a masked timeout", async () => {
  const checked = await checkOnSlot(ctx(stubServer(true)), slot(), doc);
  assert.equal(checked.outcome.kind, "crashed", JSON.stringify(checked.outcome));
  assert.equal(checked.aftermath, "recycle");
  assert.match(
    checked.outcome.kind === "crashed" ? checked.outcome.reason : "",
    /fatal error and never answered/,
  );
});

test("a wait that ran out of time before Lean reached anything stays the infrastructure's timeout", async () => {
  const checked = await checkOnSlot(ctx(stubServer(false)), slot(), doc);
  assert.deepEqual(
    [checked.outcome.kind, checked.outcome.kind === "timeout" && checked.outcome.cause],
    ["timeout", "infrastructure"],
  );
});
