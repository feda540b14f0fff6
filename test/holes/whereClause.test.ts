/** Mining: a tactic proof followed by a `where` clause is mined (the verifier checks it); the clause is not. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mineText } from "../../lean-bridge/holes/mine";

test("holes of a tactic proof with a `where` clause stop before the clause; structure bodies are skipped", () => {
  const text =
    "theorem w (n : Nat) : n + 1 = n + 1 := by\n  have := aux n\n  exact this\nwhere\n  aux (k : Nat) : k + 1 = k + 1 := rfl\n\n" +
    "def answer : Nat := by\n  exact x\nwhere\n  x : Nat := 0\n\n" +
    "instance : Inhabited Nat where\n  default := 0\n";
  const mined = mineText(text);
  assert.ok(mined.holes.length > 0);
  for (const h of mined.holes) {
    assert.equal(h.decl, "w");
    assert.ok(!h.middle.includes("where") && !h.middle.includes("aux (k"), h.middle);
  }
  assert.ok(mined.holes.some((h) => h.kind === "proof" && h.middle === "have := aux n\n  exact this"));
  assert.equal(mined.skipped["where-clause"], 1, "the instance's structure body");
  assert.equal(mined.skipped["data-valued-definition"], 1, "a def of data stays out, where clause or not");
});
