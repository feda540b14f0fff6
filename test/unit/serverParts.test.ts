import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DiagnosticsStore } from "../../lean-bridge/server/diagnosticsStore";
import {
  IMMEDIATE_REPORTS_FLAG,
  LEAN_MISSING_MESSAGE,
  SANDBOX_MISSING_WARNING,
  buildLaunch,
  splitCommandLine,
  withImmediateReports,
} from "../../lean-bridge/server/launch";
import { SANDBOX_ENV_ALLOWED, sandboxed } from "../../lean-bridge/server/sandbox";
import { withDeadline } from "../../lean-bridge/server/deadline";
import { SIMULATOR_NAME } from "../../lean-bridge/simulator/server";
import { SIMULATOR_NAME_MARKER } from "../../lean-bridge/verify/identity";
import { defaultMemoryBudgetMb, effectiveSlots } from "../../lean-bridge/verify/memoryBudget";
import { inMemory } from "../harness";
import { HoleQueues, SlotScheduler } from "../../lean-bridge/verify/scheduler";
import {
  VerdictCache,
  isCacheable,
  verdictKey,
  type VerdictKeyParts,
} from "../../lean-bridge/verify/verdictCache";
import type { VerdictOutcome } from "../../lean-bridge/verify/verdict";

const d = (message: string) => ({
  range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } },
  message,
});

test("diagnostics: cumulative publishes replace, incremental ones append, stale versions are dropped", () => {
  const store = new DiagnosticsStore();
  store.reset("u", 2);
  store.onPublish({ uri: "u", version: 2, diagnostics: [d("a")] });
  store.onPublish({ uri: "u", version: 2, diagnostics: [d("a"), d("b")] });
  assert.equal(store.read("u", 2).diagnostics.length, 2);
  store.onPublish({ uri: "u", version: 2, diagnostics: [d("c")], isIncremental: true });
  assert.deepEqual(
    store.read("u", 2).diagnostics.map((x) => x.message),
    ["a", "b", "c"],
  );
  store.onPublish({ uri: "u", version: 1, diagnostics: [d("old")] });
  assert.equal(store.read("u", 2).diagnostics.length, 3);
  // A version never sent (above the last one) cannot replace the errors of the version asked for.
  store.onPublish({ uri: "u", version: 3, diagnostics: [] });
  assert.equal(store.read("u", 2).diagnostics.length, 3);
  store.onProgress({ textDocument: { uri: "u", version: 3 }, processing: [{ range: d("").range, kind: 2 }] });
  assert.equal(store.read("u", 2).fatal, false);
  store.onProgress({ textDocument: { uri: "u", version: 2 }, processing: [{ range: d("").range, kind: 2 }] });
  assert.equal(store.read("u", 2).fatal, true);
});

test("command lines split like a shell", () => {
  assert.deepEqual(splitCommandLine(`lake env lean --server "-Dx=a b" 'c d' e\\ f`), [
    "lake",
    "env",
    "lean",
    "--server",
    "-Dx=a b",
    "c d",
    "e f",
  ]);
});

test("without lake on PATH, the default launch says how to install Lean or use the simulator", () => {
  const r = buildLaunch(
    { kind: "lake" },
    "/tmp",
    { memoryMb: 1, cpuSeconds: 0, sandbox: false },
    { PATH: "/nonexistent" },
  );
  assert.equal(r.kind, "error");
  if (r.kind === "error") {
    assert.equal(r.message, LEAN_MISSING_MESSAGE);
    assert.match(r.message, /elan/);
    assert.match(r.message, /--simulator/);
  }
});

