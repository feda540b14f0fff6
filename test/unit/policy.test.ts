import { test } from "node:test";
import assert from "node:assert/strict";
import { checkCandidate, DEFAULT_POLICY } from "../../lean-bridge/verify/policy";

const rejected = (c: string) => {
  const r = checkCandidate(c);
  return r.kind === "rejected" ? r.rule : "allowed";
};

test("sorry and admit are rejected, but not inside comments or strings", () => {
  assert.equal(rejected("exact sorry"), "sorry");
  assert.equal(rejected("admit"), "sorry");
  assert.equal(rejected("simp -- no sorry here\nomega"), "allowed");
  assert.equal(rejected('/- sorry -/ exact "sorry".length'), "allowed");
});

test("escapes from the hole are rejected", () => {
  for (const c of [
    "omega\ntheorem x : False := by simp",
    "#exit",
    "#print axioms x",
    "omega\nend Foo",
    "import Foo",
    "@[simp] x",
    "exact (h",
    "exact h)",
    "omega /- open",
    "axiom bad : False",
  ]) {
    assert.equal(rejected(c), "escape", c);
  }
});

test("code execution is rejected by default and the policy is configurable", () => {
  for (const c of ["run_tac pure ()", "run_cmd pure ()", "elab x", "IO.println 1", "unsafe x"])
    assert.equal(rejected(c), "code-execution", c);
  assert.equal(rejected("exact?"), "search-tactic");
  const loose = {
    ...DEFAULT_POLICY,
    forbiddenIdentifiers: DEFAULT_POLICY.forbiddenIdentifiers.filter((i) => i !== "exact?"),
  };
  assert.equal(checkCandidate("exact?", loose).kind, "allowed");
});

test("ordinary tactics with unicode and astral characters pass", () => {
  assert.equal(rejected("obtain ⟨hp, hq⟩ := h\nexact ⟨hq, hp⟩ -- 𝔸"), "allowed");
  assert.equal(rejected("calc a = b := by rw [h₁]\n  _ = c := by rw [h₂]"), "allowed");
});

test("empty and oversized candidates are rejected", () => {
  assert.equal(rejected("   \n"), "empty");
  assert.equal(rejected("simp ".repeat(10_000)), "too-long");
});
