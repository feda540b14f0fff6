/**
 * The real-Lean tier, verdicts: the pool on the embedded Lean 4.35.0 over the prelude fixture workspace, as
 * every command starts it (startVerifier with `lean: embedded`). Every verdict kind (proved, failed,
 * incomplete, rejected, environment, timeout, crashed) and partial reward; timeouts of the infrastructure and of
 * the candidate, a crash the candidate causes, the memory cap on every worker, a worker killed during a check,
 * the sandbox, and the files the embedded Lean cannot judge.
 */
import assert from "node:assert/strict";
import { readFileSync, readdirSync, readlinkSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import { which } from "../../lean-bridge/server/launch";
import { LineIndex } from "../../lean-bridge/text/positions";
import { isMasked } from "../../lean-bridge/verify/verdict";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { proofHole } from "../helpers";
import { announceTier, embeddedVerifier, freshWorkspace, tierTest } from "./embeddedTier";

announceTier("test/real-lean/embeddedVerdicts.test.ts");

const BASIC = "PreludeWs/Basic.lean";
const LABEL = "Lean 4.35.0 (embedded runtime, workspace prelude)";

/** The range from the first occurrence of `from` to the end of the first `to` after it. */
function rangeOf(text: string, from: string, to: string) {
  const start = text.indexOf(from);
  const end = text.indexOf(to, start) + to.length;
  assert.ok(start >= 0 && end > start, `${from} … ${to} not found`);
  return new LineIndex(text).rangeAt(start, end);
}

tierTest(
  "embedded Lean: proved, failed, incomplete with partial reward, rejected, each named honestly",
  async () => {
    const ws = freshWorkspace();
    const pool = await embeddedVerifier(ws.root);
    try {
      const text = readFileSync(join(ws.root, BASIC), "utf8");
      const swap = { file: BASIC, hole: proofHole(text, "and_swap") };
      const proved = await pool.verify(swap, "intro h\n  exact And.intro h.right h.left");
      assert.equal(proved.kind, "proved", JSON.stringify(proved));
      assert.equal(proved.verifier.label, LABEL);
      assert.equal(proved.verifier.kind, "lean");
      if (proved.kind === "proved") assert.deepEqual(proved.axioms, []);
      const failed = await pool.verify(swap, "intro h\n  exact h");
      assert.equal(failed.kind, "failed", JSON.stringify(failed));
      assert.equal(rewardOf(failed, "partial").reward, 0);
      const unsolved = await pool.verify(swap, "intro h\n  skip");
      assert.equal(unsolved.kind, "incomplete", JSON.stringify(unsolved));
      const rejected = await pool.verify(swap, "exact sorry");
      assert.equal(rejected.kind, "rejected");
      // Two goals where the hole starts (after `apply And.intro`); closing one of them earns part of a proof.
      const twoGoals = { file: BASIC, hole: rangeOf(text, "exact hp", "exact hq") };
      const half = await pool.verify(twoGoals, "exact hp");
      assert.equal(half.kind, "incomplete", JSON.stringify(half));
      if (half.kind === "incomplete") {
        assert.equal(half.goalsAtHole, 2);
        assert.equal(half.goalsAfterCandidate, 1);
      }
      const partial = rewardOf(half, "partial").reward;
      assert.ok(partial > 0 && partial < 1, `partial reward ${partial}`);
      assert.equal(rewardOf(half, "binary").reward, 0);
      assert.equal((await pool.verify(twoGoals, "exact hp\n  exact hq")).kind, "proved");
    } finally {
      await pool.stop();
      ws.remove();
    }
  },
);

tierTest(
  "embedded Lean: files it cannot judge get environment saying why; the others are judged",
  async () => {
    const ws = freshWorkspace();
    writeFileSync(join(ws.root, "NeedsInit.lean"), "theorem t (p : Prop) (h : p) : p := by\n  exact h\n");
    writeFileSync(
      join(ws.root, "Outside.lean"),
      "prelude\nimport Std.Data\ntheorem t (p : Prop) (h : p) : p := by\n  exact h\n",
    );
    const pool = await embeddedVerifier(ws.root);
    try {
      const init = await pool.verify(
        {
          file: "NeedsInit.lean",
          hole: rangeOf(readFileSync(join(ws.root, "NeedsInit.lean"), "utf8"), "exact h", "exact h"),
        },
        "exact h",
      );
      assert.equal(init.kind, "environment", JSON.stringify(init));
      if (init.kind === "environment") assert.match(init.reason, /does not start with `prelude`/);
      assert.ok(isMasked(init), "never the candidate's fault");
      const outside = await pool.verify(
        {
          file: "Outside.lean",
          hole: rangeOf(readFileSync(join(ws.root, "Outside.lean"), "utf8"), "exact h", "exact h"),
        },
        "exact h",
      );
      assert.equal(outside.kind, "environment");
      if (outside.kind === "environment")
        assert.match(outside.reason, /Std\.Data, which is not a module of this workspace/);
      const text = readFileSync(join(ws.root, BASIC), "utf8");
      assert.equal(
        (await pool.verify({ file: BASIC, hole: proofHole(text, "or_left") }, "exact Or.inl hp")).kind,
        "proved",
      );
    } finally {
      await pool.stop();
      ws.remove();
    }
  },
);

tierTest(
  "embedded Lean: a file without a header is environment, not failed, where Lean itself answers",
  async () => {
    // Lean's own answer for a file that needs Init (the pool's refusal bypassed by a file added after the start).
    const ws = freshWorkspace();
    const pool = await embeddedVerifier(ws.root);
    try {
      writeFileSync(join(ws.root, "Late.lean"), "theorem t (p : Prop) (h : p) : p := by\n  exact h\n");
      const text = readFileSync(join(ws.root, "Late.lean"), "utf8");
      const v = await pool.verify(
        { file: "Late.lean", hole: rangeOf(text, "exact h", "exact h") },
        "exact h",
      );
      assert.equal(v.kind, "environment", JSON.stringify(v));
      if (v.kind === "environment") assert.match(v.reason, /core library/);
    } finally {
      await pool.stop();
      ws.remove();
    }
  },
);

tierTest(
  "embedded Lean: a check past its time limit is a timeout, masked when Lean never reached the candidate",
  async () => {
    const ws = freshWorkspace();
    const pool = await embeddedVerifier(ws.root, { timeoutMs: 1 });
    try {
      const text = readFileSync(join(ws.root, BASIC), "utf8");
      const v = await pool.verify(
        { file: BASIC, hole: proofHole(text, "and_swap") },
        "intro h\n  exact And.intro h.right h.left",
      );
      assert.equal(v.kind, "timeout", JSON.stringify(v));
      if (v.kind === "timeout") {
        assert.equal(v.timeoutMs, 1);
        assert.equal(isMasked(v), v.cause === "infrastructure");
      }
    } finally {
      await pool.stop();
      ws.remove();
    }
  },
);

/** Lean's file workers serving documents under `root`, read from /proc: pid and argv. */
function workersUnder(root: string): { pid: number; argv: string[] }[] {
  const found: { pid: number; argv: string[] }[] = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0").filter(Boolean);
    } catch {
      continue;
    }
    if (argv.includes("--worker") && argv.some((a) => a.includes(root)))
      found.push({ pid: Number(entry), argv });
  }
  return found;
}

