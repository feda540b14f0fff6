/**
 * The words the candidate policy forbids, and how it reads a word as Lean's tokenizer does: a word of syntax
 * (a keyword, a tactic's or command's leading word) counts only where Lean reads that syntax, a constant's
 * name wherever it is named. policy.ts applies them; docs/POLICY.md gives the reason for each word.
 */
import { TokenKind, isCommentKind, tokenText, type TokenStream } from "../lean/tokens";

/**
 * `sorryAx` is what `sorry` elaborates to; `as_aux_lemma` hides a proof (and its sorry) in a lemma; `stop`
 * is `repeat sorry` (Init/Tactics.lean), and in a bullet (`· stop`) it closes a goal behind another block's
 * unsolved goals, where Lean prints no sorry warning.
 */
export const SORRY_IDENTIFIERS = ["sorry", "admit", "sorryAx", "as_aux_lemma", "stop"];

/**
 * Tactics that spend wall-clock time without heartbeats: `sleep` turns any failure into a timeout. A
 * candidate's timeout is its failure anyway, but a batch of them would hold the verifier for nothing.
 */
export const TIME_IDENTIFIERS = ["sleep", "dbgSleep"];

/** Proofs that trust compiled code instead of the kernel (axioms `Lean.ofReduceBool`, `Lean.trustCompiler`). */
export const NATIVE_IDENTIFIERS = [
  "native_decide",
  // Std's bit-blasting tactics check their LRAT certificate with compiled code (`Lean.ofReduceBool`, from
  // Lean 4.29 `<declaration>._native.bv_decide.ax_…`): the axiom check refuses them too, this says why sooner.
  "bv_decide",
  "bv_check",
  "native",
  "ofReduceBool",
  "ofReduceNat",
  "reduceBool",
  "reduceNat",
  "trustCompiler",
];

/** Commands: a candidate using them would end the declaration or add a new one. */
export const ESCAPE_IDENTIFIERS = [
  "theorem",
  "lemma",
  "def",
  "example",
  "axiom",
  "instance",
  "abbrev",
  "opaque",
  "structure",
  "class",
  "inductive",
  "namespace",
  "section",
  "end",
  "import",
  "mutual",
  "universe",
  "variable",
  "attribute",
  "prelude",
  "module",
  "export",
  "omit",
  "include",
  "deriving",
];

/**
 * Ways to run arbitrary code during elaboration: commands and tactics that evaluate a term in the
 * interpreter, the syntax that defines new syntax, the modifiers that swap compiled code in, and the
 * constants through which code reaches the operating system. docs/POLICY.md names the source of each
 * elaborator (core Lean, Mathlib, Batteries, ProofWidgets, Plausible).
 */
export const CODE_EXECUTION_IDENTIFIERS = [
  "run_tac",
  "run_cmd",
  "run_elab",
  "run_meta",
  "run_conv",
  "by_elab",
  "plausible",
  "slim_check",
  "with_panel_widgets",
  "show_panel_widgets",
  "polyrith",
  "include_str",
  "elab",
  "elab_rules",
  "macro",
  "macro_rules",
  "syntax",
  "declare_syntax_cat",
  "notation",
  "infix",
  "infixl",
  "infixr",
  "prefix",
  "postfix",
  "unsafe",
  "implemented_by",
  "extern",
  "initialize",
  "builtin_initialize",
  "IO",
  "EIO",
  "BaseIO",
  "unsafeBaseIO",
  "unsafeIO",
  "unsafeEIO",
  "unsafeCast",
  "evalExpr",
  "evalTerm",
  "evalConst",
  "Lean.Elab",
  "Lean.Meta",
  "TacticM",
  "CommandElabM",
  "TermElabM",
  "MetaM",
  "CoreM",
];

/**
 * Search tactics: they once closed goals without a real proof (DeepSeek-Prover-V2) and are slow anyway.
 * Every tactic that runs `exact?` (or `rw?`) under another name is one of them: Mathlib's `observe` and
 * `rw_search`, `hint`, core's `try?`, and the `?` forms that search and print a suggestion.
 */
