import { test } from "node:test";
import assert from "node:assert/strict";
import { parseFile } from "../../lean-bridge/lean/commands";

const SOURCE = `import Init.Data.Nat
/-! Module doc -/
namespace A.B

/-- doc -/
@[simp] theorem t1 (n : Nat) : n + 0 = n := by
  simp

private theorem t2 : True := trivial

protected lemma t3 (x : Nat) (h : x = 1 := by rfl) : x = 1 := by
  exact h

set_option maxHeartbeats 400000 in
theorem t4 : 1 = 1 := by
  rfl

instance : Inhabited Nat := ⟨0⟩
instance instFoo : Inhabited Bool := ⟨true⟩

def f : Nat → Nat
  | 0 => 0
  | n + 1 => f n

theorem t5 (n : Nat) : f n = 0 := by
  induction n with
  | zero => rfl
  | succ m ih => simpa [f] using ih
termination_by n

example : True := by trivial
end A.B

theorem _root_.top : True := by trivial
`;

test("declarations: names, namespaces, bodies", () => {
  const file = parseFile(SOURCE);
  assert.deepEqual(file.imports, ["Init.Data.Nat"]);
  const decls = file.commands.flatMap((c) => (c.declaration ? [c.declaration] : []));
  const byName = new Map(decls.map((d) => [d.name ?? d.keyword, d]));
  assert.equal(byName.get("t1")?.fullName, "A.B.t1");
  assert.equal(byName.get("t1")?.bodyKind, "tactic");
  assert.ok(
    byName.get("t1")?.start === SOURCE.indexOf("/-- doc -/"),
    "the doc comment belongs to the declaration",
  );
  assert.equal(byName.get("t2")?.bodyKind, "term");
  assert.deepEqual(byName.get("t2")?.modifiers, ["private"]);
  assert.equal(
    byName.get("t3")?.statement,
    "lemma t3 (x : Nat) (h : x = 1 := by rfl) : x = 1",
    "a default argument's := is not the body",
  );
  assert.equal(byName.get("t4")?.bodyKind, "tactic");
  assert.ok(
    byName.get("t4")!.start < SOURCE.indexOf("theorem t4"),
    "set_option … in belongs to the declaration",
  );
  assert.equal(byName.get("instance")?.name, undefined);
  assert.equal(byName.get("instFoo")?.fullName, "A.B.instFoo");
  assert.equal(byName.get("f")?.bodyKind, "equations");
  const t5 = byName.get("t5")!;
  assert.equal(
    SOURCE.slice(t5.byStart!, t5.byEnd!).trimEnd().endsWith("simpa [f] using ih"),
    true,
    "termination_by is outside the tactic block",
  );
  assert.equal(byName.get("example")?.fullName, undefined);
  assert.equal(byName.get("_root_.top")?.fullName, "top");
});

test("an anonymous instance with binders has no name; `(priority := …)` is skipped before a name", () => {
  const file = parseFile(
    "namespace N\ninstance (A B : Type) (f : A → B) : Inhabited (A → B) := by\n  exact ⟨f⟩\n" +
      "instance (priority := low) instNamed (A : Type) : Inhabited (List A) := by\n  exact ⟨[]⟩\n" +
      "instance (priority := low) (A : Type) : Inhabited (Option A) := ⟨none⟩\nend N\n",
  );
  const decls = file.commands.flatMap((c) => (c.declaration ? [c.declaration] : []));
  assert.deepEqual(
    decls.map((d) => [d.name, d.fullName, d.bodyKind]),
    [
      [undefined, undefined, "tactic"],
      ["instNamed", "N.instNamed", "tactic"],
      [undefined, undefined, "term"],
    ],
  );
  assert.equal(decls[0]!.statement, "instance (A B : Type) (f : A → B) : Inhabited (A → B)");
});

test("a `mutual … end` block inside a namespace keeps later names in the namespace", () => {
  const file = parseFile(
    "namespace N\nmutual\ntheorem even_ok : True := by\n  trivial\ntheorem odd_ok : True := by\n  trivial\nend\n" +
      "theorem after : True := by\n  trivial\nend N\ntheorem outside : True := by\n  trivial\n",
  );
  const names = file.commands.flatMap((c) => (c.declaration ? [c.declaration.fullName] : []));
  assert.deepEqual(names, ["N.even_ok", "N.odd_ok", "N.after", "outside"]);
});

test("a command after a comment on its line starts a new command", () => {
  const text =
    "theorem one : True := by\n  trivial\n/- c -/ theorem two : True := by\n  trivial\n" +
    "/- a comment\n   over lines -/ theorem three : True := by\n  trivial\n/-- doc -/ theorem four : True := by\n  trivial\n" +
    "theorem five : True := by\n  trivial /- not a command start -/ theorem\n";
  const file = parseFile(text);
  const decls = file.commands.flatMap((c) => (c.declaration ? [c.declaration] : []));
  assert.deepEqual(
    decls.map((d) => d.name),
    ["one", "two", "three", "four", "five"],
  );
  assert.equal(text.slice(decls[0]!.start, decls[0]!.end), "theorem one : True := by\n  trivial");
  assert.ok(
    text.slice(decls[3]!.start).startsWith("/-- doc -/ theorem four"),
    "a doc comment stays with its command",
  );
  assert.equal(decls[1]!.keywordStart, text.indexOf("theorem two"));
});

test("a tactic proof ends at a column-0 command our keyword lists do not know (alias, irreducible_def, seal)", () => {
  const text =
    "theorem a : True := by\n  trivial\nalias b := a\n" +
    "theorem c : True := by\n  trivial\nirreducible_def foo : Nat := by\n  exact 1\n" +
    "theorem d : True := by\n  trivial\nseal foo\n" +
    "theorem e (n : Nat) : n = n := by\n  induction n\n  all_goals rfl\ntermination_by n\n" +
    "theorem f : 1 = 1 ∧ 2 = 2 := by\n  exact calc 1 = 1 := rfl\n_ = 1 := rfl\n";
  const file = parseFile(text);
  const decls = file.commands.flatMap((c) => (c.declaration ? [c.declaration] : []));
  assert.deepEqual(
    decls.map((d) => [d.name, text.slice(d.start, d.end)]),
    [
      ["a", "theorem a : True := by\n  trivial"],
      ["c", "theorem c : True := by\n  trivial"],
      ["d", "theorem d : True := by\n  trivial"],
      ["e", "theorem e (n : Nat) : n = n := by\n  induction n\n  all_goals rfl\ntermination_by n"],
      ["f", "theorem f : 1 = 1 ∧ 2 = 2 := by\n  exact calc 1 = 1 := rfl\n_ = 1 := rfl"],
    ],
  );
  // The unknown commands are commands of their own: a hole inside one belongs to no declaration.
  assert.deepEqual(
    file.commands.filter((c) => !c.declaration).map((c) => text.slice(c.start, c.end)),
    ["alias b := a", "irreducible_def foo : Nat := by\n  exact 1", "seal foo"],
  );
  // `unseal … in` before a declaration still wraps it.
  const wrapped = parseFile(
    "theorem a : True := by\n  trivial\nunseal foo in\ntheorem b : True := by\n  trivial\n",
  );
  const b = wrapped.commands.find((c) => c.declaration?.name === "b")!;
  assert.ok(wrapped.tokens.text.slice(b.start).startsWith("unseal foo in\ntheorem b"));
  // Tactics written at column 0 are the block itself, not a new command.
  const flat = parseFile("theorem g : True := by\ntrivial\n").commands[0]!.declaration!;
  assert.equal(flat.end, "theorem g : True := by\ntrivial".length);
});
