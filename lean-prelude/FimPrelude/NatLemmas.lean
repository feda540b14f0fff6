prelude
import FimPrelude.Simp
/-!
# FimPrelude.NatLemmas

More facts about `Nat`'s arithmetic and order, under the names and with the statements Lean's own library
gives them (`Nat.add_le_add_right`, `Nat.sub_add_cancel`, `Nat.mul_comm`, …), so that a proof written
against Lean's library that uses them elaborates here too. All are proven in this file, with no axiom.
-/

namespace Nat

/-! ## Order -/

theorem le_of_succ_le_succ {n m : Nat} (h : n + 1 ≤ m + 1) : n ≤ m := Nat.pred_le_pred h

theorem succ_le_of_lt {n m : Nat} (h : n < m) : n + 1 ≤ m := h

theorem le_of_lt {n m : Nat} (h : n < m) : n ≤ m := Nat.le_trans (Nat.le_succ n) h

theorem lt_of_lt_of_le {n m k : Nat} (h₁ : n < m) (h₂ : m ≤ k) : n < k := Nat.le_trans h₁ h₂

theorem lt_of_le_of_lt {n m k : Nat} (h₁ : n ≤ m) (h₂ : m < k) : n < k :=
  Nat.le_trans (Nat.succ_le_succ h₁) h₂

theorem lt_trans {n m k : Nat} (h₁ : n < m) (h₂ : m < k) : n < k := Nat.lt_of_lt_of_le h₁ (Nat.le_of_lt h₂)

theorem le_add_right (n k : Nat) : n ≤ n + k := by
  induction k with
  | zero => exact Nat.le_refl n
  | succ k ih => exact Nat.le_step ih

theorem le_add_left (n m : Nat) : n ≤ m + n := by
  rw [Nat.add_comm]
  exact Nat.le_add_right n m

theorem le_antisymm {n m : Nat} (h₁ : n ≤ m) (h₂ : m ≤ n) : n = m := by
  induction h₁ with
  | refl => rfl
  | step h _ => exact absurd (Nat.le_trans h₂ h) (Nat.lt_irrefl _)

instance : @Trans Nat Nat Nat LT.lt LT.lt LT.lt where
  trans h₁ h₂ := Nat.lt_trans h₁ h₂
instance : @Trans Nat Nat Nat LE.le LT.lt LT.lt where
  trans h₁ h₂ := Nat.lt_of_le_of_lt h₁ h₂
instance : @Trans Nat Nat Nat LT.lt LE.le LT.lt where
  trans h₁ h₂ := Nat.lt_of_lt_of_le h₁ h₂

/-! ## Addition and order -/

protected theorem add_le_add_right {n m : Nat} (h : n ≤ m) (k : Nat) : n + k ≤ m + k := by
  induction k with
  | zero => exact h
  | succ k ih => exact Nat.succ_le_succ ih

protected theorem add_le_add_left {n m : Nat} (h : n ≤ m) (k : Nat) : k + n ≤ k + m := by
  rw [Nat.add_comm k n, Nat.add_comm k m]
  exact Nat.add_le_add_right h k

protected theorem add_lt_add_right {n m : Nat} (h : n < m) (k : Nat) : n + k < m + k := by
  have h' := Nat.add_le_add_right h k
  rw [Nat.succ_add] at h'
  exact h'

theorem lt_of_add_lt_add_right {n m k : Nat} (h : n + k < m + k) : n < m := by
  induction k with
  | zero => exact h
  | succ k ih => exact ih (Nat.le_of_succ_le_succ h)

theorem le_of_add_le_add_right {n m k : Nat} (h : n + k ≤ m + k) : n ≤ m := by
  induction k with
  | zero => exact h
  | succ k ih => exact ih (Nat.le_of_succ_le_succ h)

/-! ## Subtraction -/

@[simp] theorem sub_zero (n : Nat) : n - 0 = n := rfl

theorem succ_sub_succ (n m : Nat) : (n + 1) - (m + 1) = n - m := by
  induction m with
  | zero => rfl
  | succ m ih => exact congrArg Nat.pred ih

@[simp] theorem sub_self (n : Nat) : n - n = 0 := by
  induction n with
  | zero => rfl
  | succ n ih => rw [Nat.succ_sub_succ]; exact ih

@[simp] theorem zero_sub (n : Nat) : 0 - n = 0 := by
  induction n with
  | zero => rfl
  | succ n ih => exact congrArg Nat.pred ih

protected theorem add_sub_cancel {n m : Nat} : n + m - m = n := by
  induction m with
  | zero => rfl
  | succ m ih => rw [Nat.add_succ, Nat.succ_sub_succ]; exact ih

theorem succ_sub : {n m : Nat} → m ≤ n → (n + 1) - m = (n - m) + 1
  | _, 0, _ => rfl
  | 0, _ + 1, h => False.elim (Nat.not_succ_le_zero _ h)
  | n + 1, k + 1, h => by
    rw [Nat.succ_sub_succ, Nat.succ_sub_succ]
    exact succ_sub (Nat.le_of_succ_le_succ h)

protected theorem sub_add_cancel {n m : Nat} (h : m ≤ n) : n - m + m = n := by
  induction h with
  | refl => rw [Nat.sub_self, Nat.zero_add]
  | step h ih => rw [Nat.succ_sub h, Nat.succ_add, ih]

/-! ## Multiplication -/

protected theorem succ_mul (n m : Nat) : (n + 1) * m = n * m + m := by
  induction m with
  | zero => rfl
  | succ m ih =>
    rw [Nat.mul_succ, Nat.mul_succ, ih, Nat.add_succ, Nat.add_succ, Nat.add_assoc, Nat.add_assoc,
      Nat.add_comm m n]

protected theorem mul_comm (n m : Nat) : n * m = m * n := by
  induction m with
  | zero => rw [Nat.mul_zero, Nat.zero_mul]
  | succ m ih => rw [Nat.mul_succ, Nat.succ_mul, ih]

protected theorem left_distrib (n m k : Nat) : n * (m + k) = n * m + n * k := by
  induction k with
  | zero => rfl
  | succ k ih => rw [Nat.add_succ, Nat.mul_succ, Nat.mul_succ, ih, Nat.add_assoc]

protected theorem mul_add (n m k : Nat) : n * (m + k) = n * m + n * k := Nat.left_distrib n m k

protected theorem right_distrib (n m k : Nat) : (n + m) * k = n * k + m * k := by
  rw [Nat.mul_comm, Nat.left_distrib, Nat.mul_comm k n, Nat.mul_comm k m]

protected theorem add_mul (n m k : Nat) : (n + m) * k = n * k + m * k := Nat.right_distrib n m k

protected theorem two_mul (n : Nat) : 2 * n = n + n := by
  rw [Nat.succ_mul, Nat.one_mul]

protected theorem mul_assoc (n m k : Nat) : n * m * k = n * (m * k) := by
  induction k with
  | zero => rfl
  | succ k ih => rw [Nat.mul_succ, Nat.mul_succ, Nat.left_distrib, ih]

end Nat
