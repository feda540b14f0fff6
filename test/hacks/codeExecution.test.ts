/**
 * The code-execution battery (codeExecution.cases.ts) through the policy, the lean-like server and the
 * simulator: every route earns nothing and ends in no masked outcome, and the legitimate spellings beside
 * them are proved. The lean-like server proves whatever closes the goal, as a Lean that ran the code would,
 * so each attack is refused before Lean or not at all.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { checkCandidate } from "../../lean-bridge/verify/policy";
import { CODE_ATTACKS, CODE_CONTROLS, CODE_FILE } from "./codeExecution.cases";
import { throughLeanLike, throughSimulator } from "./fileCases";

test("the policy refuses every code-execution route and passes the controls", () => {
  for (const c of CODE_ATTACKS) assert.equal(checkCandidate(c.candidate).kind, "rejected", c.name);
  for (const c of CODE_CONTROLS) assert.deepEqual(checkCandidate(c.candidate), { kind: "allowed" }, c.name);
});

test("code-execution routes through the lean-like server earn nothing; the controls are proved", async () => {
  await throughLeanLike("Code.lean", CODE_FILE, [...CODE_CONTROLS, ...CODE_ATTACKS]);
});

test("code-execution routes through the simulator earn nothing; the controls are proved", async () => {
  await throughSimulator("Code.lean", CODE_FILE, [...CODE_CONTROLS, ...CODE_ATTACKS]);
});
