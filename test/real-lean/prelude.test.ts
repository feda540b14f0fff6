/**
 * The project's prelude (lean-prelude/) on the embedded Lean 4.35.0: the library builds with no error and no
 * `sorry`, its lemmas rest on no axiom it does not declare on purpose, and each tactic it declares proves
 * what Lean proves and refuses what Lean refuses. Off CI a machine without the embedded Lean skips, saying
 * why; where CI=true that is a failing test.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { toolSkip } from "../toolSkip";
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
    proves("theorem t : Eq (Nat.add 2 3) 5 := by rfl");
    refuses("theorem t : Eq (Nat.add 2 2) 5 := by rfl", /Tactic `rfl` failed: The left-hand side/);
  });
});