export const SEARCH_IDENTIFIERS = [
  "apply?",
  "exact?",
  "rw?",
  "rw??",
  "hint",
  "observe",
  "observe?",
  "rw_search",
  "library_search",
  "aesop?",
  "try?",
];

/**
 * Namespaces whose functions reach the operating system (files, processes, the network, the clock, the
 * standard streams) or the elaborator, refused as a name's first component or first two (after any
 * `_root_.`): `System.FilePath.pathExists`, and, where the file has `open IO` or `open System`,
 * `FS.writeFile`, `Process.exit` and `FilePath.readDir`. With them a term that Lean evaluates (a tactic's
 * configuration, `eval%`) could act, since `(act).run ()` runs any `IO` action from pure code. `Lean` is
 * refused as a first component too, unless the next component is one of LEAN_PURE_NAMESPACES: the rest of
 * `Lean` is the compiler, the elaborator, the environment and the server, whose functions read and write
 * files (`Lean.saveModuleData` writes an `.olean`). The tactic namespaces of Mathlib, Batteries, Aesop, Qq,
 * ProofWidgets, Plausible and Lake hold metaprograms and `IO` actions (Mathlib's `polyrith` asks a web
 * service), and no proof cites them.
 */
export const CODE_NAMESPACE_HEADS = [
  "System",
  "FS",
  "Process",
  "FilePath",
  "Std.Internal",
  "Std.Net",
  "Lean",
  "Lake",
  "Mathlib.Tactic",
  "Mathlib.Meta",
  "Mathlib.Util",
  "Mathlib.Linter",
  "Batteries.Tactic",
  "Batteries.Lean",
  "Batteries.CodeAction",
  "Batteries.Util",
  "Aesop",
  "Qq",
  "ProofWidgets",
  "Plausible",
];

/** Parts of `Lean` that hold only lemmas and pure definitions that proofs cite. */
export const LEAN_PURE_NAMESPACES = new Set(["Omega", "Grind", "Order"]);

/**
 * `x%` term elaborators a candidate may use: each elaborates its argument as a term and never evaluates it.
 * Every other identifier written against `%` is refused, since `eval%` (Mathlib) runs its argument in the
 * interpreter and a library may add more; write the remainder operator with spaces (`a % b`).
 */
export const PERCENT_ELABORATORS = new Set([
  "type_of",
  "ensure_type_of",
  "ensure_expected_type",
  "binop",
  "binop_lazy",
  "leftact",
  "rightact",
  "binrel",
  "binrel_no_prop",
  "unop",
  "no_implicit_lambda",
  "reassoc_of",
  "elementwise_of",
  "decl_name",
]);

/**
 * The `#…` words a candidate may write: Mathlib's `#adaptation_note` (a tactic, a term and a command that
 * only records a note) and Mathlib's `Finset.card` notation before `univ` (`#univ`). isTermHash reads the
 * other `#` terms.
 */
export const HASH_WORDS = new Set(["adaptation_note", "univ"]);

/**
 * The first part of a name that reaches the operating system, if any (see CODE_NAMESPACE_HEADS):
 * `System.FilePath.x`, `_root_.FS.writeFile`, `Lean.Environment.x`; `Lean.Omega.x` passes.
 */
export function codeNamespaceIn(
  ident: string,
  heads: readonly string[] = CODE_NAMESPACE_HEADS,
): string | undefined {
  const parts = nameParts(ident);
  while (parts[0] === "_root_") parts.shift();
  const head = parts[0] ?? "";
  if (head === "Lean" && heads.includes("Lean"))
    return LEAN_PURE_NAMESPACES.has(parts[1] ?? "") ? undefined : "Lean";
  const two = parts.slice(0, 2).join(".");
  if (heads.includes(two)) return two;
  if (heads.includes(head)) return head;
  // `open Mathlib in` would make `Tactic.…` name `Mathlib.Tactic.…`: the first part of a two-part head is
  // refused alone.
  if (parts.length === 1 && heads.some((h) => h.startsWith(`${head}.`))) return head;
  return undefined;
}