tierTest(
  "embedded Lean: every file worker runs under the memory cap, and the workspace still builds under a small one",
  async () => {
    const ws = freshWorkspace();
    // Under `lean -M64` the fixture's core module does not build ("(kernel) excessive memory consumption
    // detected"): the checks run under the cap, the workspace's own build does not.
    const pool = await embeddedVerifier(ws.root, { memoryMb: 64 });
    try {
      const text = readFileSync(join(ws.root, BASIC), "utf8");
      const v = await pool.verify(
        { file: BASIC, hole: proofHole(text, "and_swap") },
        "intro h\n  exact And.intro h.right h.left",
      );
      assert.equal(v.kind, "proved", JSON.stringify(v));
      const workers = workersUnder(ws.root);
      assert.ok(workers.length > 0, "the check's document has a live worker");
      for (const w of workers) {
        assert.ok(w.argv.includes("-M64"), `worker ${w.pid}: ${w.argv.join(" ")}`);
        assert.ok(w.argv.includes("-Dserver.reportDelayMs=0"), `worker ${w.pid}: ${w.argv.join(" ")}`);
      }
    } finally {
      await pool.stop();
      ws.remove();
    }
  },
);

tierTest(
  "embedded Lean: a worker killed during a check is the infrastructure's (masked) or retried, and the pool goes on",
  async () => {
    const ws = freshWorkspace();
    const pool = await embeddedVerifier(ws.root);
    try {
      const text = readFileSync(join(ws.root, BASIC), "utf8");
      const task = { file: BASIC, hole: proofHole(text, "and_swap") };
      const proof = "intro h\n  exact And.intro h.right h.left";
      assert.equal((await pool.verify(task, proof)).kind, "proved");
      // The slot's document keeps its worker: kill it as the next check starts on it.
      const next = pool.verify(task, "intro h\n  exact And.intro h.right h.right");
      const victims = workersUnder(ws.root);
      assert.ok(victims.length > 0);
      for (const w of victims) process.kill(w.pid, "SIGKILL");
      const v = await next;
      assert.ok(v.kind === "failed" || (v.kind === "crashed" && isMasked(v)), JSON.stringify(v));
      assert.equal((await pool.verify(task, proof)).kind, "proved", "a fresh worker judges the next check");
    } finally {
      await pool.stop();
      ws.remove();
    }
  },
);

