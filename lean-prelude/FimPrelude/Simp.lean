prelude
import FimPrelude.Nat
/-!
# FimPrelude.Simp

The constants Lean's `simp` builds its proofs from (congruence through implications and binders,
`of_eq_true`, `eq_self`, `implies_congr`, …) and the basic `@[simp]` lemmas of logic, stated as Lean states
them, as equations between propositions. Most are proven through `propext` (see `FimPrelude.Logic`).
-/

universe u v

/-! ## What `simp` closes goals and rewrites hypotheses with -/

@[simp] theorem eq_self {α : Sort u} (a : α) : (a = a) = True := eq_true rfl

theorem iff_of_eq {a b : Prop} (h : a = b) : a ↔ b := Eq.subst (motive := fun x => a ↔ x) h Iff.rfl
theorem Iff.to_eq {a b : Prop} (h : a ↔ b) : a = b := propext h

theorem implies_congr {p₁ p₂ : Sort u} {q₁ q₂ : Sort v} (h₁ : p₁ = p₂) (h₂ : q₁ = q₂) :
    (p₁ → q₁) = (p₂ → q₂) :=
  Eq.subst (motive := fun x => (p₁ → q₁) = (x → q₂)) h₁
    (Eq.subst (motive := fun y => (p₁ → q₁) = (p₁ → y)) h₂ rfl)

theorem implies_dep_congr_ctx {p₁ p₂ q₁ : Prop} (h₁ : p₁ = p₂) {q₂ : p₂ → Prop}
    (h₂ : (h : p₂) → q₁ = q₂ h) : (p₁ → q₁) = ((h : p₂) → q₂ h) :=
  propext (Iff.intro
    (fun hq h => Eq.mp (h₂ h) (hq (Eq.mpr h₁ h)))
    (fun hq h => Eq.mpr (h₂ (Eq.mp h₁ h)) (hq (Eq.mp h₁ h))))

theorem implies_congr_ctx {p₁ p₂ q₁ q₂ : Prop} (h₁ : p₁ = p₂) (h₂ : p₂ → q₁ = q₂) :
    (p₁ → q₁) = (p₂ → q₂) :=
  implies_dep_congr_ctx h₁ h₂

theorem forall_congr {α : Sort u} {p q : α → Prop} (h : ∀ a, p a = q a) : (∀ a, p a) = (∀ a, q a) :=
  propext (Iff.intro (fun hp a => Eq.mp (h a) (hp a)) (fun hq a => Eq.mpr (h a) (hq a)))

theorem forall_prop_domain_congr {p₁ p₂ : Prop} {q₁ : p₁ → Prop} {q₂ : p₂ → Prop} (h₁ : p₁ = p₂)
    (h₂ : ∀ a : p₂, q₁ (Eq.mpr h₁ a) = q₂ a) : ((a : p₁) → q₁ a) = ((a : p₂) → q₂ a) :=
  propext (Iff.intro
    (fun hq a => Eq.mp (h₂ a) (hq (Eq.mpr h₁ a)))
    (fun hq a => Eq.mpr (h₂ (Eq.mp h₁ a)) (hq (Eq.mp h₁ a))))

/-- `simp`'s builtin procedures for closed comparisons evaluate `decide p` and conclude with these. -/
theorem eq_true_of_decide {p : Prop} [Decidable p] (h : decide p = true) : p = True :=
  eq_true (of_decide_eq_true h)
theorem eq_false_of_decide {p : Prop} [Decidable p] (h : decide p = false) : p = False :=
  eq_false (of_decide_eq_false h)

@[simp] theorem ne_eq {α : Sort u} (a b : α) : (a ≠ b) = ¬(a = b) := rfl

/-! ## The connectives with `True` and `False` -/

@[simp] theorem iff_self (p : Prop) : (p ↔ p) = True := eq_true Iff.rfl
@[simp] theorem not_true_eq_false : (¬True) = False := eq_false (fun h => h trivial)
@[simp] theorem not_false_eq_true : (¬False) = True := eq_true (fun h => h)
@[simp] theorem and_true (p : Prop) : (p ∧ True) = p :=
  propext (Iff.intro (fun h => h.left) (fun h => And.intro h trivial))
@[simp] theorem true_and (p : Prop) : (True ∧ p) = p :=
  propext (Iff.intro (fun h => h.right) (fun h => And.intro trivial h))
@[simp] theorem and_false (p : Prop) : (p ∧ False) = False :=
  propext (Iff.intro (fun h => h.right) (fun h => False.elim h))
@[simp] theorem false_and (p : Prop) : (False ∧ p) = False :=
  propext (Iff.intro (fun h => h.left) (fun h => False.elim h))
