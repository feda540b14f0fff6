import Mathlib.Tactic.Ring
import Mathlib.Tactic.Linarith

/-!
# Classical reasoning, instances and examples

A file without `module`, with `open Classical` in scope: `em`, `byContradiction` and `choose` are
`Classical`'s, and every proposition is decidable through `Classical.propDecidable`.
-/

open Classical

namespace FimMathlib.Classic

section Props

variable (p q : Prop)

lemma imp_iff_not_or_of (h : p → q) : ¬p ∨ q := by
  by_cases hp : p
  · exact Or.inr (h hp)
  · exact Or.inl hp

lemma of_not_not' (h : ¬¬p) : p := by
  by_contra hn
  exact h hn

lemma ite_same (n : ℕ) : (if p then n else n) = n := by
  split <;> rfl

lemma choose_spec_eq (f : ℕ → ℕ) (h : ∃ n, f n = 3) : f (choose h) = 3 := by
  exact choose_spec h

end Props

/-- Two sides, for instances and `protected` lemmas about a type of this file. -/
inductive Coin where
  | heads
  | tails

protected lemma Coin.heads_ne_tails : Coin.heads ≠ Coin.tails := by
  intro h
  cases h

instance coinNonempty : Nonempty Coin := by
  exact ⟨Coin.heads⟩

instance (α : Type*) (β : Type*) [Nonempty α] [Nonempty β] : Nonempty (α × β) := by
  obtain ⟨a⟩ := ‹Nonempty α›
  obtain ⟨b⟩ := ‹Nonempty β›
  exact ⟨(a, b)⟩

private lemma sq_add_sq_nonneg (a b : ℤ) : 0 ≤ a ^ 2 + b ^ 2 := by
  nlinarith [sq_nonneg a, sq_nonneg b]

set_option maxHeartbeats 400000 in
lemma cube_expand (a b : ℤ) : (a + b) ^ 3 = a ^ 3 + 3 * a ^ 2 * b + 3 * a * b ^ 2 + b ^ 3 := by
  ring

example (a b : ℤ) : 0 ≤ (a - b) ^ 2 + (a + b) ^ 2 := by
  exact sq_add_sq_nonneg (a - b) (a + b)

example (x : ℤ) (h₁ : 2 * x + 1 = 7) : x = 3 := by
  linarith

end FimMathlib.Classic
