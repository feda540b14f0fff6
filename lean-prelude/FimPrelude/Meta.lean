prelude
import FimPrelude.Core
/-!
# FimPrelude.Meta

The few runtime types that Lean's `syntax` command elaborates into: a `syntax` declaration becomes a
definition of type `Lean.ParserDescr`, which Lean evaluates to register the parser. The declarations match the
constructors of the runtime's own types, because the value the interpreter builds here is read by Lean's
compiled parser code.
-/

/-- Strings. The compiler and the runtime give `String` its representation by name; proofs never look inside. -/
opaque String : Type := PUnit

namespace Lean

/-- Hierarchical names such as `Lean.Parser.Tactic.exact`. -/
inductive Name : Type where
  | anonymous : Name
  | str (pre : Name) (s : String) : Name
  | num (pre : Name) (i : Nat) : Name

/-
The `syntax` command quotes its names with these functions. Lean's runtime has compiled code under the same
names, and the interpreter runs that code for an imported declaration that has it, so the names built carry
the hash the runtime stores in every name. (A name built with the constructors directly lacks it, and Lean's
tables of syntax kinds do not find it: a `ParserDescr.node` under such a name registers a parser whose
tactic "has not been implemented".) The same holds for any declaration here whose name Lean's runtime also
compiles (`Nat.add`, `Nat.decEq`, …): code that runs it gets Lean's implementation, which is why their
definitions must mean what Lean's do. Proofs are unaffected; the kernel reads only the definitions.
-/
def Name.mkStr (p : Name) (s : String) : Name := Name.str p s
def Name.mkStr1 (a : String) : Name := .str .anonymous a
def Name.mkStr2 (a b : String) : Name := .str (.str .anonymous a) b
def Name.mkStr3 (a b c : String) : Name := .str (.str (.str .anonymous a) b) c
def Name.mkStr4 (a b c d : String) : Name := .str (.str (.str (.str .anonymous a) b) c) d
def Name.mkStr5 (a b c d e : String) : Name := .str (.str (.str (.str (.str .anonymous a) b) c) d) e

abbrev SyntaxNodeKind := Name

/-- A parser written as data; `syntax` declarations elaborate to one. -/
inductive ParserDescr : Type where
  | const (name : Name)
  | unary (name : Name) (p : ParserDescr)
  | binary (name : Name) (p₁ p₂ : ParserDescr)
  | node (kind : SyntaxNodeKind) (prec : Nat) (p : ParserDescr)
  | trailingNode (kind : SyntaxNodeKind) (prec lhsPrec : Nat) (p : ParserDescr)
  | symbol (val : String)
  | nonReservedSymbol (val : String) (includeIdent : Bool)
  | cat (catName : Name) (rbp : Nat)
  | parser (declName : Name)
  | nodeWithAntiquot (name : String) (kind : SyntaxNodeKind) (p : ParserDescr)
  | sepBy (p : ParserDescr) (sep : String) (psep : ParserDescr) (allowTrailingSep : Bool)
  | sepBy1 (p : ParserDescr) (sep : String) (psep : ParserDescr) (allowTrailingSep : Bool)

abbrev TrailingParserDescr := ParserDescr

/-- `declare_syntax_cat c` declares a constant `Lean.Parser.Category.c` of this type, to hold its documentation. -/
structure Parser.Category : Type where

/-
Macros. Lean's own compiled code holds the macros that its `Init` library attaches to tactic and term
syntax (`try`, `rw`, `<;>`, `a + b`, …). This library declares no macro code of its own: `FimPrelude.Tactics`
and `FimPrelude.Notation` bind each such compiled macro by its name as an `@[extern]` constant of type
`Macro`, so the interpreter calls Lean's native function. A macro takes the syntax, the macro context and
state, and returns a result; the types below only fix that arity and are never built or read by code here.
-/

/-- Syntax trees, as the runtime represents them. -/
opaque Syntax : Type := PUnit
/-- The macro expander's context (the runtime's `Lean.Macro.Context`). -/
opaque Macro.Context : Type := PUnit
/-- The macro expander's state (the runtime's `Lean.Macro.State`). -/
opaque Macro.State : Type := PUnit
/-- What a macro returns: the runtime's `EStateM.Result`. Only its arity matters here. -/
def Macro.Result : Type := PUnit

/-- The type Lean's `@[macro k]` attribute requires of a macro. -/
def Macro : Type := Syntax → Macro.Context → Macro.State → Macro.Result

instance : Inhabited Macro := ⟨fun _ _ _ => PUnit.unit⟩

/-- The type Lean's `@[app_unexpander f]` attribute requires: it turns `f a b` back into notation when a
goal is printed. It takes the syntax, the reference syntax and a unit state. -/
def PrettyPrinter.Unexpander : Type := Syntax → Syntax → Unit → Macro.Result

instance : Inhabited PrettyPrinter.Unexpander := ⟨fun _ _ _ => PUnit.unit⟩

end Lean

/-- `p <|> q` in a syntax declaration: the first of two parsers that succeeds. -/
syntax:2 (name := «stx_<|>_») stx:2 " <|> " stx:1 : stx

@[macro «stx_<|>_», extern "fim_native_macro"]
opaque «_aux_Init_Notation___macroRules_stx_<|>__1» : Lean.Macro

namespace Lean

end Lean
