prelude
import FimPrelude.Simp
/-!
# FimPrelude.Pretty

Printing goals with notation. Lean's compiled unexpanders turn `HAdd.hAdd a b` back into `a + b`,
`Eq a b` into `a = b` and so on when a goal or a message is printed; each is bound by its name to the
constant it prints (see `FimPrelude.Meta`), so goals read as they do with Lean's own library.
-/

@[app_unexpander HAdd.hAdd, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_HAdd_hAdd_1 : Lean.PrettyPrinter.Unexpander
@[app_unexpander HMul.hMul, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_HMul_hMul_1 : Lean.PrettyPrinter.Unexpander
@[app_unexpander HSub.hSub, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_HSub_hSub_1 : Lean.PrettyPrinter.Unexpander
@[app_unexpander Eq, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_Eq_1 : Lean.PrettyPrinter.Unexpander
@[app_unexpander Ne, extern "fim_native_unexpander"]
opaque _aux_Init_Core___unexpand_Ne_1 : Lean.PrettyPrinter.Unexpander
@[app_unexpander LE.le, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_LE_le_2 : Lean.PrettyPrinter.Unexpander
@[app_unexpander LT.lt, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_LT_lt_1 : Lean.PrettyPrinter.Unexpander
@[app_unexpander GE.ge, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_GE_ge_2 : Lean.PrettyPrinter.Unexpander
@[app_unexpander GT.gt, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_GT_gt_1 : Lean.PrettyPrinter.Unexpander
@[app_unexpander And, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_And_1 : Lean.PrettyPrinter.Unexpander
@[app_unexpander Or, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_Or_1 : Lean.PrettyPrinter.Unexpander
@[app_unexpander Not, extern "fim_native_unexpander"]
opaque _aux_Init_Notation___unexpand_Not_1 : Lean.PrettyPrinter.Unexpander
@[app_unexpander Iff, extern "fim_native_unexpander"]
opaque _aux_Init_Core___unexpand_Iff_2 : Lean.PrettyPrinter.Unexpander
@[app_unexpander Exists, extern "fim_native_unexpander"]
opaque unexpandExists : Lean.PrettyPrinter.Unexpander
