prelude
import FimPrelude.Meta
/-!
# FimPrelude.Notation

The notation of arithmetic and logic: `+ - * = ≠ ≤ < ≥ > ∧ ∨ ¬ ↔`, `∃ x, p` and `if … then … else …`. Each operator is a syntax
declaration of our own under the kind name Lean's `Init` gives it, with Lean's precedences, bound to Lean's
compiled macro for that kind (see `FimPrelude.Meta`). The macros expand `a + b` to `binop% HAdd.hAdd a b`,
`a = b` to `binrel% Eq a b` and so on, so Lean's builtin `binop%`/`binrel%` elaborators insert the same
instances and coercions they do with `Init`; the constants they name are declared in `FimPrelude.Logic` and
`FimPrelude.Nat`.
-/

/-! Arithmetic: `+` and `-` at 65 and `*` at 70, all associating to the left. -/
syntax:65 (name := «term_+_») term:65 " + " term:66 : term
syntax:65 (name := «term_-_») term:65 " - " term:66 : term
syntax:70 (name := «term_*_») term:70 " * " term:71 : term

/-! Relations, at 50. -/
syntax:50 (name := «term_=_») term:51 " = " term:51 : term
syntax:50 (name := «term_≠_») term:51 " ≠ " term:51 : term
syntax:50 (name := «term_≤_») term:51 " ≤ " term:51 : term
syntax:50 (name := «term_<_») term:51 " < " term:51 : term
syntax:50 (name := «term_≥_») term:51 " ≥ " term:51 : term
syntax:50 (name := «term_>_») term:51 " > " term:51 : term

/-! Connectives: `∧` at 35 and `∨` at 30 associate to the right; `¬ p` binds at 40; `↔` is at 20. -/
syntax:35 (name := «term_∧_») term:36 " ∧ " term:35 : term
syntax:30 (name := «term_∨_») term:31 " ∨ " term:30 : term
syntax:1024 (name := «term¬_») "¬" term:40 : term
syntax:20 (name := «term_↔_») term:21 " ↔ " term:21 : term

namespace Lean
/-- A binder name or `_`. -/
syntax binderIdent := ident <|> hole
/-- The names bound by `∃ x y, p`, with an optional type. -/
syntax unbracketedExplicitBinders := many1(ppSpace binderIdent) optional(" : " term)
/-- `∃ (x y : α), p`. -/
syntax bracketedExplicitBinders := "(" withoutPosition(many1(binderIdent ppSpace) ": " term) ")"
/-- The binders of `∃`. -/
syntax explicitBinders := many1(ppSpace bracketedExplicitBinders) <|> unbracketedExplicitBinders
end Lean

/-- `∃ x, p x`: there is an `x` with `p x` (`Exists fun x => p x`). -/
syntax:1022 (name := «term∃_,_») "∃" Lean.explicitBinders ", " term : term

/-- `if c then t else e` is `ite c t e`. -/
syntax (name := termIfThenElse) "if " term " then " term " else " term : term
/-- `if h : c then t else e` is `dite c (fun h => t) (fun h => e)`. -/
syntax (name := termDepIfThenElse) "if " Lean.binderIdent " : " term " then " term " else " term : term

/-
Lean's compiled macros for these kinds. Where Lean has two for a kind (the plain application and the
`binop%`/`binrel%` form), both are bound in Lean's order, so that the later one is tried first.
-/
@[macro «term_+_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_+__1» : Lean.Macro
@[macro «term_+_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_+__2» : Lean.Macro
@[macro «term_-_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_-__1» : Lean.Macro
@[macro «term_-_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_-__2» : Lean.Macro
@[macro «term_*_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_*__1» : Lean.Macro
@[macro «term_*_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_*__2» : Lean.Macro
@[macro «term_=_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_=__1» : Lean.Macro
@[macro «term_=_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_=__2» : Lean.Macro
@[macro «term_≠_», extern "fim_native_macro"] opaque «_aux_Init_Core___macroRules_term_≠__1» : Lean.Macro
@[macro «term_≠_», extern "fim_native_macro"] opaque «_aux_Init_Core___macroRules_term_≠__2» : Lean.Macro
@[macro «term_≤_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_≤__1» : Lean.Macro
@[macro «term_≤_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_≤__2» : Lean.Macro
@[macro «term_<_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_<__1» : Lean.Macro
@[macro «term_<_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_<__2» : Lean.Macro
@[macro «term_≥_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_≥__1» : Lean.Macro
@[macro «term_≥_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_≥__2» : Lean.Macro
@[macro «term_>_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_>__1» : Lean.Macro
@[macro «term_>_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_>__2» : Lean.Macro
@[macro «term_∧_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_∧__1» : Lean.Macro
@[macro «term_∨_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term_∨__1» : Lean.Macro
@[macro «term¬_», extern "fim_native_macro"] opaque «_aux_Init_Notation___macroRules_term¬__1» : Lean.Macro
@[macro «term_↔_», extern "fim_native_macro"] opaque «_aux_Init_Core___macroRules_term_↔__1» : Lean.Macro
@[macro «term∃_,_», extern "fim_native_macro"] opaque «_aux_Init_NotationExtra___macroRules_term∃_,__1» : Lean.Macro
@[macro termIfThenElse, extern "fim_native_macro"] opaque _aux_Init_Notation___macroRules_termIfThenElse_1 : Lean.Macro
@[macro termDepIfThenElse, extern "fim_native_macro"] opaque _aux_Init_Notation___macroRules_termDepIfThenElse_1 : Lean.Macro
