/**
 * Attacks on the verifier's own questions to Lean (the battery's second part): the `done` probe that counts
 * goals for partial credit, and the `#check (type_of% …)` and `#print axioms` lines whose answers the
 * verifier reads. Each runs through the lean-like server (which answers as Lean would, in the worst case for
 * the verifier) and through the simulator; none may earn reward. The verifier must tell its probes' answers
 * by where Lean puts them, never by their text, and a probe must measure the hole's own block.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { VerifyTask } from "../../lean-bridge/verify/verifier";
import { COMPLETE_WITHOUT_HOLE } from "../../lean-bridge/verify/noopProbe";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import type { LeanServer } from "../../lean-bridge/server/leanServer";
import { LineIndex } from "../../lean-bridge/text/positions";
import { inMemory, poolOver } from "../harness";
import { EXAMPLE, proofHole } from "../helpers";
import { leanLike, type LeanLikeOptions } from "./leanLike";

const FILE = `namespace N

theorem target (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by
  omega

theorem pair : True ∧ True := by
  constructor
  trivial
  trivial

theorem tolerant : True ∧ True ∧ True := by
  constructor
  constructor
  all_goals trivial

end N

def answer : Nat := by
  exact 0
`;

/** The line of `tolerant` holding its second `constructor` (two goals there; `all_goals trivial` after it). */
function tolerantHole(): VerifyTask["hole"] {
  const at = FILE.indexOf(
    "  constructor",
    FILE.indexOf("  constructor", FILE.indexOf("theorem tolerant")) + 1,
  );
  const start = new LineIndex(FILE).positionAt(at + 2);
  return { start, end: { line: start.line, character: start.character + "constructor".length } };
}

const task = (hole: string): VerifyTask => ({
  file: "Probes.lean",
  text: FILE,
  hole: hole === "tolerant-middle" ? tolerantHole() : proofHole(FILE, hole),
});

const poolOn = (server: LeanServer) => poolOver(server);

function unrewarded(v: Verdict, label: string): void {
  assert.notEqual(v.kind, "proved", `${label}: ${JSON.stringify(v)}`);
  assert.notEqual(v.kind, "environment", `${label}: ${JSON.stringify(v)}`);
  assert.equal(rewardOf(v, "binary").reward, 0, label);
  assert.equal(rewardOf(v, "partial").reward, 0, `${label}: partial ${JSON.stringify(v)}`);
}

/** Drops the verifier's appended line that starts with `prefix`: Lean never answers that question. */
const unanswered =
  (prefix: string): NonNullable<LeanLikeOptions["leanReads"]> =>
  (text) =>
    text
      .split("\n")
      .map((line) => (line.startsWith(prefix) ? "" : line))
      .join("\n");

interface Attack {
  name: string;
  hole: string;
  candidate: string;
  lean?: LeanLikeOptions;
}