/**
 * The names of constants among the default words: forbidden as any component or prefix of a name
 * (`IO.println`, `Lean.«ofReduceBool»`, `Lean.Elab.Tactic.x`), since a constant is reached by its name
 * wherever the name stands. Every other default word is syntax. Words a policy file adds are taken for
 * constants (the stricter reading).
 */
const CONSTANT_NAMES = new Set([
  "sorryAx",
  "ofReduceBool",
  "ofReduceNat",
  "reduceBool",
  "reduceNat",
  "trustCompiler",
  "IO",
  "EIO",
  "BaseIO",
  "unsafeBaseIO",
  "unsafeIO",
  "unsafeEIO",
  "unsafeCast",
  "evalExpr",
  "evalTerm",
  "evalConst",
  "dbgSleep",
  "Lean.Elab",
  "Lean.Meta",
  "TacticM",
  "CommandElabM",
  "TermElabM",
  "MetaM",
  "CoreM",
]);

/**
 * Words of syntax: they count only as a whole identifier of one part. Lean reads a dotted name as one
 * identifier whose parts are never keywords (src/Lean/Parser/Basic.lean, `identFnAux` reads `r.stop`,
 * `Submodule.module` or `theorem.x` whole, and `mkIdResult` makes it a keyword only when the keyword is as
 * long as the whole identifier), so `show r.stop = 3` names a field, not the `stop` tactic.
 */
const SYNTAX_WORDS = new Set(
  [
    ...SORRY_IDENTIFIERS,
    ...TIME_IDENTIFIERS,
    ...NATIVE_IDENTIFIERS,
    ...ESCAPE_IDENTIFIERS,
    ...CODE_EXECUTION_IDENTIFIERS,
    ...SEARCH_IDENTIFIERS,
  ].filter((w) => !CONSTANT_NAMES.has(w)),
);

export function ruleFor(name: string): string {
  if (SORRY_IDENTIFIERS.includes(name)) return "sorry";
  if (NATIVE_IDENTIFIERS.includes(name)) return "native-code";
  if (ESCAPE_IDENTIFIERS.includes(name)) return "escape";
  if (SEARCH_IDENTIFIERS.includes(name)) return "search-tactic";
  if (CODE_EXECUTION_IDENTIFIERS.includes(name)) return "code-execution";
  if (TIME_IDENTIFIERS.includes(name)) return "time";
  return "policy"; // Forbidden by a policy file.
}

/**
 * The components of a name as Lean reads them: `«…»` escapes removed, dots inside them kept
 * (`Lean.«ofReduceBool»` is `Lean.ofReduceBool`; `«a.b».c` has the parts `a.b` and `c`).
 */
export function nameParts(ident: string): string[] {
  const parts: string[] = [];
  let current = "";
  for (let i = 0; i < ident.length; i++) {
    const c = ident[i];
    if (c === "«") {
      const close = ident.indexOf("»", i + 1);
      const end = close === -1 ? ident.length : close;
      current += ident.slice(i + 1, end);
      i = end;
    } else if (c === ".") {
      parts.push(current);
      current = "";
    } else current += c;
  }
  parts.push(current);
  return parts;
}

/** The forbidden word an identifier uses, if any: a syntax word as the whole identifier, a constant anywhere in it. */
export function forbiddenWordIn(ident: string, forbidden: ReadonlySet<string>): string | undefined {
  const parts = nameParts(ident);
  const name = parts.join(".");
  if (forbidden.has(name)) return name;
  const constant = (word: string) => forbidden.has(word) && !SYNTAX_WORDS.has(word);
  for (let k = 1; k < parts.length; k++) {
    const prefix = parts.slice(0, k).join(".");
    if (constant(prefix)) return prefix;
  }
  for (const part of parts) if (constant(part)) return part;
  return undefined;
}

