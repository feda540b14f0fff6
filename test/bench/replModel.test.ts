/**
 * The peers' REPL pools as bench:verify models them (bench/replModel.ts): what each check costs under the
 * simulator's rule (a declaration is reused only when the text up to the next command is unchanged), with a
 * trie over the REPL's history (LeanInteract) or none (Kimina), headers kept per REPL, and the most recently
 * freed REPL taken first. Costs are counted, not timed: every figure here is exact.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { commonPrefix, declarationsToElaborate, ReplPoolModel } from "../../bench/replModel";

const FILE = [
  "import Base.A",
  "",
  "theorem a1 : True := by",
  "  trivial",
  "",
  "theorem a2 : True := by",
  "  trivial",
  "",
  "theorem a3 : True := by",
  "  HOLE",
  "",
  "#print axioms a3",
  "",
].join("\n");

const doc = (candidate: string, file = FILE) => file.replace("HOLE", candidate);

test("declarations elaborated again: from the command the first change falls in (or whose trailing text it touches)", () => {
  const text = doc("simp");
  assert.equal(declarationsToElaborate(text, 0), 3);
  assert.equal(declarationsToElaborate(text, text.indexOf("simp")), 1, "a change in a3's proof: a3 alone");
  assert.equal(
    declarationsToElaborate(text, text.indexOf("theorem a2") - 1),
    3,
    "a change in a1's trailing blank line: a1 owns its trailing whitespace, so it is elaborated again",
  );
  assert.equal(
    declarationsToElaborate(text, text.indexOf("theorem a2")),
    2,
    "a change at a2's start: a1 reused",
  );
  assert.equal(declarationsToElaborate(text, text.length), 0, "#print axioms is not a declaration");
  assert.equal(commonPrefix(doc("simp"), doc("simp_all")), doc("simp").indexOf("simp") + 4);
});

test("LeanInteract's REPL reuses the best earlier command of its own history; Kimina's elaborates from the top", () => {
  const costs = { headerMs: 1000, declMs: 10, editMs: 5 };
  const trie = new ReplPoolModel(1, costs, "trie");
  const none = new ReplPoolModel(1, costs, "none");
  const repl = (model: ReplPoolModel) => (model as unknown as { free: unknown[] }).free[0] as never;
  assert.deepEqual(trie.cost(repl(trie), doc("simp")), { headerLoaded: true, declarations: 3, ms: 1035 });
  (repl(trie) as { headers: Set<string>; history: string[] }).headers.add("Base.A");
  (repl(trie) as { history: string[] }).history.push(doc("simp"), doc("omega"));
  assert.deepEqual(trie.cost(repl(trie), doc("simp_all")), { headerLoaded: false, declarations: 1, ms: 15 });
  // Another file whose first declarations match: reused up to the first change, from the best history entry.
  const other = FILE.replace("theorem a2 : True := by\n  trivial", "theorem b2 : True := by\n  trivial");
  assert.equal(trie.cost(repl(trie), doc("simp", other)).declarations, 2);
  (repl(none) as { headers: Set<string> }).headers.add("Base.A");
  assert.deepEqual(none.cost(repl(none), doc("simp_all")), { headerLoaded: false, declarations: 3, ms: 35 });
});

test("the pool: each REPL keeps its own headers and history; the most recently freed REPL is taken first", async () => {
  const model = new ReplPoolModel(2, { headerMs: 0, declMs: 0, editMs: 0 }, "trie");
  await model.checkAll([doc("simp"), doc("omega")]);
  assert.equal(model.stats.headerLoads, 2, "two REPLs, each loads the header once");
  assert.equal(model.stats.declarations, 6, "nothing to reuse on either REPL yet");
  await model.check(doc("decide"));
  await model.check(doc("rfl"));
  assert.equal(model.stats.headerLoads, 2);
  assert.equal(model.stats.declarations, 8, "then one declaration each, on a REPL that has the file");
  assert.equal(model.stats.checks, 4);
});
