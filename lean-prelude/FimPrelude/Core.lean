prelude
/-!
# FimPrelude.Core

The first module of the project's own prelude: the types and constants that Lean's elaborator, compiler and
kernel know by name. Lean 4.35's builtin machinery (the inductive command, the code generator, the numeral
elaborator) refers to these constants, so each is declared with the name and the shape that machinery expects.
Nothing here imports Lean's `Init`.
-/

universe u v w

/-! The code generator's erased markers. They are `unsafe`, so no proof can use them. -/
unsafe axiom lcErased : Type
unsafe axiom lcAny : Type
unsafe axiom lcVoid : Type
unsafe axiom lcProof {α : Prop} : α
unsafe axiom lcCast {α : Sort u} {β : Sort v} (a : α) : β
unsafe axiom lcUnreachable {α : Sort u} : α

set_option bootstrap.inductiveCheckResultingUniverse false in
/-- The one-element type in every universe; the inductive command's auxiliary constructions use it. -/
inductive PUnit : Sort u where
  | unit : PUnit

/-- Equality. Its single constructor says every term equals itself. -/
inductive Eq {α : Sort u} : α → α → Prop where
  | refl (a : α) : Eq a a

/-- Transport along an equality into any universe, without dependency on the proof. -/
abbrev Eq.ndrec.{u1, u2} {α : Sort u2} {a : α} {motive : α → Sort u1} (m : motive a) {b : α}
    (h : Eq a b) : motive b :=
  Eq.rec (motive := fun x _ => motive x) m h

/-- Equality between terms whose types may differ. -/
inductive HEq : {α : Sort u} → α → {β : Sort u} → β → Prop where
  | refl (a : α) : HEq a a

/-- The two Boolean values. -/
inductive Bool : Type where
  | false : Bool
  | true : Bool

export Bool (false true)

/-- The identity function. -/
@[inline] def id {α : Sort u} (a : α) : α := a

/-- Function composition. -/
@[inline] def Function.comp {α : Sort u} {β : Sort v} {δ : Sort w} (f : β → δ) (g : α → β) : α → δ :=
  fun x => f (g x)

/-- The constant function; the elaborator uses it when it recovers from an error. -/
@[inline] def Function.const {α : Sort u} (β : Sort v) (a : α) : β → α := fun _ => a

set_option checkBinderAnnotations false in
/-- The instance that typeclass inference finds for `α`. -/
abbrev inferInstance {α : Sort u} [i : α] : α := i

set_option checkBinderAnnotations false in
abbrev «inferInstanceAs» (α : Sort u) [i : α] : α := i

/-- Marks a binder with a default value: `(x : α := d)` elaborates to `x : optParam α d`. -/
@[reducible] def optParam (α : Sort u) (_default : α) : Sort u := α

/-- Marks a class parameter that instance search computes instead of taking as input. -/
@[reducible] def outParam (α : Sort u) : Sort u := α

@[reducible] def semiOutParam (α : Sort u) : Sort u := α

/-- Named patterns `x@h:p` in `match` elaborate to this. -/
@[reducible] def namedPattern {α : Sort u} (_x a : α) (_h : Eq _x a) : α := a

abbrev Unit : Type := PUnit
@[match_pattern] abbrev Unit.unit : Unit := PUnit.unit

/-- The true proposition. -/
inductive True : Prop where
  | intro : True

/-- The false proposition: it has no proof. -/
inductive False : Prop

inductive Empty : Type

def Not (a : Prop) : Prop := a → False

@[macro_inline] def False.elim {C : Sort u} (h : False) : C := False.rec (motive := fun _ => C) h

@[macro_inline] def absurd {a : Prop} {b : Sort v} (h₁ : a) (h₂ : Not a) : b := False.elim (h₂ h₁)

set_option linter.defProp false in
/-- Reflexivity with the term left implicit. -/
@[match_pattern] def rfl {α : Sort u} {a : α} : Eq a a := Eq.refl a

theorem Eq.subst {α : Sort u} {motive : α → Prop} {a b : α} (h₁ : Eq a b) (h₂ : motive a) : motive b :=
  Eq.ndrec h₂ h₁

theorem Eq.symm {α : Sort u} {a b : α} (h : Eq a b) : Eq b a :=
  Eq.subst (motive := fun x => Eq x a) h rfl

theorem Eq.trans {α : Sort u} {a b c : α} (h₁ : Eq a b) (h₂ : Eq b c) : Eq a c :=
  Eq.subst (motive := fun x => Eq a x) h₂ h₁

set_option linter.defProp false in
/-- `HEq.refl` with the term left implicit (the `rfl` tactic tries it). -/
@[match_pattern] protected def HEq.rfl {α : Sort u} {a : α} : HEq a a := HEq.refl a

/-- Casting along an equality of types. -/
@[macro_inline] def cast {α β : Sort u} (h : Eq α β) (a : α) : β :=
  Eq.rec (motive := fun γ _ => γ) a h