test("every Lean server command reports without delay, a user's --server command included", () => {
  assert.deepEqual(withImmediateReports(["lean", "--server"]), ["lean", "--server", IMMEDIATE_REPORTS_FLAG]);
  assert.deepEqual(withImmediateReports(["/opt/lean/bin/lean", "--server", "-M4096"]), [
    "/opt/lean/bin/lean",
    "--server",
    "-M4096",
    IMMEDIATE_REPORTS_FLAG,
  ]);
  assert.deepEqual(withImmediateReports(["lake", "serve"]), ["lake", "serve", "--", IMMEDIATE_REPORTS_FLAG]);
  assert.deepEqual(withImmediateReports(["lake", "serve", "--", "-M1"]), [
    "lake",
    "serve",
    "--",
    "-M1",
    IMMEDIATE_REPORTS_FLAG,
  ]);
  // A delay the user chose is theirs; a command whose flags are unknown is not touched.
  assert.deepEqual(withImmediateReports(["lean", "--server", "-Dserver.reportDelayMs=50"]), [
    "lean",
    "--server",
    "-Dserver.reportDelayMs=50",
  ]);
  assert.deepEqual(withImmediateReports(["./my-lean-wrapper.sh"]), ["./my-lean-wrapper.sh"]);
  const launched = buildLaunch({ kind: "command", commandLine: `${process.execPath} --server` }, "/tmp", {
    memoryMb: 1,
    cpuSeconds: 0,
    sandbox: false,
  });
  assert.equal(launched.kind, "ok");
  // node is not lean: the flag is only added to programs named lean or lake.
  if (launched.kind === "ok") assert.deepEqual(launched.spec.command, [process.execPath, "--server"]);
  const lake = buildLaunch({ kind: "lake" }, "/tmp", { memoryMb: 1, cpuSeconds: 0, sandbox: false });
  if (lake.kind === "ok") assert.ok(lake.spec.command.includes(IMMEDIATE_REPORTS_FLAG));
});

test("a pool without a memory budget reports the default it uses, never 0 MB", async () => {
  const h = await inMemory();
  try {
    assert.equal(h.pool.memoryBudgetMb, defaultMemoryBudgetMb());
    assert.ok(h.pool.memoryBudgetMb > 0);
  } finally {
    await h.close();
  }
  const given = await inMemory({}, { memoryBudgetMb: 1234 });
  try {
    assert.equal(given.pool.memoryBudgetMb, 1234);
  } finally {
    await given.close();
  }
});

test("the sandbox: the project read-only, only the named folders writable, own namespaces, no capability", () => {
  const argv = sandboxed(["lake", "serve"], "/work/p", {
    writable: ["/work/p/.fim-rlvr/gate/run-1/out"],
    env: { PATH: "/usr/bin", HOME: "/nonexistent-home", LEAN_SERVER_API_KEY: "secret", LEAN_PATH: "/l" },
  });
  for (const flag of ["--unshare-user", "--unshare-pid", "--unshare-net", "--die-with-parent", "--clearenv"])
    assert.ok(argv.includes(flag), flag);
  assert.deepEqual(argv.slice(argv.indexOf("--cap-drop"), argv.indexOf("--cap-drop") + 2), [
    "--cap-drop",
    "ALL",
  ]);
  const binds = argv.flatMap((a, k) => (a === "--bind" ? [argv[k + 1]] : []));
  assert.deepEqual(binds, ["/work/p/.fim-rlvr/gate/run-1/out"], "the one writable folder");
  assert.ok(!argv.includes("secret"), "a token never reaches the sandbox");
  assert.ok(argv.join(" ").includes("--setenv LEAN_PATH /l"), "an allowed variable does");
  assert.ok(!SANDBOX_ENV_ALLOWED.includes("LEAN_SERVER_API_KEY"));
  assert.deepEqual(argv.slice(-2), ["lake", "serve"]);
});

test("asked for the sandbox without bubblewrap, the launch goes on with a loud warning", () => {
  const bin = mkdtempSync(join(tmpdir(), "fim-nobwrap-"));
  symlinkSync("/bin/sh", join(bin, "sh"));
  const r = buildLaunch(
    { kind: "command", commandLine: "sh -c true" },
    "/tmp",
    { memoryMb: 1, cpuSeconds: 0, sandbox: true },
    { PATH: bin, HOME: "/nonexistent" },
  );
  assert.equal(r.kind, "ok");
  if (r.kind === "ok") {
    assert.deepEqual(r.spec.command, ["sh", "-c", "true"]);
    assert.equal(r.warning, SANDBOX_MISSING_WARNING);
    assert.match(r.warning, /WITHOUT the sandbox/);
  }
  rmSync(bin, { recursive: true, force: true });
});

