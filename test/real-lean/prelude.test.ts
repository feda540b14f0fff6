/**
 * The project's prelude (lean-prelude/) on the embedded Lean 4.35.0: the library builds with no error and no
 * `sorry`, its lemmas rest on no axiom it does not declare on purpose, and each tactic it declares proves
 * what Lean proves and refuses what Lean refuses. Off CI a machine without the embedded Lean skips, saying
 * why; where CI=true that is a failing test. The axioms the library declares on purpose are `sorryAx` (behind
 * `sorry`) and `propext` (behind `simp`'s lemmas about propositions); its `Nat` lemmas use neither.
 */
import { after, describe, test as nodeTest } from "node:test";
import { rmSync } from "node:fs";
import { dirname } from "node:path";
import assert from "node:assert/strict";
import { toolSkip } from "../toolSkip";
import { countTierTest } from "./embeddedTier";
import {
  buildPrelude,
  checkWithPrelude,
  findEmbeddedLean,
  said,
  type LeanRun,
  type PreludeBuild,
} from "./preludeLean";

const lean = findEmbeddedLean();
const skip = toolSkip("the prelude's real-Lean tests", lean.kind === "missing" && lean.reason);

/** A test of the real-Lean tier: counted run or skipped into scripts/run-tests.mjs's tier line. */
function test(name: string, body: () => void): void {
  if (skip) countTierTest("skip", name);
  nodeTest(name, () => {
    try {
      body();
    } finally {
      countTierTest("run", name);
    }
  });
}
const build: PreludeBuild | undefined = lean.kind === "found" ? buildPrelude(lean.path) : undefined;

/** Elaborates declarations after the prelude's header (unused-variable lints off: they are noise here). */
function check(body: string): LeanRun {
  if (lean.kind !== "found" || build?.kind !== "built") throw new Error("the prelude is not built");
  return checkWithPrelude(
    lean.path,
    build,
    `prelude\nimport FimPrelude\nset_option linter.unusedVariables false\n${body}\n`,
  );
}

/** Lean accepted the file: no error at all. */
function proves(body: string): void {
  const run = check(body);
  assert.deepEqual(said(run, "error"), [], `${body}\n${run.other}`);
  assert.equal(run.status, 0, run.other);
}

/** Lean refused the file with an error whose text matches `pattern`. */
function refuses(body: string, pattern: RegExp): void {
  const run = check(body);
  const errors = said(run, "error");
  assert.ok(
    errors.some((e) => pattern.test(e)),
    `expected an error matching ${pattern} for\n${body}\ngot ${JSON.stringify(run.messages)}\n${run.other}`,
  );
  assert.notEqual(run.status, 0);
}

