/**
 * The battery's file-text class (issue 23): a candidate is judged as it will stand in the file. Where a hole
 * ends mid-line, a trailing `--` comment swallows the rest of the line in Lean (`constructor -- …` before
 * `; trivial`, a closing bracket), while the check document, which drops trailing comments, would still read it;
 * and a candidate whose last token runs into the file's text after the hole (`exact sor` before `ry`) makes
 * a token the policy never saw. Both must earn nothing through the lean-like server (whose model would prove
 * the check document without them) and the simulator; the same holes with the comment removed, or written as
 * `/- … -/`, are proved. test/real-lean/hacks.test.ts runs them against Lean.
 */
import { test } from "node:test";
import { throughLeanLike, throughSimulator } from "./fileCases";
import { MIDLINE_FILE, fileTextCases } from "./fileText.cases";

const CASES = fileTextCases();

test("a candidate judged as it will stand in the file, through the lean-like server", async () => {
  await throughLeanLike("FileText.lean", MIDLINE_FILE, [...CASES.attacks, ...CASES.controls]);
});

test("a candidate judged as it will stand in the file, through the simulator", async () => {
  await throughSimulator("FileText.lean", MIDLINE_FILE, [...CASES.attacks, ...CASES.controls]);
});
