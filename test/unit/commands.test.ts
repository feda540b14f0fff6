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