test("the memory budget limits the number of slots", () => {
  assert.equal(effectiveSlots(8, 4096, 10_000), 2);
  assert.equal(effectiveSlots(8, 4096, 100), 1);
  assert.equal(effectiveSlots(3, 1, 100), 3);
});

test("the simulator is recognised by its serverInfo name, without verify/ importing it", () => {
  assert.ok(SIMULATOR_NAME.toLowerCase().includes(SIMULATOR_NAME_MARKER));
  assert.ok(!"Lean 4 Server".toLowerCase().includes(SIMULATOR_NAME_MARKER));
});

test("withDeadline settles with the value, the error, or timeout (running onExpire once)", async () => {
  assert.deepEqual(await withDeadline(Promise.resolve(7), 1_000), { kind: "ok", value: 7 });
  const failed = await withDeadline(Promise.reject(new Error("boom")), 1_000);
  assert.equal(failed.kind, "error");
  let expired = 0;
  const never = new Promise<number>(() => undefined);
  assert.deepEqual(await withDeadline(never, 1, () => expired++), { kind: "timeout" });
  assert.equal(expired, 1);
});

const range = { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } };
const keyParts: VerdictKeyParts = {
  identity: { kind: "lean", version: "leanprover/lean4:v4.24.0", label: "Lean" },
  settings: { policy: { allowSorry: false }, allowedAxioms: ["propext"] },
  file: "/p/A.lean",
  hole: { start: { line: 3, character: 2 }, end: { line: 3, character: 7 } },
  documentText: "theorem t : True := by trivial",
};

test("the verdict key covers the verifier, its settings, the file, the hole and the document", () => {
  const base = verdictKey(keyParts);
  assert.equal(verdictKey({ ...keyParts }), base);
  const variants: VerdictKeyParts[] = [
    { ...keyParts, identity: { ...keyParts.identity, kind: "simulator" } },
    { ...keyParts, identity: { ...keyParts.identity, version: "leanprover/lean4:v4.25.0" } },
    { ...keyParts, settings: { policy: { allowSorry: true }, allowedAxioms: ["propext"] } },
    {
      ...keyParts,
      settings: { policy: { allowSorry: false }, allowedAxioms: ["propext", "Lean.ofReduceBool"] },
    },
    { ...keyParts, file: "/p/B.lean" },
    { ...keyParts, hole: { ...keyParts.hole, end: { line: 3, character: 8 } } },
    { ...keyParts, documentText: keyParts.documentText + " " },
  ];
  for (const v of variants) assert.notEqual(verdictKey(v), base, JSON.stringify(v));
});

test("the verdict cache: dedupes checks under way, never keeps timeouts, crashes or environment failures", async () => {
  const cache = new VerdictCache();
  let runs = 0;
  const proved: VerdictOutcome = { kind: "proved", axioms: [], axiomsChecked: true, diagnostics: [] };
  const check = (outcome: VerdictOutcome) => async () => {
    runs++;
    await Promise.resolve();
    return outcome;
  };
  const [a, b] = await Promise.all([
    cache.getOrCheck("k", check(proved)),
    cache.getOrCheck("k", check(proved)),
  ]);
  assert.equal(runs, 1);
  assert.deepEqual([a.cached, b.cached], [false, true]);
  assert.equal((await cache.getOrCheck("k", check(proved))).cached, true);
  const transient: VerdictOutcome[] = [
    { kind: "timeout", timeoutMs: 1, cause: "candidate", diagnostics: [] },
    { kind: "crashed", reason: "x", cause: "infrastructure", diagnostics: [] },
  ];
  for (const outcome of transient) {
    runs = 0;
    await cache.getOrCheck(outcome.kind, check(outcome));
    await cache.getOrCheck(outcome.kind, check(outcome));
    assert.equal(runs, 2, `${outcome.kind} is checked again`);
  }
  // H1 adds `environment` to the Verdict union; the cache already refuses it by name.
  assert.equal(isCacheable({ kind: "environment" } as unknown as VerdictOutcome), false);
});