/-- Transport a proof along an equality of propositions (`rw` builds its proofs with these). -/
@[macro_inline] def Eq.mp {α β : Sort u} (h : Eq α β) (a : α) : β := cast h a

@[macro_inline] def Eq.mpr {α β : Sort u} (h : Eq α β) (b : β) : α := cast (Eq.symm h) b

theorem congrArg {α : Sort u} {β : Sort v} {a₁ a₂ : α} (f : α → β) (h : Eq a₁ a₂) : Eq (f a₁) (f a₂) :=
  Eq.subst (motive := fun x => Eq (f a₁) (f x)) h rfl

theorem congr {α : Sort u} {β : Sort v} {f₁ f₂ : α → β} {a₁ a₂ : α} (h₁ : Eq f₁ f₂) (h₂ : Eq a₁ a₂) :
    Eq (f₁ a₁) (f₂ a₂) :=
  @Eq.subst (α → β) (fun g => Eq (f₁ a₁) (g a₂)) f₁ f₂ h₁ (congrArg f₁ h₂)

theorem congrFun {α : Sort u} {β : α → Sort v} {f g : (x : α) → β x} (h : Eq f g) (a : α) : Eq (f a) (g a) :=
  @Eq.subst ((x : α) → β x) (fun k => Eq (f a) (k a)) f g h (Eq.refl (f a))

/-- `congrFun` for a function whose type does not depend on its argument; `simp` uses it. -/
theorem congrFun' {α : Sort u} {β : Sort v} {f g : α → β} (h : Eq f g) (a : α) : Eq (f a) (g a) :=
  congrFun h a

/-- A heterogeneous equality between terms of one type is an equality; noConfusion needs it. -/
theorem eq_of_heq {α : Sort u} {a a' : α} (h : HEq a a') : Eq a a' :=
  let motive := fun {β : Sort u} (b : β) (_ : HEq a b) => (e : Eq α β) → Eq (cast e a) b
  @HEq.rec α a motive (fun _ => Eq.refl a) α a' h (Eq.refl α)

theorem heq_of_eq {α : Sort u} {a a' : α} (h : Eq a a') : HEq a a' :=
  @Eq.subst α (fun x => HEq a x) a a' h (HEq.refl a)

/--
The axiom behind `sorry`. The elaborator fills every `sorry`, and every term it gives up on after an error,
with `sorryAx`; Lean warns "declaration uses 'sorry'" for a declaration that depends on it, and
`#print axioms` lists it. It is the one axiom of this library that proofs may meet by accident.
-/
@[extern "lean_sorry", never_extract]
axiom sorryAx (α : Sort u) (synthetic : Bool) : α

/-- A designated element of a type. -/
class Inhabited (α : Sort u) where
  default : α

export Inhabited (default)

/-- A type has an element (as a proposition, carrying no data). -/
class inductive Nonempty (α : Sort u) : Prop where
  | intro (val : α) : Nonempty α

instance {α : Sort u} [Inhabited α] : Nonempty α := Nonempty.intro default

/-- Pairs in `Sort`, used by structural recursion. -/
structure PProd (α : Sort u) (β : Sort v) where
  fst : α
  snd : β

/-- Pairs of types. -/
structure Prod (α : Type u) (β : Type v) where
  mk ::
  fst : α
  snd : β

structure MProd (α β : Type u) where
  fst : α
  snd : β

/-- Conjunction. -/
structure And (a b : Prop) : Prop where
  intro ::
  left : a
  right : b

/-- Disjunction. -/
inductive Or (a b : Prop) : Prop where
  | inl (h : a) : Or a b
  | inr (h : b) : Or a b

/-- Subtypes: a value with a proof about it. -/
structure Subtype {α : Sort u} (p : α → Prop) where
  val : α
  property : p val

structure PULift.{r, s} (α : Sort s) : Sort (max s r 1) where
  up ::
  down : α

/-- Dependent pairs whose components may be proofs; well-founded recursion packs arguments with it. -/
structure PSigma {α : Sort u} (β : α → Sort v) where
  fst : α
  snd : β fst

/-- Cases on `Bool` as a function. -/
@[macro_inline] def cond {α : Sort u} (c : Bool) (x y : α) : α :=
  Bool.casesOn (motive := fun _ => α) c y x

/-- A proposition whose truth can be computed. -/
class inductive Decidable (p : Prop) where
  | isFalse (h : Not p) : Decidable p
  | isTrue (h : p) : Decidable p

@[inline_if_reduce, nospecialize] def Decidable.decide (p : Prop) [h : Decidable p] : Bool :=
  Decidable.casesOn (motive := fun _ => Bool) h (fun _ => false) (fun _ => true)

export Decidable (isTrue isFalse decide)

/-- Dependent if-then-else: each branch receives the proof of its case. -/
@[macro_inline] def dite {α : Sort u} (c : Prop) [h : Decidable c] (t : c → α) (e : Not c → α) : α :=
  Decidable.casesOn (motive := fun _ => α) h e t

/-- If-then-else on a decidable proposition. -/
@[macro_inline] def ite {α : Sort u} (c : Prop) [h : Decidable c] (t e : α) : α :=
  Decidable.casesOn (motive := fun _ => α) h (fun _ => e) (fun _ => t)

