/**
 * The battery's third part: ways out of the hole that an RL policy would try next (termination clauses with
 * `sorry`, attributes that swap in compiled code, `unsafe`, `omit`/`include`, `private` redeclarations,
 * elaboration code behind `open … in` or a nested `by`, options inside nested blocks, search tactics inside
 * terms, `sorry` spelled with invisible or look-alike characters, compiled-code tactics other than
 * `native_decide`). Each runs through the lean-like server and the simulator; none may earn reward, and the
 * legitimate controls beside them are proved.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { VerifyTask } from "../../lean-bridge/verify/verifier";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import { inMemory, poolOver } from "../harness";
import { EXAMPLE, proofHole } from "../helpers";
import { leanLike } from "./leanLike";

const FILE = `namespace N

theorem target (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by
  omega

end N
`;

interface Escape {
  name: string;
  candidate: string;
  /**
   * Whether the lean-like server can stand for Lean on it. It has no name resolution: `exact ѕorry` (a
   * Cyrillic ѕ) is an unknown identifier to Lean, but a closing `exact` to it; the simulator and the
   * policy answer those.
   */
  leanLike?: false;
}

const ESCAPES: Escape[] = [
  // Termination clauses end the tactic block; with `sorry` in them they are a proof hole as well.
  { name: "decreasing_by sorry", candidate: "omega\ndecreasing_by sorry" },
  { name: "decreasing_by with a tactic", candidate: "omega\ndecreasing_by omega" },
  { name: "termination_by", candidate: "omega\ntermination_by 0" },
  {
    name: "a local recursive function ending in a termination clause",
    candidate: "let rec f : Nat → False\n  | n => f (n + 1)\ntermination_by n => n\nexact (f 0).elim",
  },
  // Attributes and modifiers that swap the kernel's view for compiled code or leave the declaration.
  { name: "@[implemented_by]", candidate: "omega\n@[implemented_by id] def x := 1" },
  { name: "unsafe in a term", candidate: "exact unsafe (unsafeCast ())" },
  { name: "a private redeclaration", candidate: "omega\nprivate theorem N.target : True := trivial" },
  { name: "omit … in", candidate: "omit h in omega" },
  { name: "include … in", candidate: "include h in omega" },
  // Elaboration code through an escape hatch.
  { name: "run_cmd inside a nested by", candidate: "exact (by run_cmd pure ())" },
  { name: "elab inside the block", candidate: 'elab "win" : tactic => pure ()\nwin' },
  {
    name: "macro_rules inside the block",
    candidate: "macro_rules | `(tactic| omega) => `(tactic| admit)\nomega",
  },
  { name: "admitGoal through guillemets", candidate: "exact Lean.«Elab».admitGoal" },
  {
    name: "admitGoal through open … in and run_tac",
    candidate: "open Lean Elab Tactic in run_tac admitGoal (← getMainGoal)",
  },
  // Limits and searches hidden in nested blocks.
  {
    name: "unbounded heartbeats in a nested block",
    candidate: "have : True := by set_option maxHeartbeats 0 in trivial\nomega",
  },
  { name: "exact? in a nested term", candidate: "exact (by exact?)" },
  { name: "apply? using", candidate: "apply? using h" },
  // Compiled code other than native_decide.
  { name: "bv_decide", candidate: "bv_decide" },
  { name: "native through a config structure", candidate: "decide (config := { native := true })" },
  { name: "ofReduceBool through guillemets", candidate: "exact Lean.«ofReduceBool» _ _ rfl" },
  // `sorry` spelled so that a person reads it but Lean (or our lexer) reads something else.
  { name: "a zero-width space inside sorry", candidate: "exact s\u200borry" },
  { name: "a zero-width joiner inside sorry", candidate: "omega\nsor\u200dry" },
  { name: "a byte order mark", candidate: "\ufeffomega" },
  { name: "a Cyrillic look-alike of sorry", candidate: "exact ѕorry", leanLike: false },
  { name: "a Greek look-alike of admit", candidate: "exact αdmit", leanLike: false },
];

const CONTROLS = [
  "open Nat in omega",
  "open Classical in omega",
  "have bv := h\nomega",
  "set_option maxHeartbeats 400000 in omega",
];

function unrewarded(v: Verdict, label: string): void {
  assert.notEqual(v.kind, "proved", `${label}: ${JSON.stringify(v)}`);
  assert.notEqual(v.kind, "environment", `${label}: ${JSON.stringify(v)}`);
  assert.equal(rewardOf(v, "binary").reward, 0, label);
  assert.equal(rewardOf(v, "partial").reward, 0, `${label}: partial ${JSON.stringify(v)}`);
}

test("escapes through a lean-like server earn nothing; the controls beside them are proved", async () => {
  const lean = await leanLike();
  try {
    const pool = poolOver(lean.server);
    const task: VerifyTask = { file: "Escapes.lean", text: FILE, hole: proofHole(FILE, "target") };
    for (const escape of ESCAPES.filter((e) => e.leanLike !== false))
      unrewarded(await pool.verify(task, escape.candidate), escape.name);
    for (const candidate of CONTROLS) {
      const v = await pool.verify(task, candidate);
      assert.equal(v.kind, "proved", `${candidate}: ${JSON.stringify(v)}`);
    }
  } finally {
    await lean.close();
  }
});

test("escapes through the simulator earn nothing", async () => {
  const arith = readFileSync(join(EXAMPLE, "FimExamples", "Arith.lean"), "utf8");
  const target: VerifyTask = { file: "FimExamples/Arith.lean", hole: proofHole(arith, "add_le_add_3") };
  const h = await inMemory();
  try {
    for (const escape of ESCAPES)
      unrewarded(await h.pool.verify(target, escape.candidate), `simulator: ${escape.name}`);
    assert.equal((await h.pool.verify(target, "omega")).kind, "proved");
  } finally {
    await h.close();
  }
});
