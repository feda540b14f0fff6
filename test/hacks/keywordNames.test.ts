/**
 * The battery's names class (issue 23): legitimate proofs the policy once refused because a name looked like
 * a word it forbids, each read as Lean's tokenizer reads it (src/Lean/Parser/Basic.lean: a dotted name is one
 * identifier whose parts are never keywords; a tactic's leading word is a name outside a tactic's start; `#`
 * before a one-letter name is Mathlib's card notation, also before a field). Each must be proved through the
 * lean-like server and the simulator; the attacks beside them, the same words where Lean reads the tactic or
 * command, must earn nothing. test/real-lean/hacks.test.ts runs them against Lean.
 */
import { test } from "node:test";
import { throughLeanLike, throughSimulator } from "./fileCases";
import { NAMES_FILE, nameCases } from "./keywordNames.cases";

const CASES = nameCases();

test("names that look like keywords are proved through the lean-like server; the keywords beside them earn nothing", async () => {
  await throughLeanLike("Names.lean", NAMES_FILE, [...CASES.controls, ...CASES.attacks]);
});

test("names that look like keywords are proved through the simulator; the keywords beside them earn nothing", async () => {
  await throughSimulator("Names.lean", NAMES_FILE, [...CASES.controls, ...CASES.attacks]);
});
