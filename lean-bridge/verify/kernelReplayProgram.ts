/**
 * The Lean program of the kernel gate's replay step (leanKernelGate.ts writes it into the project and runs it
 * with `lake env lean --run`). It reads one compiled check document (its `.olean`: constants only, no code of
 * it runs), finds the checked declaration among the module's own constants, sends it and every constant of the
 * module it depends on to Lean's kernel on top of the module's imports through Lean's own replay
 * (src/Lean/Replay.lean: `Lean.Environment.replay` up to 4.34, `Lean.Kernel.Environment.replay` in 4.35 and
 * later, whose module calls it the same definitions as lean4checker's), and lists the axioms the declaration
 * rests on, saying which the module declared itself and which have the shape of a native computation's
 * (`@Eq Bool e true`, src/Lean/Meta/Native.lean). Given a reference module (the same document compiled with the
 * verifier's `sorry` in the hole, by a process that ran no candidate code) it also says whether the checked
 * declaration states what the reference's does: the same kind, universe parameters and (`Expr.eqv`) type.
 * It prints one line `FIMRLVR-GATE <json>`.
 *
 * One text serves every supported release (4.24 on): where Lean's API differs between them, the program tries
 * each known form in order (`first | exact … | exact …`, which backtracks over an elaboration error such as an
 * unknown constant), so a release that has none of them fails the gate's self-test, never a candidate. The
 * text avoids backquotes and `${`, so it stands in this template literal as Lean reads it.
 */

/** Bumped with every change of the program: names the file, so a project never runs a stale copy. */
export const KERNEL_REPLAY_VERSION = 3;

/** The marker of the program's answer line. */
export const GATE_ANSWER_PREFIX = "FIMRLVR-GATE ";