/**
 * Forbidden words that are also ordinary names, allowed where they can only be a name (see nameInPlace).
 * `IO` is not one of them: `open IO` would make `FS.writeFile` reachable without naming it, and no proof
 * needs the type.
 */
export const ALSO_A_NAME = new Set(["native", "lemma", "stop", "admit", "hint", "sleep"]);

/**
 * Tactic words that Lean reads as the tactic only at a tactic's start, and as a name anywhere else: the
 * leading word of a tactic is not a reserved token (the tactic category parses a leading identifier both
 * ways, so `have hint := h` and `intro stop` are names even where Mathlib defines `hint`). Where this reading
 * is wrong the tactic runs, and each of them is caught later: `stop` and `admit` are `sorry` (the axiom check),
 * `hint` is a search (a real proof or a failure), `sleep` a timeout (the candidate's failure).
 */
const NAMEABLE_TACTICS = new Set(["stop", "admit", "hint", "sleep"]);

/** Tokens after which a word is a name being bound or used as a term, never a tactic, when on the same line. */
const NAME_BEFORE = new Set([
  "intro",
  "intros",
  "rintro",
  "have",
  "obtain",
  "fun",
  "λ",
  "exact",
  "refine",
  "apply",
  "use",
  "show",
  "from",
  "at",
  "⟨",
  ",",
]);

/**
 * Symbols after which Lean's parser is inside a term (an operator's right-hand side, a `:=` value, a type
 * after `:`, a rewrite's `←`), so a word after them on the same line is a name, never a tactic. Symbols that
 * can open a tactic sequence (`(`, `[`, `;`, `<;>`, `|`, `=>`, `·`, `{`) are not here.
 */
const TERM_OPERATORS = new Set([
  "+",
  "-",
  "*",
  "/",
  "%",
  "^",
  "=",
  "≠",
  "<",
  ">",
  "≤",
  "≥",
  "∧",
  "∨",
  "¬",
  "→",
  "↔",
  "∣",
  "∘",
  "•",
  "×",
  "∈",
  "∉",
  "⊆",
  "⊂",
  "∩",
  "∪",
  "\\",
  "++",
  "::",
  "▸",
  ":=",
  ":",
  "←",
  "$",
  "<|",
  "|>",
  "∑",
  "∏",
]);

/**
 * Words after which a tactic sequence may start on the same line (`exact by stop`, `⟨by hint, h⟩`, `try stop`):
 * a name never reaches back past them to a binder.
 */
const BLOCK_OPENERS = new Set([
  "by",
  "try",
  "repeat",
  "repeat'",
  "all_goals",
  "any_goals",
  "focus",
  "first",
  "iterate",
  "then",
  "else",
  "do",
  "classical",
  "case",
  "case'",
  "next",
  "on_goal",
  "pick_goal",
  "with",
]);

function nextCodeToken(ts: TokenStream, i: number): number {
  let j = i;
  while (j < ts.count && isCommentKind(ts.kinds[j] ?? 0)) j++;
  return j;
}

function prevCodeToken(ts: TokenStream, i: number): number {
  let k = i;
  while (k >= 0 && isCommentKind(ts.kinds[k] ?? 0)) k--;
  return k;
}

/**
 * Whether the word at token i stands, on its own line, where it can only be a name: after a binder or term
 * keyword with only identifiers between (`intro start stop h`, `exact f stop`), right after a term operator
 * (`a + stop`, `h ▸ stop`), or as a field written against a projection (`p.1.stop`: a `.` touching the token
 * before it and this word).
 */