@[simp] theorem or_true (p : Prop) : (p ∨ True) = True := eq_true (Or.inr trivial)
@[simp] theorem true_or (p : Prop) : (True ∨ p) = True := eq_true (Or.inl trivial)
@[simp] theorem or_false (p : Prop) : (p ∨ False) = p :=
  propext (Iff.intro (fun h => Or.elim h (fun hp => hp) (fun f => False.elim f)) Or.inl)
@[simp] theorem false_or (p : Prop) : (False ∨ p) = p :=
  propext (Iff.intro (fun h => Or.elim h (fun f => False.elim f) (fun hp => hp)) Or.inr)
@[simp] theorem and_self (p : Prop) : (p ∧ p) = p :=
  propext (Iff.intro (fun h => h.left) (fun h => And.intro h h))
@[simp] theorem or_self (p : Prop) : (p ∨ p) = p :=
  propext (Iff.intro (fun h => Or.elim h (fun hp => hp) (fun hp => hp)) Or.inl)
@[simp] theorem implies_true (α : Sort u) : (α → True) = True := eq_true (fun _ => trivial)
@[simp] theorem true_implies (p : Prop) : (True → p) = p :=
  propext (Iff.intro (fun h => h trivial) (fun h _ => h))
@[simp] theorem false_implies (p : Prop) : (False → p) = True := eq_true (fun f => False.elim f)

/-! ## `if … then … else …` (the lemmas `simp`'s builtin `reduceIte`/`reduceDIte` conclude with, under their 4.35 names) -/

theorem ite_eq_left_of_eq_true {α : Sort u} {c : Prop} {inst : Decidable c} (a b : α) (h : c = True) :
    (if c then a else b) = a :=
  match inst with
  | isTrue _ => rfl
  | isFalse hn => absurd (of_eq_true h) hn

theorem ite_eq_right_of_eq_false {α : Sort u} {c : Prop} {inst : Decidable c} (a b : α) (h : c = False) :
    (if c then a else b) = b :=
  match inst with
  | isTrue hc => absurd hc (of_eq_false h)
  | isFalse _ => rfl

theorem dite_eq_left_of_eq_true {α : Sort u} {c : Prop} {inst : Decidable c} {t : c → α} {e : ¬c → α}
    (h : c = True) : dite c t e = t (of_eq_true h) :=
  match inst with
  | isTrue _ => rfl
  | isFalse hn => absurd (of_eq_true h) hn

theorem dite_eq_right_of_eq_false {α : Sort u} {c : Prop} {inst : Decidable c} {t : c → α} {e : ¬c → α}
    (h : c = False) : dite c t e = e (of_eq_false h) :=
  match inst with
  | isTrue hc => absurd hc (of_eq_false h)
  | isFalse _ => rfl

theorem if_pos {c : Prop} {h : Decidable c} (hc : c) {α : Sort u} {t e : α} : (ite c t e) = t :=
  match h with
  | isTrue _ => rfl
  | isFalse hn => absurd hc hn

theorem if_neg {c : Prop} {h : Decidable c} (hnc : ¬c) {α : Sort u} {t e : α} : (ite c t e) = e :=
  match h with
  | isTrue hc => absurd hc hnc
  | isFalse _ => rfl

/-! ## Natural numbers -/

@[simp] theorem Nat.succ_ne_zero_eq (n : Nat) : (n + 1 = 0) = False := eq_false (Nat.succ_ne_zero n)
@[simp] theorem Nat.lt_irrefl_eq (n : Nat) : (n < n) = False := eq_false (Nat.lt_irrefl n)
@[simp] theorem Nat.le_refl_eq (n : Nat) : (n ≤ n) = True := eq_true (Nat.le_refl n)
@[simp] theorem Nat.zero_le_eq (n : Nat) : (0 ≤ n) = True := eq_true (Nat.zero_le n)

theorem Nat.add_right_cancel {n m k : Nat} (h : n + m = k + m) : n = k := by
  induction m with
  | zero => exact h
  | succ m ih => exact ih (congrArg Nat.pred h)

theorem Nat.add_left_cancel {n m k : Nat} (h : n + m = n + k) : m = k :=
  Nat.add_right_cancel (Eq.trans (Nat.add_comm m n) (Eq.trans h (Nat.add_comm n k)))

@[simp] theorem Nat.add_right_cancel_iff {n m k : Nat} : n + m = k + m ↔ n = k :=
  Iff.intro Nat.add_right_cancel (fun h => congrArg (fun x => x + m) h)

@[simp] theorem Nat.add_left_cancel_iff {n m k : Nat} : n + m = n + k ↔ m = k :=
  Iff.intro Nat.add_left_cancel (fun h => congrArg (fun x => n + x) h)
