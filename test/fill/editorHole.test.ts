/** The editor's hole: a `sorry` at the cursor, a selection, the rest of the proof from the cursor; and refusals. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { holeAt, withCandidate } from "../../lean-bridge/fill/editorHole";

const TEXT = [
  "namespace N",
  "",
  "theorem t (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by",
  "  have h' : a ≤ b := h",
  "  sorry",
  "",
  "def f (n : Nat) : Nat := n + 1",
  "",
  "theorem u (p : Prop) (hp : p) : p := by",
  "  exact hp",
  "",
  "end N",
  "",
].join("\n");

const at = (line: number, character: number) => ({ start: { line, character }, end: { line, character } });

test("a sorry under the cursor, or on the cursor's line", () => {
  for (const cursor of [at(4, 3), at(4, 0), at(4, 7)]) {
    const r = holeAt(TEXT, cursor);
    assert.equal(r.kind, "ok");
    if (r.kind !== "ok") return;
    assert.equal(r.hole.mode, "sorry");
    assert.equal(r.hole.original, "sorry");
    assert.deepEqual(r.hole.range, { start: { line: 4, character: 2 }, end: { line: 4, character: 7 } });
    assert.equal(r.hole.parts.indent, 2);
    assert.equal(r.hole.parts.kind, "tactic");
    assert.ok(r.hole.parts.prefix.startsWith("theorem t") && r.hole.parts.prefix.endsWith("h\n  "));
    assert.equal(r.hole.parts.suffix, "");
    assert.equal(r.hole.parts.statement, "theorem t (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1");
    assert.equal(withCandidate(TEXT, r.hole, "omega").split("\n")[4], "  omega");
  }
});

test("a selection is the hole, without the blanks around it; the whole proof is kind proof", () => {
  const r = holeAt(TEXT, { start: { line: 3, character: 0 }, end: { line: 5, character: 0 } });
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.equal(r.hole.mode, "selection");
  assert.equal(r.hole.original, "have h' : a ≤ b := h\n  sorry");
  assert.equal(r.hole.parts.kind, "proof");
  assert.equal(r.hole.declaration, "t");
});

test("the cursor elsewhere in a tactic proof: the proof from its line to the end", () => {
  const r = holeAt(TEXT, at(3, 5));
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.equal(r.hole.mode, "rest-of-proof");
  assert.equal(r.hole.original, "have h' : a ≤ b := h\n  sorry");
  const u = holeAt(TEXT, at(9, 4));
  assert.equal(u.kind === "ok" && u.hole.original, "exact hp");
});

test("outside a tactic proof there is no hole, and the message says where to put the cursor", () => {
  for (const cursor of [at(0, 3), at(6, 10)]) {
    const r = holeAt(TEXT, cursor);
    assert.equal(r.kind, "none");
    assert.match((r as { message: string }).message, /sorry.*select tactics|tactic proof/);
  }
  const statement = holeAt(TEXT, at(2, 12));
  assert.equal(statement.kind, "none", "the statement is not part of the proof");
});

test("a tactic proof followed by a `where` clause has a hole, which ends before the clause", () => {
  const text =
    "theorem w (n : Nat) : n + 1 = n + 1 := by\n  exact aux n\nwhere\n  aux (k : Nat) : k + 1 = k + 1 := rfl\n";
  const r = holeAt(text, at(1, 4));
  assert.equal(r.kind, "ok", JSON.stringify(r));
  if (r.kind !== "ok") return;
  assert.equal(r.hole.original, "exact aux n");
  assert.equal(holeAt(text, at(3, 4)).kind, "none", "the clause is not part of the proof");
});
