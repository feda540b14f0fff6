/**
 * The battery's string class (issue 23): Lean reads the braces of a string as code after any syntax that
 * takes `interpolatedStr(term)` (core's `trace[cls] "…{e}…"`, `throwErrorAt stx "…"`, `m!`, `s!`, a
 * library's macro), so a candidate can hide a `by` block there: `set_option debug.skipKernelTC true in
 * run_tac Lean.addDecl …` adds `cheat : False` without the kernel, and `exact cheat.elim` then closes any
 * goal. Every attack here hides such code in a string (after `]`, `)`, an identifier, a keyword and a symbol;
 * in `m!`, `s!`, `f!` and plain strings; behind nested strings, unterminated or escaped braces, comments and
 * char literals) and must earn nothing through the lean-like server, whose model of tactics proves the
 * visible `exact cheat.elim`, and through the simulator. Legitimate strings beside them are proved.
 * test/real-lean/hacks.test.ts runs them against Lean.
 */
import { test } from "node:test";
import { throughLeanLike, throughSimulator } from "./fileCases";
import { STRINGS_FILE, stringCases } from "./hiddenInStrings.cases";

const CASES = stringCases();

test("code hidden in a string's braces earns nothing through the lean-like server; legitimate strings are proved", async () => {
  await throughLeanLike("Strings.lean", STRINGS_FILE, [...CASES.attacks, ...CASES.controls]);
});

test("code hidden in a string's braces earns nothing through the simulator; legitimate strings are proved", async () => {
  await throughSimulator("Strings.lean", STRINGS_FILE, [...CASES.attacks, ...CASES.controls]);
});