test("the verdict cache is bounded in bytes, evicting the least recently used", async () => {
  const maxBytes = 64 * 1024;
  const cache = new VerdictCache(maxBytes);
  const big = (k: number): VerdictOutcome => ({
    kind: "failed",
    reason: "r".repeat(4_000) + k,
    diagnostics: [{ severity: 1, message: "m".repeat(2_000), range, candidateRange: null }],
  });
  for (let k = 0; k < 100; k++) await cache.getOrCheck(`k${k}`, async () => big(k));
  assert.ok(cache.bytes <= maxBytes, `${cache.bytes} bytes held`);
  assert.ok(cache.size > 0 && cache.size < 100);
  assert.equal((await cache.getOrCheck("k99", async () => big(-1))).cached, true, "the newest stays");
  assert.equal((await cache.getOrCheck("k0", async () => big(-1))).cached, false, "the oldest went");
});

test("the scheduler prefers the slot holding the prefix, queues when all are busy, and close() settles the queue", async () => {
  const scheduler = new SlotScheduler("/p", 2);
  const docA = { text: "import X\ntheorem a := by simp", prefix: "import X\ntheorem a := by " };
  const docB = { text: "import X\ntheorem b := by simp", prefix: "import X\ntheorem b := by " };
  const first = await scheduler.acquire(docA);
  assert.ok(first);
  first.text = docA.text;
  scheduler.release(first);
  const again = await scheduler.acquire({ ...docA, text: docA.prefix + "omega" });
  assert.equal(again, first, "the slot that holds the prefix is chosen");
  const other = await scheduler.acquire(docB);
  assert.ok(other && other !== first);
  const waiting = scheduler.acquire(docB);
  scheduler.release(other);
  assert.equal(await waiting, other, "a released slot goes straight to the one waiting");
  const queued = scheduler.acquire(docA);
  scheduler.close();
  assert.equal(await queued, undefined, "closing settles every waiter");
  assert.equal(await scheduler.acquire(docA), undefined, "and no slot is handed out afterwards");
});

test("the scheduler keeps a group on the slot holding its declaration when several callers wait", async () => {
  const scheduler = new SlotScheduler("/p", 2);
  const doc = (name: string, tactic = "simp") => ({
    text: `import X\ntheorem ${name} := by ${tactic}`,
    prefix: `import X\ntheorem ${name} := by `,
  });
  const s1 = (await scheduler.acquire(doc("a")))!;
  const s2 = (await scheduler.acquire(doc("b")))!;
  s1.text = doc("a").text;
  s2.text = doc("b").text;
  // Another caller's check of c waits; the check of a ends and the same caller continues with a's next candidate.
  const c = scheduler.acquire(doc("c"));
  scheduler.release(s1);
  assert.equal(await scheduler.acquire(doc("a", "omega")), s1, "the group of a keeps its slot");
  // A newcomer whose declaration no idle slot holds does not overtake the waiting check of c.
  scheduler.release(s1);
  const d = scheduler.acquire(doc("d"));
  assert.equal(await c, s1, "the oldest waiter gets the freed slot (after the hold for its own declaration)");
  // With d and a second check of b waiting, the slot holding b goes to b although d waited longer.
  const b = scheduler.acquire(doc("b", "omega"));
  scheduler.release(s2);
  assert.equal(await b, s2, "a freed slot goes first to a waiter whose declaration it holds");
  scheduler.release(s2);
  assert.equal(await d, s2, "then to the oldest");
  scheduler.close();
});

test("hole queues keep a worker on its hole, then hand it the longest queue nobody owns", () => {
  const hole = (line: number) => ({ start: { line, character: 0 }, end: { line, character: 1 } });
  const items = [1, 2, 1, 3, 3, 3, 1].map((line) => ({ task: { file: "A.lean", hole: hole(line) } }));
  const queues = new HoleQueues(items);
  const w1 = queues.take(undefined)!; // The longest queue: line 1 or line 3, three items each.
  const w2 = queues.take(undefined)!;
  assert.notEqual(w1[0], w2[0], "two workers take two different holes");
  const mine = queues.take(w1[0])!;
  assert.equal(mine[0], w1[0], "a worker stays on its hole while it has work");
  const order: number[] = [w1[1], w2[1], mine[1]];
  let current: string | undefined = w1[0];
  for (let next = queues.take(current); next; next = queues.take(current)) {
    order.push(next[1]);
    current = next[0];
  }
  assert.deepEqual([...order].sort(), [0, 1, 2, 3, 4, 5, 6], "every item is taken exactly once");
});