function namedAfterBinder(ts: TokenStream, i: number): boolean {
  let prev = prevCodeToken(ts, i - 1);
  if (prev < 0 || ts.lines[prev] !== ts.lines[i]) return false;
  const before = tokenText(ts, prev);
  if (
    before === "." &&
    ts.kinds[prev] === TokenKind.Symbol &&
    ts.ends[prev] === ts.starts[i] &&
    prev > 0 &&
    ts.ends[prev - 1] === ts.starts[prev]
  )
    return true;
  if (ts.kinds[prev] === TokenKind.Symbol && TERM_OPERATORS.has(before)) return true;
  while (
    prev >= 0 &&
    ts.lines[prev] === ts.lines[i] &&
    ts.kinds[prev] === TokenKind.Ident &&
    !BLOCK_OPENERS.has(tokenText(ts, prev))
  ) {
    if (NAME_BEFORE.has(tokenText(ts, prev))) return true;
    prev = prevCodeToken(ts, prev - 1);
  }
  return prev >= 0 && ts.lines[prev] === ts.lines[i] && NAME_BEFORE.has(tokenText(ts, prev));
}

/**
 * Whether a word of ALSO_A_NAME at token i stands where it can only be a name. `native` switches native code
 * on as a configuration item (`decide +native`, `(native := true)`, `{ native := true }`), so it is a name
 * unless `+`/`-` is written against it or it stands as a named argument or field (after `(`, `{`, `,` or
 * `with`, before `:=`). `lemma` starts a command (Mathlib's) only when a declaration name follows, unless it
 * was itself bound as a name on its line (`intro lemma`, the next line starting with a tactic); `lemma.1.1`
 * is a name. The nameable tactics are names after a binder or term keyword on their line (`have hint := h`,
 * `intro stop`, `⟨a, admit⟩`, `exact hint.1`); what follows a word does not tell (`(by admit : P)` and
 * `⟨by hint, h⟩` run the tactic, and so does `hint.1` at a tactic's start, before Lean's parse error). Lean
 * confirms either way: a command would end the declaration early, which Lean's range of it shows.
 */
export function nameInPlace(ts: TokenStream, i: number): boolean {
  const word = tokenText(ts, i);
  const next = nextCodeToken(ts, i + 1);
  const nextText = next < ts.count ? tokenText(ts, next) : "";
  if (word === "native") {
    const k = prevCodeToken(ts, i - 1);
    const before = k >= 0 ? tokenText(ts, k) : "";
    const against = (before === "+" || before === "-") && ts.ends[k] === ts.starts[i];
    // `(native := true)`, `{ native := true }`, `{ x with native := true }`: a named argument or a field.
    const field = ["(", "{", ",", "with"].includes(before) && nextText === ":=";
    return !against && !field;
  }
  if (word === "lemma") {
    if (next >= ts.count || ts.kinds[next] !== TokenKind.Ident) return true;
    return ts.lines[next] !== ts.lines[i] && namedAfterBinder(ts, i);
  }
  if (NAMEABLE_TACTICS.has(word)) return namedAfterBinder(ts, i);
  return word === "IO";
}

/**
 * `#v[…]` (a vector literal) and Mathlib's `#s` (`Finset.card s`, a one-letter name after `#`, maybe with a
 * field: `#s.powerset`) are terms, not commands: `#` with `v` and `[` written together, or with a name whose
 * first part is one letter (primes and subscript digits allowed). Lean's tokenizer takes the longest token
 * the text starts with (`#eval` in `#eval.x`), and every command spelled `#…` is a longer word (`#eval`,
 * `#exit`, `#print`, `#check` …); a command that slipped through would end the declaration, which Lean's
 * range of it shows.
 */
export function isTermHash(ts: TokenStream, i: number): boolean {
  const name = tokenText(ts, i + 1);
  if (HASH_WORDS.has(nameParts(name)[0] ?? "") && !name.startsWith("«")) return true;
  if (/^\p{L}['\u2080-\u2089]*$/u.test(nameParts(name)[0] ?? "") && !name.startsWith("«")) return true;
  return (
    name === "v" &&
    ts.kinds[i + 2] === TokenKind.Symbol &&
    tokenText(ts, i + 2) === "[" &&
    ts.starts[i + 2] === ts.ends[i + 1]
  );
}
