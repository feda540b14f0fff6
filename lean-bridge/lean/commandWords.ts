/**
 * The words Lean's command grammar begins with, as the parser here knows them: declaration keywords, their
 * modifiers, the other commands, and the words that continue a declaration though they stand at column 0.
 * Lists, not Lean's grammar: a command they do not know is found by its place (commands.ts,
 * `foreignCommandStart`).
 */

export const DECLARATION_KEYWORDS = new Set([
  "theorem",
  "lemma",
  "example",
  "def",
  "instance",
  "abbrev",
  "opaque",
  "axiom",
  "structure",
  "class",
  "inductive",
  "coinductive",
]);

export const MODIFIERS = new Set([
  "private",
  "protected",
  "noncomputable",
  "partial",
  "unsafe",
  "nonrec",
  "local",
  "scoped",
  "public",
]);

export const OTHER_COMMANDS = new Set([
  "import",
  "module",
  "prelude",
  "namespace",
  "section",
  "end",
  "open",
  "variable",
  "universe",
  "set_option",
  "attribute",
  "notation",
  "infix",
  "infixl",
  "infixr",
  "prefix",
  "postfix",
  "macro",
  "macro_rules",
  "syntax",
  "elab",
  "elab_rules",
  "declare_syntax_cat",
  "mutual",
  "deriving",
  "initialize",
  "builtin_initialize",
  "#check",
  "#eval",
  "#print",
  "#reduce",
  "#exit",
  "#guard_msgs",
  "#synth",
  "#lint",
  "omit",
  "include",
  "export",
  "noncomputable",
  "run_cmd",
  "add_decl_doc",
  "register_simp_attr",
  "#guard",
]);

/** Words that continue a declaration after its body though they stand at column 0. */
export const BODY_CONTINUATIONS = new Set([
  "where",
  "termination_by",
  "termination_by?",
  "decreasing_by",
  "partial_fixpoint",
  "inductive_fixpoint",
  "coinductive_fixpoint",
  "deriving",
  // A calc step may stand at column 0 (its steps are aligned with each other, not with the tactic block).
  "_",
]);

/** Words that begin a command wherever they stand: Lean's parser ends a tactic block at any of them. */
export function isCommandKeyword(word: string): boolean {
  return (
    DECLARATION_KEYWORDS.has(word) ||
    (OTHER_COMMANDS.has(word) && word !== "open" && word !== "set_option" && word !== "noncomputable")
  );
}
