prelude
import FimPrelude.Tactics
/-!
# FimPrelude.Logic

Propositional logic beyond `Core`: `Iff`, `Exists`, `Ne`, the `Trans` class that `calc` chains through,
and lemmas about them.

One axiom is declared here on purpose: `propext` (equivalent propositions are equal). Lean's `simp` rewrites
with it (its `eq_self`, `eq_true` and `iff` lemmas are stated as equalities of propositions), so a proof by
`simp` usually depends on it, as it does with Lean's own library. With `sorryAx` (in `Core`) it is the
library's whole list of axioms.
-/

universe u v w

/-- `a ↔ b`: each implies the other. -/
structure Iff (a b : Prop) : Prop where
  intro ::
  mp : a → b
  mpr : b → a

/-- Every proposition is equivalent to itself; `rfl` closes `a ↔ a` with it. -/
@[refl] theorem Iff.refl (a : Prop) : a ↔ a := Iff.intro (fun h => h) (fun h => h)
protected theorem Iff.rfl {a : Prop} : a ↔ a := Iff.refl a
theorem Iff.symm {a b : Prop} (h : a ↔ b) : b ↔ a := Iff.intro h.mpr h.mp
theorem Iff.trans {a b c : Prop} (h₁ : a ↔ b) (h₂ : b ↔ c) : a ↔ c :=
  Iff.intro (fun ha => h₂.mp (h₁.mp ha)) (fun hc => h₁.mpr (h₂.mpr hc))

/-- `∃ x, p x`: a witness with a proof about it. -/
inductive Exists {α : Sort u} (p : α → Prop) : Prop where
  | intro (w : α) (h : p w) : Exists p

theorem Exists.elim {α : Sort u} {p : α → Prop} {b : Prop} (h₁ : ∃ x, p x) (h₂ : ∀ a, p a → b) : b :=
  Exists.casesOn (motive := fun _ => b) h₁ h₂

/-- `a ≠ b` is `¬ (a = b)`. -/
@[reducible] def Ne {α : Sort u} (a b : α) : Prop := ¬(a = b)

theorem Ne.symm {α : Sort u} {a b : α} (h : a ≠ b) : b ≠ a := fun e => h (Eq.symm e)

/-- The canonical proof of `True`. -/
theorem trivial : True := True.intro

theorem Or.elim {a b c : Prop} (h : a ∨ b) (left : a → c) (right : b → c) : c :=
  Or.casesOn (motive := fun _ => c) h left right

theorem Or.symm {a b : Prop} (h : a ∨ b) : b ∨ a := Or.elim h Or.inr Or.inl
theorem And.symm {a b : Prop} (h : a ∧ b) : b ∧ a := And.intro h.right h.left

def Not.elim {a : Prop} {α : Sort u} (h : ¬a) (ha : a) : α := absurd ha h

/-- Propositional extensionality: equivalent propositions are equal. Declared on purpose; see above. -/
axiom propext {a b : Prop} : (a ↔ b) → a = b

/-- A proof of `p` makes `p` equal to `True` (`cases`, `induction` and `simp` use it). -/
theorem eq_true {p : Prop} (h : p) : p = True := propext (Iff.intro (fun _ => trivial) (fun _ => h))
/-- A refutation of `p` makes `p` equal to `False`. -/
theorem eq_false {p : Prop} (h : ¬p) : p = False := propext (Iff.intro h (fun f => False.elim f))
theorem eq_false' {p : Prop} (h : p → False) : p = False := eq_false h
theorem of_eq_true {p : Prop} (h : p = True) : p := Eq.mpr h trivial
theorem of_eq_false {p : Prop} (h : p = False) : ¬p := fun hp => Eq.mp h hp

theorem Eq.mpr_prop {p q : Prop} (h₁ : p = q) (h₂ : q) : p := Eq.mpr h₁ h₂

/-- `Trans r s t` says an `r`-step followed by an `s`-step is a `t`-step; `calc` composes steps with it. -/
class Trans {α : Sort u₁} {β : Sort u₂} {γ : Sort u₃}
    (r : α → β → Sort u) (s : β → γ → Sort v) (t : outParam (α → γ → Sort w)) where
  trans : r a b → s b c → t a c

export Trans (trans)

instance {α : Sort u} : @Trans α α α Eq Eq Eq where
  trans h₁ h₂ := Eq.trans h₁ h₂

instance : @Trans Prop Prop Prop Iff Iff Iff where
  trans h₁ h₂ := Iff.trans h₁ h₂

/-! Decidability of the connectives, so that `decide` evaluates compound propositions. -/

instance {p q : Prop} [dp : Decidable p] [dq : Decidable q] : Decidable (p ∧ q) :=
  match dp, dq with
  | isTrue hp, isTrue hq => isTrue (And.intro hp hq)
  | isTrue _, isFalse hq => isFalse (fun h => hq h.right)
  | isFalse hp, _ => isFalse (fun h => hp h.left)

instance {p q : Prop} [dp : Decidable p] [dq : Decidable q] : Decidable (p ∨ q) :=
  match dp, dq with
  | isTrue hp, _ => isTrue (Or.inl hp)
  | isFalse _, isTrue hq => isTrue (Or.inr hq)
  | isFalse hp, isFalse hq => isFalse (fun h => Or.elim h hp hq)

instance {p : Prop} [dp : Decidable p] : Decidable (¬p) :=
  match dp with
  | isTrue hp => isFalse (fun h => h hp)
  | isFalse hp => isTrue hp

instance : Decidable True := isTrue trivial
instance : Decidable False := isFalse (fun h => h)

/-! The facts `decide` ends with: it evaluates `decide p` to `true` and concludes `p`. -/

theorem Bool.false_ne_true (h : false = true) : False := Bool.noConfusion h

theorem decide_eq_true {p : Prop} [inst : Decidable p] (hp : p) : decide p = true :=
  match inst with
  | isTrue _ => rfl
  | isFalse hn => absurd hp hn

theorem decide_eq_false {p : Prop} [inst : Decidable p] (hn : ¬p) : decide p = false :=
  match inst with
  | isTrue hp => absurd hp hn
  | isFalse _ => rfl

theorem of_decide_eq_true {p : Prop} [inst : Decidable p] (h : decide p = true) : p :=
  match inst, h with
  | isTrue hp, _ => hp
  | isFalse _, h => Bool.noConfusion h

theorem of_decide_eq_false {p : Prop} [inst : Decidable p] (h : decide p = false) : ¬p :=
  match inst, h with
  | isTrue _, h => Bool.noConfusion h
  | isFalse hn, _ => hn

theorem of_decide_eq_self_eq_true {α : Sort u} [inst : DecidableEq α] (a : α) : decide (a = a) = true :=
  decide_eq_true rfl

instance : DecidableEq Bool := fun a b =>
  match a, b with
  | false, false => isTrue rfl
  | false, true => isFalse (fun h => Bool.noConfusion h)
  | true, false => isFalse (fun h => Bool.noConfusion h)
  | true, true => isTrue rfl
