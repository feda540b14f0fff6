prelude
import FimPrelude.Notation
/-!
# FimPrelude.Tactics

Tactic syntax. Lean 4.35 carries the tactic *elaborators* compiled in, keyed by syntax kind, but the tactic
*grammar* lives in `Init`, which this workspace does not have. Each declaration below gives one tactic a
grammar of our own under the kind name that Lean's elaborator for it is registered for, and with the node
shape that elaborator reads (the same children in the same order). Tactics that Lean implements as macros
(`try`, `<;>`, `rw`, `rfl`, `sorry`, `exists`, `have`, `trivial`, `exfalso`) are bound to Lean's compiled
macro functions by name (see `FimPrelude.Meta`), so the expansion is Lean's own.
-/

namespace Lean

namespace Parser.Tactic

/-! ## Closing and shaping the goal with a term -/

/-- `exact e` closes the goal with `e`. -/
syntax (name := exact) "exact " term : tactic
/-- `apply e` unifies the conclusion of `e` with the goal; the premises left over become goals. -/
syntax (name := apply) "apply " term : tactic
/-- `refine e` is `exact e` in which each `?_` becomes a new goal. -/
syntax (name := refine) "refine " term : tactic
/-- `refine' e` also turns each `_` it cannot fill into a goal. -/
syntax (name := refine') "refine' " term : tactic
/-- `show t` picks the goal that unifies with `t` and states it as `t`. -/
syntax (name := «show») "show " term : tactic

/-! ## Hypotheses -/

/-- `intro x y` introduces binders of the goal under the given names (or anonymous ones). -/
syntax (name := intro) "intro" notFollowedBy("|") many(ppSpace colGt term:1024) : tactic
/-- `intros` introduces every binder of the goal; `intros x _` introduces as many as it is given. -/
syntax (name := intros) "intros" many(ppSpace colGt (ident <|> hole)) : tactic
/-- `assumption` closes the goal with a hypothesis of the same type. -/
syntax (name := assumption) "assumption" : tactic
/-- `contradiction` closes a goal whose hypotheses are evidently inconsistent. -/
syntax (name := contradiction) "contradiction" : tactic
/-- `subst h` substitutes a variable by the other side of the equation `h`. -/
syntax (name := subst) "subst" many1(ppSpace colGt term:1024) : tactic

/-- `revert h` moves the hypothesis `h` back into the goal. -/
syntax (name := revert) "revert" many1(ppSpace colGt term:1024) : tactic
/-- `clear h` removes the hypothesis `h`. -/
syntax (name := clear) "clear" many1(ppSpace colGt term:1024) : tactic
/-- `specialize h a` replaces the hypothesis `h : ∀ x, p x` by `h : p a`. -/
syntax (name := specialize) "specialize " term : tactic
/-- `rename_i a b` names the most recent inaccessible hypotheses. -/
syntax (name := renameI) "rename_i" many1(ppSpace colGt binderIdent) : tactic

/-! ## Constructors and case analysis -/

/-- `constructor` applies the first constructor of the goal's inductive type that fits. -/
syntax (name := constructor) "constructor" : tactic
/-- `left` applies the first of exactly two constructors. -/
syntax (name := left) "left" : tactic
/-- `right` applies the second of exactly two constructors. -/
syntax (name := right) "right" : tactic

/-- A target of `cases` or `induction`, optionally naming the equation `h : e = …`. -/
syntax elimTarget := optional(atomic(binderIdent " : ")) term
/-- The head of an alternative: `| zero` or `| succ n ih`. -/
syntax inductionAltLHS := "| " (group(optional("@") ident) <|> hole) many(colGt binderIdent)
/-- One alternative, `| succ n ih => tac`. -/
syntax inductionAlt := ppDedent(ppLine) many1(inductionAltLHS) " => " (hole <|> syntheticHole <|> tacticSeq)
/-- The `with` part: an optional tactic for every case, then the alternatives. -/
syntax inductionAlts := " with" optional(ppSpace colGt tactic) withPosition(many1(colGe inductionAlt))
/-- `cases e` splits the goal by the constructors of `e`'s type. -/
syntax (name := cases) "cases " sepBy1(elimTarget, ", ") optional(" using " ident) optional(inductionAlts) : tactic
/-- `induction n` splits by constructors, with an induction hypothesis for each recursive argument. -/
syntax (name := induction) "induction " sepBy1(elimTarget, ", ") optional(" using " ident)
  optional(" generalizing" many1(ppSpace colGt term:1024)) optional(inductionAlts) : tactic

/-- One case name with the names to give its inaccessible hypotheses. -/
syntax caseArg := binderIdent many(ppSpace binderIdent)
/-- `case tag => tac` solves the goal tagged `tag` with `tac`. -/
syntax (name := case) "case " sepBy1(caseArg, " | ") " => " tacticSeq : tactic
/-- `case'` is `case` without requiring the goal to be closed. -/
syntax (name := case') "case' " sepBy1(caseArg, " | ") " => " tacticSeq : tactic

/-! ## Combinators -/

/-- `skip` does nothing. -/
syntax (name := skip) "skip" : tactic
/-- `done` fails if any goal is left. -/
syntax (name := done) "done" : tactic
/-- `fail "msg"` always fails. -/
syntax (name := fail) "fail" optional(ppSpace str) : tactic
/-- `(tacs)` runs a tactic sequence. -/
syntax (name := paren) "(" withoutPosition(tacticSeq) ")" : tactic
/-- `first | t₁ | t₂` runs the first alternative that succeeds. -/
syntax (name := first) "first " withPosition(many1(ppDedent(ppLine) colGe "| " tacticSeq)) : tactic
/-- `focus tacs` runs `tacs` on the main goal alone. -/
syntax (name := focus) "focus " tacticSeq : tactic
/-- `all_goals tacs` runs `tacs` on every goal. -/
syntax (name := allGoals) "all_goals " tacticSeq : tactic
/-- `any_goals tacs` runs `tacs` on every goal and succeeds if it succeeds on one. -/
syntax (name := anyGoals) "any_goals " tacticSeq : tactic
/-- `rotate_left n` moves the first `n` goals to the end. -/
syntax (name := rotateLeft) "rotate_left" optional(ppSpace num) : tactic
/-- `rotate_right n` moves the last `n` goals to the front. -/
syntax (name := rotateRight) "rotate_right" optional(ppSpace num) : tactic
/-- `repeat tacs` runs `tacs` on the main goal until it fails. -/
syntax (name := tacticRepeat_) "repeat " tacticSeq : tactic
/-- `with_reducible tacs` runs `tacs` unfolding only reducible definitions. -/
syntax (name := withReducible) "with_reducible " tacticSeq : tactic
/-- Raw syntax, the first argument of `with_annotate_state`. -/
declare_syntax_cat rawStx

/-- `with_annotate_state stx t` runs `t` and shows its state at `stx` (used by `<;>`). -/
syntax (name := withAnnotateState) "with_annotate_state " rawStx ppSpace tactic : tactic
/-- `fail_if_success t` fails if `t` succeeds. -/
syntax (name := failIfSuccess) "fail_if_success " tacticSeq : tactic

/-! ## Reflexivity, rewriting, computation -/

/-- `eq_refl` closes `a = b` when both sides are definitionally equal. -/
syntax (name := eqRefl) "eq_refl" : tactic
/-- `apply_rfl` closes `a ~ a` for `=`, `HEq`, `Iff` and `@[refl]` relations. -/
syntax (name := applyRfl) "apply_rfl" : tactic

/-- A configuration item `+opt`. -/
syntax posConfigItem := "+" noWs ident
/-- A configuration item `-opt`. -/
syntax negConfigItem := "-" noWs ident
/-- A configuration item `(opt := v)`. -/
syntax valConfigItem := atomic(" (" notFollowedBy(&"discharger" <|> &"disch") (ident <|> &"config")) " := " withoutPosition(term) ")"
/-- One configuration item. -/
syntax configItem := posConfigItem <|> negConfigItem <|> valConfigItem
/-- The configuration items a tactic accepts after its name. -/
syntax optConfig := many(colGt configItem)

/-- `at *`. -/
syntax locationWildcard := " *"
/-- `at h₁ h₂ ⊢`. -/
syntax locationHyp := many1(ppSpace colGt term:1024) optional(patternIgnore(ppSpace (atomic("|" noWs "-") <|> "⊢")))
/-- Where a tactic acts: `at h`, `at h ⊢`, `at *`. -/
syntax location := withPosition(" at" (locationWildcard <|> locationHyp))

/-- One rewrite rule, `h` or `← h`. -/
syntax rwRule := optional(patternIgnore("← " <|> "<- ")) term
/-- The rules of `rw`, `[h₁, ← h₂]`. -/
syntax rwRuleSeq := " [" withoutPosition(sepBy(rwRule, ",", ", ", allowTrailingSep)) "]"
/-- `rewrite [h]` rewrites the goal (or `at h'`) with the equations given, left to right. -/
syntax (name := rewriteSeq) "rewrite" optConfig rwRuleSeq optional(location) : tactic

/-- `decide` proves a closed decidable proposition by evaluating its `Decidable` instance. -/
syntax (name := decide) "decide" optConfig : tactic

/-- `simp` lemma modifiers `↓` and `↑`. -/
syntax simpPre := "↓"
syntax simpPost := "↑"
/-- A lemma given to `simp`: `h`, `← h`, `↓ h`. -/
syntax simpLemma := optional(simpPre <|> simpPost) optional(patternIgnore("← " <|> "<- ")) term
/-- `-h` removes `h` from the simp set. -/
syntax simpErase := "-" term:1024
/-- `*` adds every hypothesis. -/
syntax simpStar := "*"
/-- `(disch := tac)` discharges side conditions with `tac`. -/
syntax discharger := atomic(" (" patternIgnore(&"discharger" <|> &"disch")) " := " withoutPosition(tacticSeq) ")"
/-- `simp`, `simp only [h]`, `simp [h] at h'`: rewrites with `@[simp]` lemmas and the ones given. -/
syntax (name := simp) "simp" optConfig optional(discharger) optional(&" only")
  optional(" [" withoutPosition(sepBy(simpStar <|> simpErase <|> simpLemma, ",", ", ", allowTrailingSep)) "]")
  optional(location) : tactic

/-- `unfold f` unfolds the definition `f` by its equation lemmas. -/
syntax (name := unfold) "unfold" many1(ppSpace colGt ident) optional(location) : tactic

/-! ## Tactics that Lean implements as macros -/

/-- `try tacs` runs `tacs` and succeeds even if it fails. -/
syntax (name := tacticTry_) "try " tacticSeq : tactic
/-- `t <;> u` runs `u` on every goal `t` produces. -/
syntax:1 (name := «tactic_<;>_») tactic " <;> " tactic:2 : tactic
/-- `rfl` closes a goal `a = a` (and `HEq a a`, `a ↔ a`) up to definitional unfolding. -/
syntax (name := tacticRfl) "rfl" : tactic
/-- `rw [h]` is `rewrite [h]` followed by `rfl` with reducible unfolding. -/
syntax (name := rwSeq) "rw " optConfig rwRuleSeq optional(location) : tactic
/-- `sorry` closes the goal with `sorryAx`; Lean warns that the declaration uses it. -/
syntax (name := tacticSorry) "sorry" : tactic
/-- `exists a, b` is `refine ⟨a, b, ?_⟩; try trivial`. -/
syntax (name := «tacticExists_,,») "exists" sepBy1(ppSpace colGt term, ",") : tactic
/-- `refine_lift e` refines with `e` and makes its `?_` the main goal (used by `have`). -/
syntax (name := tacticRefine_lift_) "refine_lift " term : tactic
/-- `have h : t := e` adds the hypothesis `h : t` proven by `e` (`have : t := e` names it `this`). -/
syntax (name := tacticHave__) "have" letConfig letDecl : tactic
/-- `trivial` tries `assumption`, `rfl`, `contradiction`, `decide`, `True.intro` and `And.intro`. -/
syntax (name := tacticTrivial) "trivial" : tactic
/-- `next x y => tacs` solves the next goal with `tacs`, naming its inaccessible hypotheses. -/
syntax (name := «tacticNext_=>_») "next " many(binderIdent) " => " tacticSeq : tactic
/-- `exfalso` turns the goal into `False`. -/
syntax (name := tacticExfalso) "exfalso" : tactic

/-
Lean's compiled macros for the kinds above, bound by name. Where Lean has several `macro_rules` for a kind,
the expander tries the last registered first and moves on when a choice fails, so they are listed in
Lean's own order.
-/
@[macro tacticTry_, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticTry__1 : Macro
@[macro «tactic_<;>_», extern "fim_native_macro"]
opaque «_aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tactic_<;>__1» : Macro
@[macro tacticRfl, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticRfl_1 : Macro
@[macro tacticRfl, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticRfl_2 : Macro
@[macro tacticRfl, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticRfl_3 : Macro
@[macro tacticRfl, extern "fim_native_macro"]
opaque _root_._aux_Init_Core___macroRules_Lean_Parser_Tactic_tacticRfl_1 : Macro
@[macro rwSeq, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_rwSeq_1 : Macro
@[macro tacticSorry, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticSorry_1 : Macro
@[macro «tacticExists_,,», extern "fim_native_macro"]
opaque «_aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticExists_,,_1» : Macro
@[macro tacticRefine_lift_, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticRefine_lift__1 : Macro
@[macro tacticHave__, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticHave___1 : Macro
@[macro «tacticNext_=>_», extern "fim_native_macro"]
opaque «_aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticNext_=>__1» : Macro
@[macro tacticExfalso, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticExfalso_1 : Macro
@[macro tacticTrivial, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticTrivial_1 : Macro
@[macro tacticTrivial, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticTrivial_2 : Macro
@[macro tacticTrivial, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticTrivial_3 : Macro
@[macro tacticTrivial, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticTrivial_4 : Macro
@[macro tacticTrivial, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticTrivial_5 : Macro
@[macro tacticTrivial, extern "fim_native_macro"]
opaque _aux_Init_Tactics___macroRules_Lean_Parser_Tactic_tacticTrivial_6 : Macro

end Parser.Tactic

/-! ## `calc` and `·` -/

/-- The first step of a `calc` chain; its proof may be left out to start from a term. -/
syntax calcFirstStep := ppIndent(colGe term optional(" := " term))
/-- A further step `_ = b := proof`. -/
syntax calcStep := ppIndent(colGe term " := " term)
/-- The steps of a `calc` chain. -/
syntax calcSteps := ppLine withPosition(calcFirstStep) withPosition(many(calcStep ppLine))
/-- `calc a = b := p₁; _ = c := p₂` proves `a = c` by chaining the relations through `Trans`. -/
syntax (name := calcTactic) "calc" calcSteps : tactic
/-- `calc` in term mode: `calc a = b := p₁\n _ = c := p₂` is a proof of `a = c`. -/
syntax (name := «calc») "calc" calcSteps : term
/-- The bullet `·` (or `.`). -/
syntax cdotTk := patternIgnore("· " <|> ". ")
/-- `· tacs` focuses on the main goal and requires `tacs` to close it. -/
syntax (name := cdot) cdotTk tacticSeqIndentGt : tactic

end Lean
