module

public import Mathlib.Tactic.Ring
public import Mathlib.Tactic.Linarith

/-!
# Ring identities and linear arithmetic

A `module` file, as most files of current projects are: its names are private unless they are declared in
the public section below.
-/

@[expose] public section

namespace FimMathlib.Algebra

section CommRing

variable {R : Type*} [CommRing R]

lemma add_sq_expand (a b : R) : (a + b) ^ 2 = a ^ 2 + 2 * a * b + b ^ 2 := by
  ring

lemma sub_sq_expand (a b : R) : (a - b) ^ 2 = a ^ 2 - 2 * a * b + b ^ 2 := by
  ring

lemma mul_self_sub_mul_self_eq (a b : R) : a * a - b * b = (a + b) * (a - b) := by
  ring

theorem add_mul_self_eq' (a b : R) : (a + b) * (a + b) = a * a + 2 * a * b + b * b := by
  ring

end CommRing

section Int

variable (x y : ℤ)

lemma two_mul_lt_add (h : x < y) : 2 * x < x + y := by
  linarith

lemma solve_system (h₁ : x + y = 10) (h₂ : x - y = 2) : x = 6 ∧ y = 4 := by
  constructor
  · linarith
  · linarith

private lemma three_mul_pos (h : 0 < x) : 0 < 3 * x := by
  omega

protected lemma le_add_sq : x ≤ x + y ^ 2 := by
  nlinarith [sq_nonneg y]

set_option linter.unusedVariables false in
lemma sub_add_cancel_of_pos (h : 0 < x) : x - y + y = x := by
  ring

lemma six_mul_pos (h : 0 < x) : 0 < 6 * x := by
  have h3 := three_mul_pos x h
  omega

end Int

instance (n : ℕ) (m : ℕ) : Nonempty (Fin (n + m + 1)) := by
  exact ⟨⟨0, Nat.succ_pos (n + m)⟩⟩

example (a b : ℤ) (h : a < b) : a + 1 ≤ b := by
  omega

example {R : Type*} [CommRing R] (a : R) : (a + 1) * (a - 1) = a ^ 2 - 1 := by
  ring

end FimMathlib.Algebra