export const KERNEL_REPLAY_PROGRAM = `import Lean
import Lean.Replay

/-!
fim-rlvr's kernel gate, replay step (version ${KERNEL_REPLAY_VERSION}; written by lean-bridge/verify/leanKernelGate.ts).
Usage: lean --run <this file> --self-test
       lean --run <this file> <module.olean> (exact|may-be-private) (<reference.olean>|-) <name component>...
-/

open Lean

namespace FimRlvrGate

/-- A name's components as text (a number as its digits). -/
def parts : Name → List String
  | .anonymous => []
  | .str p s => parts p ++ [s]
  | .num p n => parts p ++ [toString n]

/-- Whether n is the checked declaration: its full name, or where allowed Lean's private form of it. -/
def isChecked (want : List String) (mayBePrivate : Bool) (n : Name) : Bool :=
  let got := parts n
  if got == want then true
  else if !mayBePrivate || got.length < want.length + 3 then false
  else
    got.head? == some "_private" &&
      got.drop (got.length - want.length) == want &&
      (got.drop (got.length - want.length - 1)).head? == some "0"

/-- The constants the kernel reads to check ci (for an inductive family its constructors and siblings too). -/
def uses (ci : ConstantInfo) : Array Name :=
  let ofExprs (es : List Expr) : Array Name := es.foldl (fun acc e => acc ++ e.getUsedConstants) #[]
  match ci with
  | .defnInfo v => ofExprs [v.type, v.value]
  | .thmInfo v => ofExprs [v.type, v.value]
  | .opaqueInfo v => ofExprs [v.type, v.value]
  | .axiomInfo v => ofExprs [v.type]
  | .quotInfo v => ofExprs [v.type]
  | .inductInfo v => ofExprs [v.type] ++ v.all.toArray ++ v.ctors.toArray
  | .ctorInfo v => (ofExprs [v.type]).push v.induct
  | .recInfo v => ofExprs (v.type :: v.rules.map (fun r => r.rhs)) ++ v.all.toArray

/-- The module's constants that start depends on, itself included: what the kernel must see again. -/
def closure (consts : Std.HashMap Name ConstantInfo) (start : Name) : Std.HashMap Name ConstantInfo := Id.run do
  let mut out : Std.HashMap Name ConstantInfo := {}
  let mut todo : List Name := [start]
  while !todo.isEmpty do
    match todo with
    | [] => pure ()
    | n :: rest =>
      todo := rest
      if !out.contains n then
        match consts[n]? with
        | none => pure ()
        | some ci =>
          out := out.insert n ci
          todo := (uses ci).toList ++ todo
  return out

/-- The type of the axiom nativeEqTrue adds for one native computation: @Eq Bool e Bool.true. -/
def nativeShaped (type : Expr) : Bool :=
  type.isAppOfArity (Name.mkSimple "Eq") 3 &&
    type.appFn!.appFn!.appArg! == mkConst (Name.mkSimple "Bool") &&
    type.appArg! == mkConst (Name.mkStr (Name.mkSimple "Bool") "true")

structure FoundAxiom where
  name : Name
  inModule : Bool
  nativeShape : Bool

/-- Every axiom start rests on, through the module's constants and the imported ones alike. -/
def axiomsOf (consts : Std.HashMap Name ConstantInfo) (base : Environment) (start : Name) : Array FoundAxiom :=
  Id.run do
    let mut seen : Std.HashSet Name := {}
    let mut todo : List Name := [start]
    let mut found : Array FoundAxiom := #[]
    while !todo.isEmpty do
      match todo with
      | [] => pure ()
      | n :: rest =>
        todo := rest
        if !seen.contains n then
          seen := seen.insert n
          let inModule := consts.contains n
          let ci? := if inModule then consts[n]? else base.find? n
          match ci? with
          | none => pure ()
          | some ci =>
            if let .axiomInfo v := ci then
              found := found.push { name := n, inModule := inModule, nativeShape := nativeShaped v.type }
            todo := (uses ci).toList ++ todo
    return found

/-- The constants through the kernel on top of base, by Lean's own replay (its form differs by release). -/
def kernelReplay (consts : Std.HashMap Name ConstantInfo) (base : Environment) : IO Unit := by
  first
  | exact (Lean.Kernel.Environment.replay consts base.toKernelEnv) *> pure ()
  | exact (Lean.Environment.replay consts base.toKernelEnv) *> pure ()
  | exact (Lean.Environment.replay consts base) *> pure ()

/-- The kind of a constant, as the statement check compares it. -/
def kindOf : ConstantInfo → String
  | .defnInfo _ => "definition"
  | .thmInfo _ => "theorem"
  | .opaqueInfo _ => "opaque"
  | .axiomInfo _ => "axiom"
  | .quotInfo _ => "quot"
  | .inductInfo _ => "inductive"
  | .ctorInfo _ => "constructor"
  | .recInfo _ => "recursor"

/--
The answer's statement fields: whether ci states what the reference module's declaration of the checked name
states (none when no reference was given, "-": the gate's self-test).
-/
def statementFields (ci : ConstantInfo) (reference : String) (mayBePrivate : Bool) (want : List String) :
    IO (List (String × Json)) := do
  if reference == "-" then return []
  let noReference (why : String) : List (String × Json) :=
    [("statement", Json.str "no-reference"), ("statementMessage", Json.str why)]
  let read : Option ModuleData ← try pure (some (← readModuleData (System.FilePath.mk reference)).1)
    catch _ => pure none
  let some mod := read | return noReference "the reference module could not be read"
  let some (_, r) := (mod.constNames.zip mod.constants).find? (fun p => isChecked want mayBePrivate p.1)
    | return noReference "the reference module holds no declaration of the checked name"
  let why : Option String :=
    if kindOf ci != kindOf r then some "its kind (theorem, definition, ...) differs from the statement's"
    else if ci.levelParams != r.levelParams then some "its universe parameters differ from the statement's"
    else if !ci.type.eqv r.type then some "its type differs from the statement's"
    else none
  match why with
  | none => return [("statement", Json.str "same")]
  | some w => return [("statement", Json.str "differs"), ("statementMessage", Json.str w)]

def say (fields : List (String × Json)) : IO Unit :=
  IO.println ("${GATE_ANSWER_PREFIX}" ++ (Json.mkObj fields).compress)

def replayModule (olean : String) (mayBePrivate : Bool) (reference : String) (want : List String) :
    IO Unit := do
  let (mod, _) ← readModuleData (System.FilePath.mk olean)
  let mut consts : Std.HashMap Name ConstantInfo := {}
  for name in mod.constNames, ci in mod.constants do
    consts := consts.insert name ci
  let some checked := mod.constNames.find? (isChecked want mayBePrivate)
    | say [("kind", Json.str "missing"),
        ("message", Json.str ("the compiled module holds no declaration " ++ ".".intercalate want))]
  let base ← importModules mod.imports {}
  let needed := closure consts checked
  try
    kernelReplay needed base
  catch e =>
    say [("kind", Json.str "kernel-rejected"), ("declaration", Json.str checked.toString),
      ("message", Json.str (toString e))]
    return
  let axioms := axiomsOf consts base checked
  let statement ← match consts[checked]? with
    | some ci => statementFields ci reference mayBePrivate want
    | none => pure []
  say ([("kind", Json.str "replayed"), ("declaration", Json.str checked.toString),
    ("replayed", toJson needed.size)] ++ statement ++ [
    ("axioms", Json.arr (axioms.map fun a => Json.mkObj [("name", Json.str a.name.toString),
      ("declaredInDocument", Json.bool a.inModule), ("nativeShape", Json.bool a.nativeShape)]))])

end FimRlvrGate

def main (args : List String) : IO UInt32 := do
  match args with
  | ["--self-test"] =>
    FimRlvrGate.say [("kind", Json.str "ready"), ("version", toJson ${KERNEL_REPLAY_VERSION})]
    return 0
  | olean :: privacy :: reference :: component :: rest =>
    initSearchPath (← findSysroot)
    FimRlvrGate.replayModule olean (privacy == "may-be-private") reference (component :: rest)
    return 0
  | _ =>
    IO.eprintln "usage: lean --run <this file> (--self-test | <module.olean> (exact|may-be-private) (<reference.olean>|-) <name component>...)"
    return 2
`;
