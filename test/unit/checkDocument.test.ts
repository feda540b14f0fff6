import { test } from "node:test";
import assert from "node:assert/strict";
import { parseFile } from "../../lean-bridge/lean/commands";
import { featuresOfToolchain } from "../../lean-bridge/verify/toolchain";
import { LineIndex } from "../../lean-bridge/text/positions";
import { buildCheckDocument, locateHole, statementReference } from "../../lean-bridge/verify/checkDocument";
import { reindent, withoutTrailingComments } from "../../lean-bridge/verify/placeCandidate";
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
  assert.equal(
    r.doc.text,
    FILE.slice(0, cut) + "\n\nset_option pp.fullNames true in #print axioms _root_.N.second\n",
  );
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

test("`#print axioms` names the declaration from the root, so no namesake in an open namespace answers", () => {
  const r = build("omega", "first");
  assert.equal(r.kind, "ok");
  if (r.kind === "ok") {
    assert.match(r.doc.text, /#print axioms _root_\.N\.first\n$/);
    assert.equal(r.doc.checkedName, "N.first");
    assert.equal(r.doc.declaredName, "first");
  }
});

test("examples and anonymous instances are checked under a name the verifier chose; the rest is byte-identical", () => {
  const text =
    "namespace M\nexample (a : Nat) : a = a := by\n  rfl\ninstance (priority := low) : Inhabited Nat := by\n  exact ⟨0⟩\nend M\n";
  const parsed = parseFile(text);
  const index = new LineIndex(text);
  const hole = (line: number, end: number) => ({
    start: { line, character: 2 },
    end: { line, character: end },
  });
  const ex = locateHole(parsed, index, hole(2, 5));
  assert.equal(ex.kind, "ok");
  if (ex.kind !== "ok") return;
  const built = buildCheckDocument(parsed, ex.hole, "rfl");
  assert.equal(built.kind, "ok");
  if (built.kind !== "ok") return;
  assert.match(built.doc.declaredName, /^fimrlvr_check_[0-9a-f]{12}$/);
  assert.equal(built.doc.checkedName, `M.${built.doc.declaredName}`);
  assert.ok(
    built.doc.text.includes(`noncomputable def ${built.doc.declaredName} (a : Nat) : a = a := by\n  rfl\n`),
  );
  assert.ok(built.doc.text.endsWith(`#print axioms _root_.M.${built.doc.declaredName}\n`));
  const inst = locateHole(parsed, index, hole(4, 11));
  assert.equal(inst.kind, "ok");
  if (inst.kind !== "ok") return;
  const named = buildCheckDocument(parsed, inst.hole, "exact ⟨0⟩");
  assert.equal(named.kind, "ok");
  if (named.kind === "ok")
    assert.ok(
      named.doc.text.includes(`instance (priority := low) ${named.doc.declaredName} : Inhabited Nat := by`),
    );
});

test("an anonymous instance with binders is named right after `instance`, not after its first binder", () => {
  const text =
    "namespace M\ninstance (A B : Type) (f : A → B) : Inhabited (A → B) := by\n  exact ⟨f⟩\nend M\n";
  const parsed = parseFile(text);
  const located = locateHole(parsed, new LineIndex(text), {
    start: { line: 2, character: 2 },
    end: { line: 2, character: 11 },
  });
  assert.equal(located.kind, "ok");
  if (located.kind !== "ok") return;
  const built = buildCheckDocument(parsed, located.hole, "exact ⟨f⟩");
  assert.equal(built.kind, "ok");
  if (built.kind !== "ok") return;
  assert.ok(
    built.doc.text.includes(`instance ${built.doc.declaredName} (A B : Type) (f : A → B) : Inhabited`),
    built.doc.text,
  );
  assert.equal(built.doc.checkedName, `M.${built.doc.declaredName}`);
});

test("re-indentation counts columns as Lean does (code points), not UTF-16 units", () => {
  const text =
    "theorem 𝔸x : True ∧ True := by constructor\n                                  trivial\n                                  trivial\n";
  const parsed = parseFile(text);
  const index = new LineIndex(text);
  const start = text.indexOf("constructor");
  const located = locateHole(parsed, index, {
    start: index.positionAt(start),
    end: index.positionAt(text.length - 1),
  });
  assert.equal(located.kind, "ok");
  if (located.kind !== "ok") return;
  // `𝔸` is two UTF-16 units but one column for Lean's layout rule.
  assert.equal(located.hole.column, index.positionAt(start).character - 1);
  const r = buildCheckDocument(parsed, located.hole, "constructor\ntrivial\ntrivial");
  assert.equal(r.kind, "ok");
  if (r.kind === "ok")
    assert.ok(r.doc.text.includes(`constructor\n${" ".repeat(located.hole.column)}trivial\n`));
});

test("a `module` file is refused before any check only where its Lean refuses `#print axioms` there", () => {
  const text = "module\n\ntheorem t : True := by\n  trivial\n";
  const locate = (toolchain: string | undefined) =>
    locateHole(
      parseFile(text),
      new LineIndex(text),
      { start: { line: 3, character: 2 }, end: { line: 3, character: 9 } },
      featuresOfToolchain(toolchain),
    );
  const refused = locate("leanprover/lean4:v4.29.1");
  assert.equal(refused.kind, "bad-hole");
  if (refused.kind === "bad-hole") assert.match(refused.message, /`module` header.*#print axioms.*4\.30/);
  assert.equal(locate("leanprover/lean4:v4.30.0-rc1").kind, "ok");
  assert.equal(locate("leanprover/lean4:v4.34.0").kind, "ok");
  // Not known: Lean is asked, and its refusal, if any, is the verdict's reason (classify).
  assert.equal(locate("stable").kind, "ok");
});

test("`_root_` declarations are printed from the root under their resolved name", () => {
  const text = "namespace Q\ntheorem _root_.top (a : Nat) : a = a := by\n  rfl\nend Q\n";
  const located = locateHole(parseFile(text), new LineIndex(text), {
    start: { line: 2, character: 2 },
    end: { line: 2, character: 5 },
  });
  assert.equal(located.kind, "ok");
  if (located.kind !== "ok") return;
  const r = buildCheckDocument(parseFile(text), located.hole, "rfl");
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.equal(r.doc.checkedName, "top");
  assert.equal(r.doc.declaredName, "_root_.top");
  assert.match(r.doc.text, /#print axioms _root_\.top\n$/);
});

test("comments a candidate ends with never reach Lean (text our lexer took for a comment cannot escape)", () => {
  assert.equal(withoutTrailingComments("omega -- done"), "omega");
  assert.equal(withoutTrailingComments("omega\n  /- a\n  b -/\n  -- c"), "omega");
  assert.equal(withoutTrailingComments("/- x -/ omega"), "/- x -/ omega");
  assert.equal(withoutTrailingComments("-- only"), "");
  const r = build("have h2 : a ≤ b := h\n  omega -- fine");
  assert.equal(r.kind, "ok");
  if (r.kind === "ok") {
    assert.equal(r.doc.text.includes("-- fine"), false);
    assert.equal(r.doc.text.slice(r.doc.candidateStart, r.doc.candidateEnd), "have h2 : a ≤ b := h\n  omega");
    assert.equal(r.doc.declarationEnd, r.doc.candidateEnd, "a whole-proof hole ends the declaration");
  }
});

test("a trailing doc comment is refused: in the file it would end the tactic block and start a command", () => {
  assert.equal(withoutTrailingComments("rintro ⟨a, b⟩ /-- doc -/"), undefined);
  assert.equal(withoutTrailingComments("omega\n  /-! module doc -/"), undefined);
  const r = build("rintro h /-- doc -/");
  assert.equal(r.kind, "tampered");
  if (r.kind === "tampered") assert.match(r.message, /doc comment/);
  // A doc comment followed by more of the proof stays in the document, where Lean's range shows its effect.
  assert.equal(build("omega -- plain comments are fine").kind, "ok");
});

test("a hypothesis named `lemma` is a name, not a command; `lemma foo` still is one", () => {
  assert.equal(build("have lemma : a ≤ b := h\n  omega").kind, "ok");
  assert.equal(build("omega\n  lemma foo : 1 = 1 := rfl").kind, "tampered");
});

test("the check document holds the hole's column, for the goal probes' sentinel", () => {
  const r = build("omega");
  assert.equal(r.kind, "ok");
  if (r.kind === "ok") assert.equal(r.doc.holeColumn, 2);
});

test("a tactic proof followed by a `where` clause has holes like any other; a candidate cannot add one", () => {
  const text =
    "theorem w (n : Nat) : helper n = n := by\n  simp [helper]\nwhere\n  helper (k : Nat) : Nat := k\n";
  const parsed = parseFile(text);
  const located = locateHole(parsed, new LineIndex(text), {
    start: { line: 1, character: 2 },
    end: { line: 1, character: 15 },
  });
  assert.equal(located.kind, "ok");
  if (located.kind !== "ok") return;
  const built = buildCheckDocument(parsed, located.hole, "simp [helper]");
  assert.equal(built.kind, "ok");
  if (built.kind === "ok") assert.match(built.doc.text, /simp \[helper\]\nwhere\n {2}helper/);
  const plain = "theorem p : 1 = 1 := by\n  rfl\n";
  const p = parseFile(plain);
  const hole = locateHole(p, new LineIndex(plain), proofHole(plain, "p"));
  if (hole.kind !== "ok") throw new Error("bad hole");
  assert.equal(buildCheckDocument(p, hole.hole, "rfl\nwhere\n  x : Nat := 1").kind, "tampered");
});

test("a proof followed by a command the parser does not know (Mathlib's `alias`) is checked without it", () => {
  const text =
    "theorem a (n : Nat) : n + 0 = n := by\n  simp\nalias a' := a\n\ntheorem z : True := by\n  trivial\n";
  const parsed = parseFile(text);
  const located = locateHole(parsed, new LineIndex(text), proofHole(text, "a"));
  assert.equal(located.kind, "ok");
  if (located.kind !== "ok") return;
  const built = buildCheckDocument(parsed, located.hole, "simp");
  assert.equal(built.kind, "ok", JSON.stringify(built));
  if (built.kind !== "ok") return;
  // Lean's range of `a` ends at `simp`: the checked text must end there too, or every proof fails.
  assert.equal(
    built.doc.text.slice(built.doc.declarationStart, built.doc.declarationEnd),
    "theorem a (n : Nat) : n + 0 = n := by\n  simp",
  );
  assert.ok(!built.doc.text.includes("alias"), built.doc.text);
  // A hole inside the unknown command is in no declaration.
  const inAlias = locateHole(parsed, new LineIndex(text), {
    start: { line: 2, character: 12 },
    end: { line: 2, character: 13 },
  });
  assert.equal(inAlias.kind, "bad-hole");
});

/** A file whose proofs have holes that end mid-line: a tactic before `; rfl`, a term before `⟩`. */
const MIDLINE = `theorem semi (a b : Nat) (h : a = b) : b = a := by
  subst h; rfl

theorem pair (p q : Prop) (hp : p) (hq : q) : p ∧ q := by
  exact ⟨hp, hq⟩ -- the file's own comment

theorem last (a : Nat) : a = a := by
  rfl -- trailing
`;

function buildIn(text: string, piece: string, after: string, candidate: string) {
  const parsed = parseFile(text);
  const index = new LineIndex(text);
  const start = text.indexOf(piece, text.indexOf(":= by", text.indexOf(after)));
  const located = locateHole(parsed, index, index.rangeAt(start, start + piece.length));
  assert.equal(located.kind, "ok");
  if (located.kind !== "ok") throw new Error();
  return buildCheckDocument(parsed, located.hole, candidate);
}

test("a candidate is judged as it will stand in the file: a line comment that would swallow the rest of the line is refused (issue 23)", () => {
  for (const [piece, after, candidate, swallowed] of [
    ["subst h", "theorem semi", "subst h -- done", "; rfl"],
    ["subst h", "theorem semi", "subst h /- a -/ -- b", "; rfl"],
    ["hp", "theorem pair", "hp -- left", ", hq⟩ -- the file's own comment"],
  ] as const) {
    const r = buildIn(MIDLINE, piece, after, candidate);
    assert.equal(r.kind, "tampered", candidate);
    if (r.kind === "tampered") assert.ok(r.message.includes(`\`${swallowed}\``), r.message);
  }
  // The same text without the comment, a block comment, a comment ended by its line, or a hole whose line
  // holds nothing after it but a comment: the file reads as the check does.
  for (const [piece, after, candidate] of [
    ["subst h", "theorem semi", "subst h"],
    ["subst h", "theorem semi", "subst h /- done -/"],
    ["subst h", "theorem semi", "-- first\n  subst h"],
    ["hq⟩", "theorem pair", "hq⟩ -- right"],
    ["rfl", "theorem last", "rfl -- mine"],
  ] as const) {
    const r = buildIn(MIDLINE, piece, after, candidate);
    assert.equal(r.kind, "ok", `${candidate}: ${JSON.stringify(r)}`);
  }
});

test("the gate's statement reference replaces the whole body by `sorry` and keeps no candidate text", () => {
  const r = build("have h2 : a ≤ b := h\n  exact candidate_marker");
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  const reference = statementReference(r.doc);
  assert.ok(reference !== undefined);
  assert.ok(!reference.includes("candidate_marker"), reference);
  assert.match(reference, /theorem second \(a b : Nat\) \(h : a ≤ b\) : a \+ 1 ≤ b \+ 1 := sorry\n/);
  // Everything else of the document stands as it was: the declarations above and the appended queries.
  assert.ok(reference.startsWith(r.doc.text.slice(0, r.doc.declarationStart)));
  assert.ok(reference.endsWith(r.doc.text.slice(r.doc.declarationEnd)));
});