tierTest(
  "embedded Lean: a candidate that runs Lean past the time limit times out as its own failure (not masked)",
  async () => {
    const ws = freshWorkspace();
    // An honest check of this hole takes about a tenth of a second here; the endless instance search, for ever.
    const pool = await embeddedVerifier(ws.root, { timeoutMs: 3_000 });
    try {
      const text = readFileSync(join(ws.root, BASIC), "utf8");
      const task = { file: BASIC, hole: proofHole(text, "and_swap") };
      assert.equal((await pool.verify(task, "intro h\n  exact And.intro h.right h.left")).kind, "proved");
      const v = await pool.verify(
        task,
        "intro h\n  exact (fun (_ : Endless Nat.zero) => And.intro h.right h.left) inferInstance",
      );
      assert.equal(v.kind, "timeout", JSON.stringify(v));
      if (v.kind === "timeout") assert.equal(v.cause, "candidate");
      assert.equal(isMasked(v), false, "the candidate's own timeout is trained on");
      assert.equal(
        (await pool.verify(task, "intro h\n  exact And.intro h.right h.left")).kind,
        "proved",
        "the pool recovers",
      );
    } finally {
      await pool.stop();
      ws.remove();
    }
  },
);

tierTest(
  "embedded Lean: a candidate whose worker dies twice (killed by the CPU limit) is crashed, charged to it",
  async (t) => {
    if (!which("prlimit")) {
      t.skip("prlimit is not installed: the CPU limit is not applied here");
      return;
    }
    const ws = freshWorkspace();
    // RLIMIT_CPU is per process: the endless search spends the worker's seconds, the idle watchdog keeps its own.
    const pool = await embeddedVerifier(ws.root, { cpuSeconds: 3, timeoutMs: 120_000 });
    try {
      const text = readFileSync(join(ws.root, BASIC), "utf8");
      const task = { file: BASIC, hole: proofHole(text, "and_swap") };
      const v = await pool.verify(
        task,
        "intro h\n  exact (fun (_ : Endless Nat.zero) => And.intro h.right h.left) inferInstance",
      );
      assert.equal(v.kind, "crashed", JSON.stringify(v));
      if (v.kind === "crashed") {
        assert.equal(v.cause, "candidate");
        assert.match(v.reason, /crashed again on a fresh Lean worker/);
      }
      assert.equal(isMasked(v), false);
      assert.equal(
        (await pool.verify(task, "intro h\n  exact And.intro h.right h.left")).kind,
        "proved",
        "the pool recovers",
      );
    } finally {
      await pool.stop();
      ws.remove();
    }
  },
);

tierTest("embedded Lean: inside the sandbox (bubblewrap) the verdicts are the same", async (t) => {
  if (!which("bwrap")) {
    t.skip("bwrap is not installed: the sandbox is not used here");
    return;
  }
  const ws = freshWorkspace();
  const pool = await embeddedVerifier(ws.root, { sandbox: true });
  try {
    const text = readFileSync(join(ws.root, BASIC), "utf8");
    const hole = { file: BASIC, hole: proofHole(text, "and_swap") };
    assert.equal((await pool.verify(hole, "intro h\n  exact And.intro h.right h.left")).kind, "proved");
    assert.equal((await pool.verify(hole, "intro h\n  exact h")).kind, "failed");
    // Each file worker runs through the confining launcher (server/strays.ts): the server's LEAN_WORKER_PATH
    // names it, and the worker it ran is the real `lean` (the launcher execs it after confining itself).
    const workers = leanProcesses(
      (argv) => argv.includes("--worker") && argv.at(-1)!.startsWith(pathToFileURL(ws.root).href),
    );
    assert.equal(workers.length, 1, JSON.stringify(workers.map((w) => w.argv)));
    const worker = workers[0]!;
    assert.equal(basename(readlinkSync(`/proc/${worker.pid}/exe`)), "lean");
    const stat = readFileSync(`/proc/${worker.pid}/stat`, "utf8");
    const serverPid = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1];
    const environ = readFileSync(`/proc/${serverPid}/environ`, "utf8").split("\0");
    assert.ok(
      environ.some((e) => /^LEAN_WORKER_PATH=.*\/lean-worker-confined-[0-9a-f]+$/.test(e)),
      "the server starts its workers through the launcher",
    );
  } finally {
    await pool.stop();
    ws.remove();
  }
});

/** The processes whose command line `wanted` accepts (this machine's /proc). */
function leanProcesses(wanted: (argv: string[]) => boolean): { pid: number; argv: string[] }[] {
  const out: { pid: number; argv: string[] }[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8").split("\0").filter(Boolean);
      if (argv.length > 0 && wanted(argv)) out.push({ pid: Number(name), argv });
    } catch {
      // Ended meanwhile.
    }
  }
  return out;
}