abbrev DecidablePred {α : Sort u} (r : α → Prop) := (a : α) → Decidable (r a)
abbrev DecidableRel {α : Sort u} {β : Sort v} (r : α → β → Prop) := (a : α) → (b : β) → Decidable (r a b)
abbrev DecidableEq (α : Sort u) := (a b : α) → Decidable (Eq a b)

set_option genCtorIdx false in
/-- The natural numbers; the kernel represents their literals in binary and computes with them. -/
inductive Nat : Type where
  | zero : Nat
  | succ (n : Nat) : Nat

/-- Numerals: `OfNat α n` gives the meaning of the literal `n` in type `α`. -/
class OfNat (α : Type u) (_ : Nat) where
  ofNat : α

@[default_instance 100]
instance instOfNatNat (n : Nat) : OfNat Nat n where
  ofNat := n

/-- Boolean equality of natural numbers (the kernel computes it on literals). -/
@[extern "lean_nat_dec_eq"]
def Nat.beq : (@& Nat) → (@& Nat) → Bool
  | .zero, .zero => true
  | .zero, .succ _ => false
  | .succ _, .zero => false
  | .succ n, .succ m => Nat.beq n m

theorem Nat.beq_refl : (n : Nat) → Eq (Nat.beq n n) true
  | .zero => rfl
  | .succ n => Nat.beq_refl n

/-- Boolean `≤` on natural numbers (the kernel computes it on literals). -/
@[extern "lean_nat_dec_le"]
def Nat.ble : (@& Nat) → (@& Nat) → Bool
  | .zero, _ => true
  | .succ _, .zero => false
  | .succ n, .succ m => Nat.ble n m

/-- Addition by recursion on the second argument; the kernel computes it on literals in binary. -/
@[extern "lean_nat_add", match_pattern]
protected def Nat.add : (@& Nat) → (@& Nat) → Nat
  | n, .zero => n
  | n, .succ m => .succ (Nat.add n m)

@[extern "lean_nat_mul"]
protected def Nat.mul : (@& Nat) → (@& Nat) → Nat
  | _, .zero => .zero
  | n, .succ m => Nat.add (Nat.mul n m) n

@[extern "lean_nat_pred"]
def Nat.pred : (@& Nat) → Nat
  | .zero => .zero
  | .succ n => n

@[extern "lean_nat_sub"]
protected def Nat.sub : (@& Nat) → (@& Nat) → Nat
  | n, .zero => n
  | n, .succ m => Nat.pred (Nat.sub n m)

theorem Nat.eq_of_beq_eq_true : {n m : Nat} → Eq (Nat.beq n m) true → Eq n m
  | .zero, .zero, _ => rfl
  | .zero, .succ _, h => Bool.noConfusion h
  | .succ _, .zero, h => Bool.noConfusion h
  | .succ n, .succ m, h => congrArg Nat.succ (Nat.eq_of_beq_eq_true (n := n) (m := m) h)

theorem Nat.ne_of_beq_eq_false : {n m : Nat} → Eq (Nat.beq n m) false → Not (Eq n m)
  | .zero, .zero, h => fun _ => Bool.noConfusion h
  | .zero, .succ _, _ => fun e => Nat.noConfusion e
  | .succ _, .zero, _ => fun e => Nat.noConfusion e
  | .succ n, .succ m, h => fun e => Nat.ne_of_beq_eq_false (n := n) (m := m) h (congrArg Nat.pred e)

/-- Decides equality of natural numbers through `Nat.beq`, so the kernel decides it on literals. -/
@[extern "lean_nat_dec_eq"]
def Nat.decEq (n m : @& Nat) : Decidable (Eq n m) :=
  match h : Nat.beq n m with
  | true => isTrue (Nat.eq_of_beq_eq_true h)
  | false => isFalse (Nat.ne_of_beq_eq_false h)

@[inline] instance : DecidableEq Nat := Nat.decEq

/-- The index of a number's constructor: `0` for `zero`, `1` for `succ` (Lean generates this for other
types; `Nat` is declared without it, as its literals are not constructor applications). -/
def Nat.ctorIdx : Nat → Nat
  | .zero => 0
  | .succ _ => 1

/-- Equal terms have equal images under `f`, as a `Prop` that `cases` and `injection` reduce on literals;
Lean's no-confusion construction for types with many constructors goes through it. -/
theorem noConfusion_of_Nat {α : Sort u} (f : α → Nat) {a b : α} (h : Eq a b) :
    Bool.rec (motive := fun _ => Prop) False True (Nat.beq (f a) (f b)) :=
  @Eq.subst α (fun x => Bool.rec (motive := fun _ => Prop) False True (Nat.beq (f a) (f x))) a b h
    (@Eq.subst Bool (fun c => Bool.rec (motive := fun _ => Prop) False True c) true (Nat.beq (f a) (f a))
      (Eq.symm (Nat.beq_refl (f a))) True.intro)
