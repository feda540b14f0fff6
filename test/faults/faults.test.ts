/**
 * Faults through a real simulator process: crashes, hangs, a dying server, a malformed message. The fault
 * markers lead the candidate: the comments a candidate ends with never reach the server (checkDocument.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { simulatorCommand } from "../../lean-bridge/server/launch";
import { VerifierPool } from "../../lean-bridge/verify/pool";
import { EXAMPLE, proofHole, readExample } from "../helpers";

const ARITH = "FimExamples/Arith.lean";
const text = readExample(ARITH);
const task = (name: string) => ({ file: ARITH, hole: proofHole(text, name) });

async function pool(slots: number, timeoutMs = 10_000): Promise<VerifierPool> {
  const started = await VerifierPool.start({
    projectRoot: EXAMPLE,
    launch: { command: [...simulatorCommand(), "--faults"], cwd: EXAMPLE },
    slots,
    timeoutMs,
    memoryPerWorkerMb: 1,
    memoryBudgetMb: 1024,
  });
  if (started.kind !== "ok") throw new Error(started.message);
  return started.pool;
}

test("a worker crash mid-check gives a crashed verdict; the slot recovers for the next check", async () => {
  const p = await pool(1);
  try {
    const crashed = await p.verify(task("add_le_add_1"), "/- sim:crash -/ omega");
    assert.equal(crashed.kind, "crashed");
    if (crashed.kind === "crashed") assert.match(crashed.reason, /crashed/);
    // It crashed a fresh worker too (the pool retries once): the candidate is charged with it.
    if (crashed.kind === "crashed") assert.equal(crashed.cause, "candidate");
    assert.equal((await p.verify(task("add_le_add_1"), "omega")).kind, "proved");
  } finally {
    await p.stop();
  }
});

test("a check that hangs past its timeout is cut off and never blocks the other slots", async () => {
  const p = await pool(2, 4000);
  try {
    const verdicts = await p.verifyMany([
      { task: task("add_le_add_2"), candidate: "/- sim:hang -/ omega" },
      ...["add_le_add_3", "add_le_add_4", "add_le_add_5", "add_le_add_6"].map((n) => ({
        task: task(n),
        candidate: "omega",
      })),
    ]);
    assert.deepEqual(
      verdicts.map((v) => v.kind),
      ["timeout", "proved", "proved", "proved", "proved"],
    );
    assert.equal(p.stats.timeouts, 1);
    // The recycled slot works again.
    assert.equal((await p.verify(task("add_le_add_2"), "omega")).kind, "proved");
  } finally {
    await p.stop();
  }
});

test("when the server exits, the check reports it and the pool restarts the server", async () => {
  const p = await pool(1);
  try {
    const dead = await p.verify(task("add_le_add_7"), "/- sim:exit -/ omega");
    assert.equal(dead.kind, "crashed");
    if (dead.kind === "crashed") {
      assert.match(dead.reason, /exited|closed/);
      // It was retried on a restarted server, which it stopped again: the candidate's failure, not masked.
      assert.equal(dead.cause, "candidate");
    }
    assert.equal((await p.verify(task("add_le_add_7"), "omega")).kind, "proved");
    assert.equal(p.stats.restarts, 2, "one restart for the retry, one for the next check");
  } finally {
    await p.stop();
  }
});

test("a malformed message from the server is reported, not fatal", async () => {
  const p = await pool(1);
  try {
    const v = await p.verify(task("add_le_add_8"), "/- sim:malformed -/ omega");
    assert.equal(v.kind, "proved");
    assert.match(p.serverStderr, /protocol error/);
  } finally {
    await p.stop();
  }
});

test("a bug inside the simulator becomes a failed verdict that says so, and the pool goes on", async () => {
  const p = await pool(1);
  try {
    const v = await p.verify(task("add_le_add_10"), "/- sim:throw -/ omega");
    assert.equal(v.kind, "failed");
    if (v.kind === "failed") assert.match(v.reason, /simulator internal error \(not a Lean error\)/);
    assert.equal((await p.verify(task("add_le_add_10"), "omega")).kind, "proved");
  } finally {
    await p.stop();
  }
});

test("stop() kills the server's whole process group, grandchildren included", async () => {
  // Like Lean's file workers, a `sleep` started by the server lives in its process group.
  const sim = simulatorCommand()
    .map((a) => `'${a}'`)
    .join(" ");
  const started = await VerifierPool.start({
    projectRoot: EXAMPLE,
    launch: { command: ["bash", "-c", `sleep 300 & echo "worker=$!" >&2; exec ${sim}`], cwd: EXAMPLE },
    slots: 1,
    timeoutMs: 10_000,
    memoryPerWorkerMb: 1,
  });
  assert.equal(started.kind, "ok");
  if (started.kind !== "ok") return;
  const p = started.pool;
  assert.equal((await p.verify(task("add_le_add_9"), "omega")).kind, "proved");
  const pid = Number(/worker=(\d+)/.exec(p.serverStderr)?.[1]);
  assert.ok(pid > 0, "the grandchild's pid was reported");
  assert.doesNotThrow(() => process.kill(pid, 0), "the grandchild runs while the server does");
  await p.stop();
  const gone = await waitUntil(() => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
  assert.ok(gone, "the grandchild died with the server");
  assert.equal(
    (await p.verify(task("add_le_add_9"), "simp")).kind,
    "crashed",
    "a stopped pool does not restart",
  );
});

/** Polls a condition on the event loop (bounded); used only to observe an OS event, not to time anything. */
async function waitUntil(condition: () => boolean, tries = 200): Promise<boolean> {
  for (let k = 0; k < tries; k++) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return condition();
}