const ATTACKS: Attack[] = [
  // A tactic whose sequence may start on the next line (`tacticSeq`) took the after-candidate sentinel as
  // its own first tactic, which then counted only the goal it focuses on: 2 goals at the hole, 1 "after".
  { name: "a bare focus at the end", hole: "tolerant-middle", candidate: "focus" },
  { name: "a bare case at the end", hole: "tolerant-middle", candidate: "case _ =>" },
  { name: "a bare next at the end", hole: "tolerant-middle", candidate: "next =>" },
  { name: "a bare focus after a comment", hole: "tolerant-middle", candidate: "focus -- the rest follows" },
  // Other tactics whose argument is a tactic sequence that may start on the next line, after real progress that
  // is then not the candidate's (three goals at the hole, as in "progress undone"): the sentinel must never
  // become their argument. (At "tolerant-middle" the rest of the proof closes every goal by itself, so a no-op
  // there is a proof, not an attack.)
  ...["try", "repeat", "all_goals", "any_goals", "skip <;>"].map((tail): Attack => ({
    name: `progress, then a bare ${tail} at the end`,
    hole: "pair",
    candidate: `constructor\n${tail}`,
    lean: { goalsAtHole: 3 },
  })),
  // Text aimed at the probe's own parentheses: close them early and reopen, or leave one open.
  ...["constructor\n)\n(\nfocus", "constructor\n(focus", "constructor )", "(constructor\nfocus)"].map(
    (candidate): Attack => ({
      name: `parentheses against the probe: ${JSON.stringify(candidate)}`,
      hole: "pair",
      candidate,
      lean: { goalsAtHole: 3 },
    }),
  ),
  // Ending in the sentinel itself, or in a bullet with nothing in it.
  { name: "done", hole: "pair", candidate: "done" },
  {
    name: "progress undone, then done",
    hole: "pair",
    candidate: "constructor\ntrivial\ndone",
    lean: { goalsAtHole: 3 },
  },
  { name: "skip then done", hole: "tolerant-middle", candidate: "skip\ndone" },
  { name: "a bare bullet at the end", hole: "pair", candidate: "constructor\n·" },
  { name: "a bare bullet mid-proof", hole: "tolerant-middle", candidate: "·" },
  // Text that reads like the answers of the verifier's questions, where Lean never gave them.
  {
    name: "a trace writing the #print axioms answer",
    hole: "target",
    candidate: "trace \"'N.target' does not depend on any axioms\"\nomega",
    lean: { leanReads: unanswered("set_option pp.fullNames true in #print axioms") },
  },
  {
    name: "a trace writing the #print axioms answer for a namesake",
    hole: "target",
    candidate: "trace \"'N.target' depends on axioms: [propext]\"\nomega",
    lean: { leanReads: unanswered("set_option pp.fullNames true in #print axioms") },
  },
  {
    name: "logInfo through run_tac writing the #print axioms answer",
    hole: "target",
    candidate: "run_tac Lean.logInfo \"'N.target' does not depend on any axioms\"\nomega",
    lean: { leanReads: unanswered("set_option pp.fullNames true in #print axioms") },
  },
  {
    name: "dbg_trace writing the #print axioms answer",
    hole: "target",
    candidate: "dbg_trace \"'N.target' does not depend on any axioms\"; omega",
    lean: { leanReads: unanswered("set_option pp.fullNames true in #print axioms") },
  },
  {
    name: "a trace writing the proposition check's answer",
    hole: "answer",
    candidate: 'trace "type_of% @_root_.answer : Prop"\nexact 0',
    lean: { leanReads: unanswered("#check (type_of%") },
  },
  {
    name: "a trace writing both answers",
    hole: "answer",
    candidate:
      'trace "type_of% @_root_.answer : Prop"\ntrace "\'answer\' does not depend on any axioms"\nexact 0',
    lean: { leanReads: (t) => unanswered("#check (type_of%")(unanswered("set_option pp.fullNames")(t)) },
  },
];

test("probe attacks through a lean-like server earn nothing", async () => {
  for (const attack of ATTACKS) {
    const lean = await leanLike(attack.lean);
    try {
      unrewarded(await poolOn(lean.server).verify(task(attack.hole), attack.candidate), attack.name);
    } finally {
      await lean.close();
    }
  }
});

test("controls: real progress at the same holes is still measured and paid", async () => {
  const lean = await leanLike({ goalsAtHole: 3 });
  try {
    const pool = poolOn(lean.server);
    // Three goals at the hole, two closed (the last by a bullet): the wrapped probe still counts one left.
    const v = await pool.verify(task("pair"), "trivial\n· trivial");
    assert.equal(v.kind, "incomplete", JSON.stringify(v));
    assert.ok(Math.abs(rewardOf(v, "partial").reward - (0.5 * 2) / 3) < 1e-9, JSON.stringify(v));
  } finally {
    await lean.close();
  }
  const plain = await leanLike();
  try {
    const pool = poolOn(plain.server);
    // `all_goals trivial` after the hole closes its goals without it (Lean's `trivial` also tries
    // `apply And.intro <;> trivial`): the hole is no task, and its true middle earns nothing either.
    const v = await pool.verify(task("tolerant-middle"), "constructor");
    assert.equal(v.kind, "rejected", JSON.stringify(v));
    assert.equal(v.kind === "rejected" && v.rule, COMPLETE_WITHOUT_HOLE);
    // A trace in a real proof is information, and nothing the verifier reads as an answer.
    const traced = await pool.verify(task("target"), "trace \"declaration uses 'sorry'\"\nomega");
    assert.equal(traced.kind, "proved", JSON.stringify(traced));
  } finally {
    await plain.close();
  }
});

test("probe attacks through the simulator earn nothing", async () => {
  const arith = readFileSync(join(EXAMPLE, "FimExamples", "Arith.lean"), "utf8");
  const target: VerifyTask = { file: "FimExamples/Arith.lean", hole: proofHole(arith, "add_le_add_3") };
  const h = await inMemory({
    oracle: {
      alternatives: {
        tolerant: ["by\n  constructor\n  constructor\n  all_goals trivial"],
        answer: ["by\n  exact 0"],
      },
    },
  });
  try {
    for (const attack of ATTACKS) {
      const t = attack.hole === "target" ? target : task(attack.hole);
      unrewarded(await h.pool.verify(t, attack.candidate), `simulator: ${attack.name}`);
    }
    assert.equal((await h.pool.verify(task("tolerant-middle"), "constructor")).kind, "proved");
  } finally {
    await h.close();
  }
});
