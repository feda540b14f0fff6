/**
 * Every wait ends, and nothing is left behind: scripted fake servers (test/fixtures/fake-server) that never
 * answer initialize, stop reading their input, ignore shutdown, hang a check, publish stale diagnostics, or
 * lose their connection. Deadlines here are small and the assertions are about outcomes (settled, killed),
 * never about durations.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { LeanServer, type LaunchSpec } from "../../lean-bridge/server/leanServer";
import { VerifierPool } from "../../lean-bridge/verify/pool";
import { EXAMPLE, proofHole, readExample } from "../helpers";
import { tempDir } from "../tempDirs";

const FAKE = join(import.meta.dirname, "..", "fixtures", "fake-server", "fakeServer.mjs");
const ARITH = "FimExamples/Arith.lean";
const text = readExample(ARITH);
const task = (name: string) => ({ file: ARITH, hole: proofHole(text, name) });

interface Fake {
  launch: LaunchSpec;
  /** Pids of every start so far, and of the grandchildren they left in their process groups. */
  pids(): number[];
  grandchildren(): number[];
  waits(): number;
  cleanup(): void;
}

function fake(mode: string, grandchild = false): Fake {
  const state = tempDir("fim-fake-");
  const lines = (name: string) =>
    existsSync(join(state, name))
      ? readFileSync(join(state, name), "utf8").trim().split("\n").filter(Boolean)
      : [];
  return {
    launch: {
      command: [
        process.execPath,
        FAKE,
        "--mode",
        mode,
        "--state",
        state,
        ...(grandchild ? ["--grandchild"] : []),
      ],
      cwd: EXAMPLE,
    },
    pids: () => lines("pids").map(Number),
    grandchildren: () => lines("grandchildren").map(Number),
    waits: () => lines("waits").length,
    cleanup: () => rmSync(state, { recursive: true, force: true }),
  };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Polls a condition on the event loop (bounded); used only to observe an OS event, not to time anything. */
async function waitUntil(condition: () => boolean, tries = 3000): Promise<boolean> {
  for (let k = 0; k < tries; k++) {
    if (condition()) return true;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return condition();
}

/** Whatever a test started is stopped even when an assertion failed, so no test leaves processes behind. */
const toStop: { stop(): Promise<void> }[] = [];
async function stopAll(): Promise<void> {
  await Promise.all(toStop.splice(0).map((s) => s.stop()));
}

const allGone = (pids: number[]) => waitUntil(() => pids.every((pid) => !alive(pid)));

async function startFake(f: Fake): Promise<LeanServer> {
  const started = await LeanServer.start(f.launch, 10_000);
  if (started.kind !== "started") throw new Error(started.message);
  toStop.push(started.server);
  return started.server;
}

const poolOptions = (f: Fake) => ({
  projectRoot: EXAMPLE,
  launch: f.launch,
  slots: 1,
  timeoutMs: 600_000, // Far beyond the test: only stop() can end these checks.
  memoryPerWorkerMb: 1,
  memoryBudgetMb: 1024,
});

test("a server that never answers initialize: the start fails within its deadline and is killed", async () => {
  const f = fake("no-initialize", true);
  try {
    const started = await LeanServer.start(f.launch, 300);
    assert.equal(started.kind, "failed");
    if (started.kind === "failed") assert.match(started.message, /no answer to initialize within 300 ms/);
    const pool = await VerifierPool.start({ ...poolOptions(f), initTimeoutMs: 300 });
    assert.equal(pool.kind, "error");
    assert.ok(await allGone([...f.pids(), ...f.grandchildren()]), "both process groups were killed");
  } finally {
    await stopAll();
    f.cleanup();
  }
});

test("a server that stops reading its input: writing a large document ends, and the server is killed", async () => {
  const f = fake("no-read", true);
  try {
    const server = await startFake(f);
    server.writeDeadlineMs = 300;
    const big = `-- ${"x".repeat(16 * 1024 * 1024)}\n`;
    const opened = await server.openDocument("file:///big.lean", big);
    assert.equal(opened.kind, "closed");
    if (opened.kind === "closed") assert.match(opened.reason, /did not read its input for 300 ms/);
    assert.equal(server.isAlive, false);
    assert.ok(await allGone([...f.pids(), ...f.grandchildren()]), "the process group was killed");
    await server.stop(); // Still returns on a dead server.
  } finally {
    await stopAll();
    f.cleanup();
  }
});

test("a server that ignores shutdown: stop() returns, from several callers at once, and kills the group", async () => {
  const f = fake("ignore-shutdown", true);
  try {
    const server = await startFake(f);
    await Promise.all([server.stop(200), server.stop(200)]);
    await server.stop(200);
    assert.equal(server.isAlive, false);
    assert.ok(await allGone([...f.pids(), ...f.grandchildren()]));
  } finally {
    await stopAll();
    f.cleanup();
  }
});

test("pool.stop() settles a hung check and a queued one, and is safe to call twice, concurrently", async () => {
  const f = fake("hang-waits", true);
  try {
    const started = await VerifierPool.start(poolOptions(f));
    assert.equal(started.kind, "ok");
    if (started.kind !== "ok") return;
    const pool = started.pool;
    toStop.push(pool);
    const running = pool.verify(task("add_le_add_1"), "omega");
    const queued = pool.verify(task("add_le_add_2"), "omega");
    assert.ok(await waitUntil(() => f.waits() === 1), "the first check is waiting on the server");
    await Promise.all([pool.stop(), pool.stop()]);
    await pool.stop();
    const verdicts = await Promise.all([running, queued]);
    assert.deepEqual(
      verdicts.map((v) => v.kind),
      ["crashed", "crashed"],
    );
    assert.ok(await allGone([...f.pids(), ...f.grandchildren()]));
    assert.equal((await pool.verify(task("add_le_add_3"), "omega")).kind, "crashed", "stopped stays stopped");
  } finally {
    await stopAll();
    f.cleanup();
  }
});

test("stale publishes: versions increase across close/reopen; late and never-sent versions are dropped", async () => {
  const f = fake("stale");
  try {
    const server = await startFake(f);
    const uri = "file:///slot.lean";
    const first = await server.openDocument(uri, "theorem t : True := by trivial\n");
    assert.equal(first.kind, "ok");
    if (first.kind !== "ok") return;
    assert.equal((await server.waitForDiagnostics(uri, first.version, 200)).kind, "timeout");
    await server.closeDocument(uri);
    const second = await server.openDocument(uri, "theorem t : True := by bad\n");
    assert.equal(second.kind, "ok");
    if (second.kind !== "ok") return;
    assert.ok(second.version > first.version, "a reopened document continues the version sequence");
    // The server publishes the error for this version, then a clean set for the version before (late)
    // and for the version after (never sent): neither may replace the error.
    const ready = await server.waitForDiagnostics(uri, second.version, 10_000);
    assert.equal(ready.kind, "ready");
    if (ready.kind === "ready")
      assert.deepEqual(
        ready.diagnostics.map((d) => d.message),
        ["the real error"],
      );
    await server.stop(200);
  } finally {
    await stopAll();
    f.cleanup();
  }
});

test("a restart after a lost connection kills the old server's process group", async () => {
  const f = fake("drop-connection", true);
  try {
    const started = await VerifierPool.start({ ...poolOptions(f), timeoutMs: 10_000 });
    assert.equal(started.kind, "ok");
    if (started.kind !== "ok") return;
    const pool = started.pool;
    toStop.push(pool);
    // The lost check is retried once on a restarted server, which answers it.
    const lost = await pool.verify(task("add_le_add_4"), "omega");
    assert.notEqual(lost.kind, "crashed");
    assert.equal(pool.stats.restarts, 1);
    const [oldServer] = f.pids();
    const [oldWorker] = f.grandchildren();
    assert.ok(await allGone([oldServer!, oldWorker!]), "the old server and its worker are gone");
    assert.notEqual((await pool.verify(task("add_le_add_4"), "simp")).kind, "crashed");
    assert.equal(pool.stats.restarts, 1);
    await pool.stop();
    assert.ok(await allGone([...f.pids(), ...f.grandchildren()]));
  } finally {
    await stopAll();
    f.cleanup();
  }
});

test("stop() during a restart leaks nothing and settles every pending check", async () => {
  const f = fake("hang-restart", true);
  try {
    const started = await VerifierPool.start({
      ...poolOptions(f),
      timeoutMs: 10_000,
      initTimeoutMs: 600_000,
    });
    assert.equal(started.kind, "ok");
    if (started.kind !== "ok") return;
    const pool = started.pool;
    toStop.push(pool);
    assert.notEqual((await pool.verify(task("add_le_add_5"), "omega")).kind, "crashed");
    process.kill(f.pids()[0]!, "SIGKILL"); // The server dies; the next check restarts it.
    assert.ok(await allGone([f.pids()[0]!]));
    const restarting = pool.verify(task("add_le_add_5"), "simp");
    const queued = pool.verify(task("add_le_add_6"), "simp");
    assert.ok(await waitUntil(() => f.pids().length === 2), "the restart is under way");
    await pool.stop();
    const verdicts = await Promise.all([restarting, queued]);
    assert.deepEqual(
      verdicts.map((v) => v.kind),
      ["crashed", "crashed"],
    );
    assert.ok(await allGone([...f.pids(), ...f.grandchildren()]), "no process of either start is left");
  } finally {
    await stopAll();
    f.cleanup();
  }
});
