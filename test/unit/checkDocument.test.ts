import { test } from "node:test";
import assert from "node:assert/strict";
import { parseFile } from "../../lean-bridge/lean/commands";
import { LineIndex } from "../../lean-bridge/text/positions";
import { buildCheckDocument, locateHole, reindent } from "../../lean-bridge/verify/checkDocument";
import { proofHole } from "../helpers";

const FILE = `namespace N

theorem first (a : Nat) : a + 0 = a := by
  simp

theorem second (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by
  have h2 : a ≤ b := h
  omega

theorem third : True := by
  trivial
end N
`;

function build(candidate: string, name = "second") {
  const parsed = parseFile(FILE);
  const index = new LineIndex(FILE);
  const located = locateHole(parsed, index, proofHole(FILE, name));
  assert.equal(located.kind, "ok");
  if (located.kind !== "ok") throw new Error();
  return buildCheckDocument(parsed, located.hole, candidate);
}

test("the original middle gives back the file up to the declaration, plus #print axioms", () => {
  const r = build("have h2 : a ≤ b := h\n  omega");
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  const cut = FILE.indexOf("\n\ntheorem third");
  assert.equal(r.doc.text, FILE.slice(0, cut) + "\n\n#print axioms N.second\n");
  assert.equal(r.doc.text.includes("theorem third"), false, "later declarations are dropped");
});

test("candidates indented from column 0 are moved to the hole's column", () => {
  const r = build("have h2 : a ≤ b := h\nomega");
  assert.equal(r.kind, "ok");
  if (r.kind === "ok") assert.ok(r.doc.text.includes("  have h2 : a ≤ b := h\n  omega\n"));
  assert.deepEqual(reindent("  simp\n    exact h\n  done", 4), {
    text: "simp\n      exact h\n    done",
    shift: 2,
  });
});

test("a candidate that closes the declaration and adds another is caught as tampering", () => {
  const r = build("omega\n\ntheorem extra : False := by\n  simp");
  assert.equal(r.kind, "tampered");
});

test("holes outside tactic proofs are refused with a reason", () => {
  const parsed = parseFile(FILE);
  const index = new LineIndex(FILE);
  const header = locateHole(parsed, index, {
    start: { line: 2, character: 0 },
    end: { line: 2, character: 7 },
  });
  assert.equal(header.kind, "bad-hole");
  const outside = locateHole(parsed, index, {
    start: { line: 99, character: 0 },
    end: { line: 99, character: 1 },
  });
  assert.equal(outside.kind, "bad-hole");
  if (outside.kind === "bad-hole") assert.match(outside.message, /outside the file/);
});
