/**
 * Property tests for partial reward with gaming candidates, through the lean-like server (test/hacks): for
 * seeded random candidates built from real steps, no-ops and padding, no-op candidates earn exactly 0,
 * padding never raises a reward, a failed candidate earns 0, and nothing but a proof earns 1. A timeout or crash
 * earns 0 in every mode: the trainer takes these rewards as they are (rewards are computed here, once).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { leanLike } from "../hacks/leanLike";
import { poolOver } from "../harness";
import { proofHole } from "../helpers";

const FILE = `theorem three : True ∧ True ∧ True := by
  trivial
  trivial
  trivial
`;

const NO_OPS = ["skip", "all_goals skip", "-- nothing here", "/- a comment -/", ""];
const STEPS = ["trivial", "constructor", "skip", "all_goals skip"];

/** A small deterministic PRNG (mulberry32), so every run checks the same candidates. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const pick = <T>(rand: () => number, xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;

function pad(lines: string[], rand: () => number): string[] {
  const out: string[] = [];
  for (const line of lines) {
    while (rand() < 0.4) out.push(pick(rand, NO_OPS));
    out.push(line);
  }
  while (rand() < 0.4) out.push(pick(rand, NO_OPS));
  return out;
}

test("partial reward under gaming: no-ops earn 0, padding never helps, failures earn 0, only proofs earn 1", async () => {
  const lean = await leanLike({ goalsAtHole: 3 });
  const pool = poolOver(lean.server);
  const task = { file: "Three.lean", text: FILE, hole: proofHole(FILE, "three") };
  const reward = async (lines: string[]) => {
    const text = lines.join("\n");
    if (text.trim() === "") return { reward: 0, kind: "rejected" };
    const v = await pool.verify(task, text);
    return { reward: rewardOf(v, "partial").reward, kind: v.kind };
  };
  const rand = random(20_261_123);
  let sawPartial = false;
  try {
    for (let k = 0; k < 40; k++) {
      const noOps = Array.from({ length: 1 + Math.floor(rand() * 6) }, () => pick(rand, NO_OPS));
      assert.equal((await reward(noOps)).reward, 0, `no-op candidate ${JSON.stringify(noOps)}`);

      const steps = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(rand, STEPS));
      const base = await reward(steps);
      if (base.kind !== "proved") assert.ok(base.reward < 1, `${JSON.stringify(steps)} earns ${base.reward}`);
      if (base.reward > 0 && base.kind !== "proved") sawPartial = true;
      const padded = pad(steps, rand);
      const withPadding = await reward(padded);
      assert.ok(
        withPadding.reward <= base.reward,
        `padding raised ${JSON.stringify(steps)} (${base.reward}) to ${withPadding.reward}: ${JSON.stringify(padded)}`,
      );

      const failing = [...pad(steps, rand), 'fail "stop"', ...pad(["trivial"], rand)];
      assert.equal((await reward(failing)).reward, 0, `failed candidate ${JSON.stringify(failing)}`);
    }
  } finally {
    await lean.close();
  }
  assert.ok(sawPartial, "some candidate made real progress and earned partial credit");
});

test("a timeout or a crash earns 0 in every reward mode, whoever caused it", () => {
  const verifier = { kind: "simulator" as const, version: "0", label: "simulator (not Lean)" };
  for (const mode of ["binary", "partial"] as const)
    for (const cause of ["candidate", "infrastructure"] as const) {
      const base = { elapsedMs: 1, verifier, diagnostics: [], cause };
      assert.equal(rewardOf({ ...base, kind: "timeout", timeoutMs: 10 }, mode).reward, 0);
      assert.equal(rewardOf({ ...base, kind: "crashed", reason: "worker died" }, mode).reward, 0);
    }
});
