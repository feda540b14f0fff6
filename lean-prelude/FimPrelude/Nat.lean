prelude
import FimPrelude.Logic
/-!
# FimPrelude.Nat

Arithmetic: the operator classes behind `+ - * ≤ <` (heterogeneous `HAdd` and friends, with the homogeneous
`Add` and friends as their usual instances, as Lean's elaborator expects), their instances for `Nat`,
the order `Nat.le`, decision procedures the kernel can evaluate on literals, and lemmas proven here.
-/

universe u v w

/-! ## The operator classes -/

/-- `a + b` for `a : α`, `b : β`. -/
class HAdd (α : Type u) (β : Type v) (γ : outParam (Type w)) where
  hAdd : α → β → γ
/-- `a - b` for `a : α`, `b : β`. -/
class HSub (α : Type u) (β : Type v) (γ : outParam (Type w)) where
  hSub : α → β → γ
/-- `a * b` for `a : α`, `b : β`. -/
class HMul (α : Type u) (β : Type v) (γ : outParam (Type w)) where
  hMul : α → β → γ

class Add (α : Type u) where
  add : α → α → α
class Sub (α : Type u) where
  sub : α → α → α
class Mul (α : Type u) where
  mul : α → α → α

/-- `a ≤ b`. -/
class LE (α : Type u) where
  le : α → α → Prop
/-- `a < b`. -/
class LT (α : Type u) where
  lt : α → α → Prop

/-- `a ≥ b` is `b ≤ a`. -/
@[reducible] def GE.ge {α : Type u} [LE α] (a b : α) : Prop := LE.le b a
/-- `a > b` is `b < a`. -/
@[reducible] def GT.gt {α : Type u} [LT α] (a b : α) : Prop := LT.lt b a

@[reducible] instance instHAdd {α : Type u} [Add α] : HAdd α α α := ⟨fun a b => Add.add a b⟩
@[reducible] instance instHSub {α : Type u} [Sub α] : HSub α α α := ⟨fun a b => Sub.sub a b⟩
@[reducible] instance instHMul {α : Type u} [Mul α] : HMul α α α := ⟨fun a b => Mul.mul a b⟩

/-! ## `Nat` -/

instance instAddNat : Add Nat := ⟨Nat.add⟩
instance instSubNat : Sub Nat := ⟨Nat.sub⟩
instance instMulNat : Mul Nat := ⟨Nat.mul⟩

/-- `n ≤ m`: `m` is reached from `n` by successors. -/
protected inductive Nat.le (n : Nat) : Nat → Prop where
  | refl : Nat.le n n
  | step {m : Nat} : Nat.le n m → Nat.le n (Nat.succ m)

/-- `n < m` is `n + 1 ≤ m`. -/
protected def Nat.lt (n m : Nat) : Prop := Nat.le (n + 1) m

/- `n + 1` may be used as a pattern, as with Lean's library: it matches `Nat.succ n`. -/
attribute [match_pattern] Add.add HAdd.hAdd

instance instLENat : LE Nat := ⟨Nat.le⟩
instance instLTNat : LT Nat := ⟨Nat.lt⟩

/-
The eliminators `induction` and `cases` use on `Nat`, stated with `0` and `n + 1`, so that goals read
`0` and `n + 1` (as with Lean's library) rather than `Nat.zero` and `Nat.succ n`.
-/

/-- Induction on `Nat` with the cases written `0` and `n + 1`. -/
@[elab_as_elim, induction_eliminator]
protected def Nat.recAux {motive : Nat → Sort u} (zero : motive 0)
    (succ : (n : Nat) → motive n → motive (n + 1)) : (t : Nat) → motive t
  | .zero => zero
  | .succ n => succ n (Nat.recAux zero succ n)

/-- Case analysis on `Nat` with the cases written `0` and `n + 1`. -/
@[elab_as_elim, cases_eliminator]
protected def Nat.casesAuxOn {motive : Nat → Sort u} (t : Nat) (zero : motive 0)
    (succ : (n : Nat) → motive (n + 1)) : motive t :=
  Nat.casesOn (motive := motive) t zero succ

theorem Nat.succ_eq_add_one (n : Nat) : Nat.succ n = n + 1 := rfl

/-! ### Addition and multiplication, by induction -/

@[simp] theorem Nat.add_zero (n : Nat) : n + 0 = n := rfl
theorem Nat.add_succ (n m : Nat) : n + Nat.succ m = Nat.succ (n + m) := rfl
@[simp] theorem Nat.mul_zero (n : Nat) : n * 0 = 0 := rfl
theorem Nat.mul_succ (n m : Nat) : n * Nat.succ m = n * m + n := rfl

@[simp] theorem Nat.zero_add (n : Nat) : 0 + n = n := by
  induction n with
  | zero => rfl
  | succ n ih => exact congrArg Nat.succ ih

theorem Nat.succ_add (n m : Nat) : Nat.succ n + m = Nat.succ (n + m) := by
  induction m with
  | zero => rfl
  | succ m ih => exact congrArg Nat.succ ih

theorem Nat.add_comm (n m : Nat) : n + m = m + n := by
  induction m with
  | zero => exact Eq.symm (Nat.zero_add n)
  | succ m ih => exact Eq.trans (congrArg Nat.succ ih) (Eq.symm (Nat.succ_add m n))

theorem Nat.add_assoc (n m k : Nat) : n + m + k = n + (m + k) := by
  induction k with
  | zero => rfl
  | succ k ih => exact congrArg Nat.succ ih

@[simp] theorem Nat.zero_mul (n : Nat) : 0 * n = 0 := by
  induction n with
  | zero => rfl
  | succ n ih => exact ih

@[simp] theorem Nat.mul_one (n : Nat) : n * 1 = n := Nat.zero_add n
@[simp] theorem Nat.one_mul (n : Nat) : 1 * n = n := by
  induction n with
  | zero => rfl
  | succ n ih => exact congrArg Nat.succ ih

theorem Nat.succ_ne_zero (n : Nat) : Nat.succ n ≠ 0 := fun h => Nat.noConfusion h

/-! ### The order -/

@[simp] theorem Nat.le_refl (n : Nat) : n ≤ n := Nat.le.refl
theorem Nat.le_succ (n : Nat) : n ≤ n + 1 := Nat.le.step Nat.le.refl
theorem Nat.le_step {n m : Nat} (h : n ≤ m) : n ≤ m + 1 := Nat.le.step h
theorem Nat.lt_succ_self (n : Nat) : n < n + 1 := Nat.le.refl

theorem Nat.le_trans {n m k : Nat} (h₁ : n ≤ m) (h₂ : m ≤ k) : n ≤ k := by
  induction h₂ with
  | refl => exact h₁
  | step _ ih => exact Nat.le.step ih

theorem Nat.zero_le (n : Nat) : 0 ≤ n := by
  induction n with
  | zero => exact Nat.le.refl
  | succ n ih => exact Nat.le.step ih

theorem Nat.succ_le_succ {n m : Nat} (h : n ≤ m) : n + 1 ≤ m + 1 := by
  induction h with
  | refl => exact Nat.le.refl
  | step _ ih => exact Nat.le.step ih

instance : @Trans Nat Nat Nat LE.le LE.le LE.le where
  trans h₁ h₂ := Nat.le_trans h₁ h₂

/-! ### Deciding `≤` and `<` through `Nat.ble`, which the kernel evaluates on literals -/

theorem Nat.le_of_ble_eq_true : {n m : Nat} → Nat.ble n m = true → n ≤ m
  | .zero, m, _ => Nat.zero_le m
  | .succ _, .zero, h => Bool.noConfusion h
  | .succ n, .succ m, h => Nat.succ_le_succ (Nat.le_of_ble_eq_true (n := n) (m := m) h)

theorem Nat.pred_le (n : Nat) : Nat.pred n ≤ n := by
  cases n with
  | zero => exact Nat.le.refl
  | succ n => exact Nat.le_succ n

theorem Nat.pred_le_pred {n m : Nat} (h : n ≤ m) : Nat.pred n ≤ Nat.pred m := by
  induction h with
  | refl => exact Nat.le.refl
  | step _ ih => exact Nat.le_trans ih (Nat.pred_le _)

theorem Nat.not_succ_le_zero (n : Nat) (h : n + 1 ≤ 0) : False := by
  cases h

theorem Nat.not_le_of_ble_eq_false : {n m : Nat} → Nat.ble n m = false → ¬(n ≤ m)
  | .zero, _, h => Bool.noConfusion h
  | .succ n, .zero, _ => fun h => Nat.not_succ_le_zero n h
  | .succ n, .succ m, h => fun hle =>
    Nat.not_le_of_ble_eq_false (n := n) (m := m) h (Nat.pred_le_pred hle)

/-- Decides `n ≤ m`. -/
@[extern "lean_nat_dec_le"]
def Nat.decLe (n m : @& Nat) : Decidable (n ≤ m) :=
  match h : Nat.ble n m with
  | true => isTrue (Nat.le_of_ble_eq_true h)
  | false => isFalse (Nat.not_le_of_ble_eq_false h)

/-- Decides `n < m`, that is `n + 1 ≤ m`. -/
@[extern "lean_nat_dec_lt"]
def Nat.decLt (n m : @& Nat) : Decidable (n < m) := Nat.decLe (n + 1) m

instance : DecidableRel (fun n m : Nat => n ≤ m) := Nat.decLe
instance (n m : Nat) : Decidable (n ≤ m) := Nat.decLe n m
instance (n m : Nat) : Decidable (n < m) := Nat.decLt n m

theorem Nat.lt_irrefl (n : Nat) : ¬(n < n) := by
  intro h
  induction n with
  | zero => exact Nat.not_succ_le_zero 0 h
  | succ n ih => exact ih (Nat.pred_le_pred h)