describe("the prelude on the embedded Lean", { skip }, () => {
  // The build and every check file live under one temporary directory.
  after(() => {
    if (build?.kind === "built") rmSync(dirname(build.root), { recursive: true, force: true });
  });

  test("the library builds in import order with no error and no sorry", () => {
    assert.equal(build?.kind, "built", JSON.stringify(build?.kind === "failed" ? build : ""));
    if (build?.kind !== "built") return;
    for (const [module, run] of Object.entries(build.modules)) {
      assert.deepEqual(said(run, "error"), [], module);
      assert.ok(!said(run, "warning").some((w) => /sorry/.test(w)), `${module} uses sorry`);
    }
  });

  test("exact closes a goal with a term of its type and refuses one of another type", () => {
    proves("theorem t (p : Prop) (hp : p) : p := by exact hp");
    refuses("theorem t (p q : Prop) (hq : q) : p := by exact hq", /Type mismatch/);
  });

  test("intro names the binders of the goal, and refuses a goal with none", () => {
    proves("theorem t (p q : Prop) : p → q → p := by intro hp hq; exact hp");
    refuses("theorem t (p : Prop) (hp : p) : p := by intro h; exact hp", /There are no additional binders/);
  });

  test("apply leaves the premises as goals, and refuses a conclusion that does not unify", () => {
    proves("theorem t (p q : Prop) (hp : p) : Or p q := by apply Or.inl; exact hp");
    refuses(
      "theorem t (p q : Prop) (hq : q) : And p q := by apply Or.inl",
      /could not unify the conclusion of `@Or.inl`/,
    );
  });

  test("rfl closes a = a up to unfolding, and refuses two different numerals", () => {
    proves("theorem t (n : Nat) : Eq n n := by rfl");
    proves("theorem t (p : Prop) : p ↔ p := by rfl");
    proves("theorem t (n : Nat) : HEq n n := by rfl");
    proves("theorem t : Eq (Nat.add 2 3) 5 := by rfl");
    refuses("theorem t : Eq (Nat.add 2 2) 5 := by rfl", /Tactic `rfl` failed: The left-hand side/);
  });

  test("intros introduces every binder, and leaves a goal it cannot close", () => {
    proves("theorem t (p q : Prop) : p → q → p := by intros; assumption");
    refuses("theorem t (p q : Prop) : p → q → q := by intros a b; exact a", /Type mismatch/);
  });

  test("refine turns ?_ into goals, and refuses a term of the wrong type", () => {
    proves("theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by refine And.intro ?_ hq; exact hp");
    refuses(
      "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by refine And.intro ?_ hp",
      /[Tt]ype mismatch/,
    );
  });

  test("constructor applies the goal's constructor, and a goal with none fits is refused", () => {
    proves("theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by constructor; exact hp; exact hq");
    refuses("theorem t : False := by constructor", /Tactic `constructor` failed: no applicable constructor/);
  });

  test("cases splits a disjunction, and a case left open is unsolved", () => {
    proves(
      "theorem t (p q : Prop) (h : p ∨ q) : q ∨ p := by\n" +
        "  cases h with\n  | inl hp => exact Or.inr hp\n  | inr hq => exact Or.inl hq",
    );
    refuses(
      "theorem t (p q : Prop) (h : p ∨ q) : p := by\n  cases h with\n  | inl hp => exact hp\n  | inr hq => exact hq",
      /Type mismatch/,
    );
  });

  test("induction proves a lemma about a recursive definition, and a wrong statement is refused", () => {
    const def = "def add2 : Nat → Nat → Nat\n  | m, 0 => m\n  | m, n + 1 => Nat.succ (add2 m n)\n";
    proves(
      def +
        "theorem t (m n : Nat) : add2 m n = m + n := by\n" +
        "  induction n with\n  | zero => rfl\n  | succ n ih => rw [add2, ih, Nat.add_succ]",
    );
    refuses(
      def +
        "theorem t (m n : Nat) : add2 m n = n := by\n" +
        "  induction n with\n  | zero => rfl\n  | succ n ih => rw [add2, ih]",
      /The left-hand side\n {2}add2 m 0\nis not definitionally equal to the right-hand side\n {2}0/,
    );
  });

  test("rw rewrites with an equation and closes the goal by rfl, and leaves a goal that is not", () => {
    proves("theorem t (a b : Nat) (h : a = b) : a + 1 = b + 1 := by rw [h]");
    proves("theorem t (a b : Nat) (h : a = b) : b + 1 = a + 1 := by rw [← h]");
    refuses(
      "theorem t (a b : Nat) (h : a = b) : a + 1 = b + 2 := by rw [h]",
      /unsolved goals[^]*b \+ 1 = b \+ 2/,
    );
    refuses(
      "theorem t (a b c : Nat) (h : a = b) : c = c + 0 := by rw [h]",
      /Did not find an occurrence of the pattern/,
    );
  });

  test("decide evaluates a closed Nat or Bool proposition, and refuses a false one", () => {
    proves("theorem t : 2 + 2 = 4 := by decide");
    proves("theorem t : 3 ≤ 5 ∧ ¬(5 < 3) := by decide");
    proves("theorem t : (true = false) ∨ (false = false) := by decide");
    refuses("theorem t : 2 + 2 = 5 := by decide", /proved that the proposition[^]*2 \+ 2 = 5[^]*is false/);
  });

  test("simp closes a + 0 = a with the library's lemmas, and does not prove a non-theorem", () => {
    proves("theorem t (a : Nat) : a + 0 = a := by simp");
    proves("theorem t (n : Nat) : n + 1 ≠ 0 ∧ 2 + 3 = 5 ∧ 10 < 20 := by simp");
    proves("theorem t (a : Nat) : (if 2 < 1 then a else 3) = 3 := by simp");
    proves("theorem t (a b : Nat) (p : Prop) (hp : p) : (0 + a) * 1 = a ∧ (p ∨ False) := by simp [hp]");
    refuses("theorem t (a : Nat) : a + 1 = a := by simp", /unsolved goals|`simp` made no progress/);
    refuses("theorem t (a b : Nat) : a + b = a := by simp", /`simp` made no progress/);
  });

  test("sorry closes a goal with the warning Lean gives, and #print axioms names sorryAx", () => {
    const run = check("theorem t (p : Prop) : p := by sorry\n#print axioms t");
    assert.deepEqual(said(run, "error"), []);
    assert.ok(said(run, "warning").includes("declaration uses `sorry`"), JSON.stringify(run.messages));
    assert.ok(said(run, "information").some((m) => /'t' depends on axioms: \[sorryAx\]/.test(m)));
  });

  test("exists gives the witness and closes the rest by trivial, and a wrong witness is refused", () => {
    proves("theorem t : ∃ n : Nat, n + 1 = 3 := by exists 2");
    refuses("theorem t : ∃ n : Nat, n + 1 = 3 := by exists 5", /unsolved goals[^]*5 \+ 1 = 3/);
  });

  test("have adds a hypothesis, and refuses a proof of another statement", () => {
    proves("theorem t (p q : Prop) (hp : p) (f : p → q) : q := by\n  have hq : q := f hp\n  exact hq");
    proves("theorem t (p q : Prop) (hp : p) (f : p → q) : q := by\n  have : q := f hp\n  exact this");
    refuses(
      "theorem t (p q : Prop) (hp : p) (f : p → q) : q := by\n  have hq : q := hp\n  exact hq",
      /Type mismatch/,
    );
  });

  test("show restates the goal, and refuses a statement that does not unify", () => {
    proves("theorem t (p : Prop) (hp : p) : p ∧ p := by show p ∧ p; exact And.intro hp hp");
    refuses(
      "theorem t (p q : Prop) (hp : p) : p := by show q",
      /'show' tactic failed, pattern\n {2}q\nis not definitionally equal to target/,
    );
  });

  test("calc chains equalities and ≤ steps, and refuses a step whose proof does not fit", () => {
    proves(
      "theorem t (a b c : Nat) (h1 : a = b) (h2 : b = c) : a = c := by\n  calc a = b := h1\n    _ = c := h2",
    );
    proves(
      "theorem t (a b c : Nat) (h1 : a ≤ b) (h2 : b ≤ c) : a ≤ c := by\n  calc a ≤ b := h1\n    _ ≤ c := h2",
    );
    refuses(
      "theorem t (a b c : Nat) (h1 : a = b) (h2 : b = c) : a = c := by\n  calc a = b := h1\n    _ = a := h2",
      /Type mismatch/,
    );
  });

  test("first takes the first alternative that works, and fails when none does", () => {
    proves("theorem t (p q : Prop) (hq : q) : q := by first | exact p | exact hq");
    refuses(
      "theorem t (p q : Prop) (hq : q) : p := by first | exact hq | assumption",
      /Tactic `assumption` failed/,
    );
  });

  test("try swallows a failure, so the goal it could not close stays open", () => {
    proves("theorem t (p : Prop) (hp : p) : p := by try exact hp");
    refuses("theorem t (p q : Prop) (hp : p) : p := by try exact q", /unsolved goals/);
  });

  test("repeat applies a tactic while it works, and stops short of an unprovable goal", () => {
    proves(
      "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q ∧ p := by repeat constructor <;> try assumption",
    );
    refuses(
      "theorem t (p q : Prop) (hp : p) : p ∧ q := by repeat constructor; assumption",
      /unsolved goals\ncase right/,
    );
  });

  test("<;> runs the second tactic on every goal of the first, and fails if it fails on one", () => {
    proves("theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by constructor <;> assumption");
    refuses("theorem t (p q : Prop) (hp : p) : p ∧ q := by constructor <;> exact hp", /Type mismatch/);
  });

  test("· focuses on one goal and requires it closed", () => {
    proves(
      "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  · exact hp\n  · exact hq",
    );
    refuses(
      "theorem t (p q : Prop) (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  · skip\n  · exact hq",
      /unsolved goals/,
    );
  });

  test("skip does nothing and done fails while goals are left", () => {
    proves("theorem t (p : Prop) (hp : p) : p := by skip; exact hp; done");
    const run = check("theorem t (p : Prop) (hp : p) : p := by skip; done");
    const errors = run.messages.filter((m) => m.severity === "error");
    assert.equal(errors.length, 1, JSON.stringify(run.messages));
    assert.match(errors[0]!.data, /unsolved goals/);
    assert.equal(
      errors[0]!.pos.column,
      "theorem t (p : Prop) (hp : p) : p := by skip; ".length,
      "done reports it",
    );
  });

  test("the notation elaborates to the library's constants and prints back as notation", () => {
    const run = check(
      "theorem t (a b : Nat) (p q : Prop) (h1 : a + b * 2 ≤ b - 1) (h2 : p ↔ ¬q) (h3 : a ≠ b ∨ p ∧ q)\n" +
        "    (h4 : ∃ x : Nat, x > a) (h5 : a ≥ b) (h6 : a < b) : False := by done",
    );
    const goal = said(run, "error").join("\n");
    for (const hyp of [
      "h1 : a + b * 2 ≤ b - 1",
      "h2 : p ↔ ¬q",
      "h3 : a ≠ b ∨ p ∧ q",
      "h4 : ∃ x, x > a",
      "h5 : a ≥ b",
      "h6 : a < b",
    ])
      assert.ok(goal.includes(hyp), `${hyp} in\n${goal}`);
  });

  test("Lean's own lemma names prove the statements they prove in Lean's library", () => {
    proves("theorem t (a b : Nat) (h : a ≤ b) : a + 3 ≤ b + 3 := Nat.add_le_add_right h 3");
    proves("theorem t (x : Nat) (h : 3 ≤ x) : x - 3 + 3 = x := Nat.sub_add_cancel h");
    proves("theorem t (a b : Nat) (h : a + 2 < b) : a < b := Nat.lt_of_le_of_lt (Nat.le_add_right a 2) h");
    proves("theorem t (n m : Nat) : n * m + 2 * n = m * n + (n + n) := by rw [Nat.mul_comm, Nat.two_mul]");
    refuses("theorem t (x : Nat) : x - 3 + 3 = x := Nat.sub_add_cancel", /[Tt]ype mismatch/);
  });

  test("the library's lemmas rest on no axiom but the ones it declares on purpose", () => {
    const run = check(
      [
        "Nat.add_comm",
        "Nat.add_assoc",
        "Nat.zero_add",
        "Nat.le_trans",
        "Nat.lt_irrefl",
        "noConfusion_of_Nat",
        "and_true",
        "eq_self",
      ]
        .map((n) => `#print axioms ${n}`)
        .join("\n"),
    );
    const info = said(run, "information");
    assert.equal(info.length, 8, JSON.stringify(run.messages));
    for (const line of info.slice(0, 6)) assert.match(line, /does not depend on any axioms/);
    for (const line of info.slice(6)) assert.match(line, /depends on axioms: \[propext\]/);
  });
});
