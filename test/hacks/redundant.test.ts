/**
 * Redundant holes (the battery's third part): a hole whose proof is complete without its middle (its goals
 * closed before it, or closed by the rest of the proof anyway) proves with any no-op in it, so paying there
 * would teach the model to write nothing. The verifier asks Lean once per hole with its own `skip`
 * (noopProbe.ts); where that proves, every candidate is `rejected` (reward 0, never masked). Run through the
 * lean-like server and the simulator; the control, a hole that needs its middle, still pays for it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { VerifyTask } from "../../lean-bridge/verify/verifier";
import { COMPLETE_WITHOUT_HOLE } from "../../lean-bridge/verify/noopProbe";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { isMasked, type Verdict } from "../../lean-bridge/verify/verdict";
import type { LeanServer } from "../../lean-bridge/server/leanServer";
import { LineIndex } from "../../lean-bridge/text/positions";
import { inMemory, poolOver } from "../harness";
import { leanLike } from "./leanLike";

const FILE = `theorem closes_anyway (a b : Nat) (h : a + 0 ≤ b) : a ≤ b + 1 := by
  simp at h
  omega

theorem closed_before (a : Nat) : a + 0 = a := by
  simp
  done

theorem needed : True ∧ True := by
  constructor
  trivial
  trivial
`;

/** What the simulator knows to be proofs of FILE's theorems (it has no tactics of its own). */
const ORACLE = {
  alternatives: {
    closes_anyway: ["by\n  simp at h\n  omega", "by\n  omega"],
    closed_before: ["by\n  simp\n  done"],
    needed: ["by\n  constructor\n  trivial\n  trivial"],
  },
};

/** The hole: the line after `:= by` of `name` plus `line` (0: the first step), the whole step. */
function stepHole(name: string, line: number): VerifyTask {
  const index = new LineIndex(FILE);
  const decl = index.positionAt(FILE.indexOf(`theorem ${name}`)).line;
  const text = FILE.split("\n")[decl + 1 + line] ?? "";
  const start = { line: decl + 1 + line, character: 2 };
  return {
    file: "Redundant.lean",
    text: FILE,
    hole: { start, end: { line: start.line, character: text.length } },
  };
}

const MIDDLE_NOT_NEEDED = stepHole("closes_anyway", 0); // `simp at h`; `omega` needs none of it
const GOALS_CLOSED_BEFORE = stepHole("closed_before", 1); // `done`, after `simp` closed the goal
const NEEDED = stepHole("needed", 1); // the first `trivial`: without it one goal stays open

/** Candidates that do nothing: none may earn anything at a redundant hole. */
const NO_OPS = ["skip", "done", "all_goals skip", "-- nothing to do here", "/- nothing -/ skip", "   \n  "];

function unrewarded(v: Verdict, label: string): void {
  assert.notEqual(v.kind, "proved", `${label}: ${JSON.stringify(v)}`);
  assert.equal(
    isMasked(v),
    false,
    `${label}: a no-op must never choose a masked outcome: ${JSON.stringify(v)}`,
  );
  assert.equal(rewardOf(v, "binary").reward, 0, label);
  assert.equal(rewardOf(v, "partial").reward, 0, `${label}: partial ${JSON.stringify(v)}`);
}

async function battery(verify: (task: VerifyTask, candidate: string) => Promise<Verdict>, who: string) {
  for (const [label, hole] of [
    ["middle not needed", MIDDLE_NOT_NEEDED],
    ["goals closed before", GOALS_CLOSED_BEFORE],
  ] as const) {
    for (const candidate of NO_OPS)
      unrewarded(await verify(hole, candidate), `${who}: ${label} + ${JSON.stringify(candidate)}`);
  }
  // `skip` proves where the goals were closed before the hole, as in Lean: refused as no task, not failed.
  const skipped = await verify(GOALS_CLOSED_BEFORE, "skip");
  assert.equal(
    skipped.kind === "rejected" && skipped.rule,
    COMPLETE_WITHOUT_HOLE,
    `${who}: ${JSON.stringify(skipped)}`,
  );
  assert.match(skipped.kind === "rejected" ? skipped.reason : "", /complete without it/);
  // The hole's own middle is no better: the hole is not a task.
  const middle = await verify(GOALS_CLOSED_BEFORE, "done");
  assert.equal(
    middle.kind === "rejected" && middle.rule,
    COMPLETE_WITHOUT_HOLE,
    `${who}: ${JSON.stringify(middle)}`,
  );
  // The control: where the hole needs its middle, `skip` fails and the true middle is proved.
  unrewarded(await verify(NEEDED, "skip"), `${who}: control + skip`);
  const proved = await verify(NEEDED, "trivial");
  assert.equal(proved.kind, "proved", `${who}: control: ${JSON.stringify(proved)}`);
  assert.equal(rewardOf(proved, "binary").reward, 1);
}

const poolOn = (server: LeanServer) => poolOver(server);

test("redundant holes through a lean-like server: no no-op earns anything; the control is paid", async () => {
  const lean = await leanLike();
  try {
    const pool = poolOn(lean.server);
    await battery((task, candidate) => pool.verify(task, candidate), "lean-like");
    // The no-op is asked once per hole, whatever the candidates: the second proof finds it cached.
    const checks = pool.stats.checks;
    assert.equal((await pool.verify(NEEDED, "exact True.intro")).kind, "proved");
    assert.equal(pool.stats.checks - checks, 1, "a new proof of a known hole costs its own check only");
  } finally {
    await lean.close();
  }
});

test("redundant holes through the simulator: no no-op earns anything; the control is paid", async () => {
  const h = await inMemory({ oracle: ORACLE });
  try {
    await battery((task, candidate) => h.pool.verify(task, candidate), "simulator");
  } finally {
    await h.close();
  }
});
