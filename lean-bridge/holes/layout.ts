/**
 * When a line that starts at a tactic block's column continues the tactic above instead of starting a new
 * one: the miner's layout rule, derived from Lean's tactic parser rather than from examples.
 *
 * A tactic block is `sepBy1IndentSemicolon tactic` (src/Lean/Parser/Term.lean, `tacticSeq1Indented`):
 * `withPosition (sepBy1 (checkColGe >> tactic) ("; " <|> checkColEq >> checkLinebreakBefore >> pushNone))`.
 * The separator between two tactics is a line break at the block's column, but it is only tried once the
 * tactic parser has stopped, and that parser is greedy (leading parser, then every trailing parser that
 * applies, with no column check unless a parser asks for one). So a line at the block's column continues
 * the tactic above when:
 *   1. the line above ended where the tactic still needs input: an infix or trailing symbol (`<;>`, `:=`,
 *      `=>`, `↦`, `<|`, `,`, an operator) or a keyword that takes an argument (`by`, `fun`, `with`, `then`,
 *      `else`, `using`, `at`, `from`, `calc`, `exact` …) — Lean's `termParser`/`tacticParser` after them
 *      checks no column;
 *   2. the line starts with a token no tactic starts with (`|` of alternatives, `<;>`, `then`, `else`,
 *      `with`, `at`, `_` of a calc step, an operator, a closing bracket): the tactic parser would fail on
 *      it, so it can only be read as a continuation (application arguments, the one continuation with
 *      `checkColGt`, are excluded by their column, and tactics start with keywords, `·`, `(` or `{`);
 *   3. an inner tactic sequence was opened at the block's own column: `case _ =>`, `next =>`, an
 *      alternative's `=>`, `then`/`else` of `if`, `classical`, `all_goals`, `try` … end their line and
 *      take a `tacticSeq`, whose position is its first tactic — on the next line, at our column. Every
 *      later line at that column belongs to that inner sequence (it is greedy too) until a token ends it:
 *      `|` of the next alternative, `else`. (`by` and `·` take `tacticSeqIndentGt`, which refuses such a
 *      sequence with `checkColGt`; real code cannot have it, and reading it as (3) only merges steps.)
 * Misreading a continuation as a new tactic cuts holes mid-tactic; misreading a new tactic as a
 * continuation only merges two steps into one (still whole). So where the grammar leaves a doubt the rule
 * continues.
 */
import { TokenKind, type TokenStream } from "../lean/tokens";
import { TokenWords, tokenEquals } from "./tokenWords";

/** Symbols a tactic can start with: a bullet, `(tacs)`, `{ tacs }`, `#`-tactics (`#adaptation_note`). */
const TACTIC_START_SYMBOLS = new TokenWords(["·", ".", "(", "{", "#"]);

/** Words no tactic starts with: in front of a line they continue the tactic above. */
const CONTINUATION_WORDS = new TokenWords([
  "_",
  "then",
  "else",
  "with",
  "at",
  "using",
  "from",
  "generalizing",
  "in",
  "says",
  "only",
  "fun",
  "by",
  "do",
]);

/**
 * Symbols after which a tactic is complete: closing brackets, the location markers `⊢` and `*` of
 * `at h ⊢`/`at *`, postfix notation and the `;` separator. Every other symbol ending a line (an infix
 * operator, `:=`, `=>`, `<;>`, `,`, `|` …) needs what follows.
 */
const COMPLETE_SYMBOLS = new TokenWords([
  ")",
  "]",
  "}",
  "⟩",
  "⦄",
  "⟫",
  "⌋",
  "⌉",
  "⊢",
  "*",
  "!",
  "?",
  ";",
  "¹",
  "ᶜ",
  "†",
  "..",
  "⋯",
]);

/** Words that take a tactic sequence after them (src/Init/Tactics.lean, Mathlib): at a line's end, it opens one. */
const SEQUENCE_WORDS = new TokenWords([
  "by",
  "then",
  "else",
  "do",
  "try",
  "repeat",
  "repeat'",
  "all_goals",
  "any_goals",
  "focus",
  "classical",
  "iterate",
  "fail_if_success",
  "with_reducible",
  "with_reducible_and_instances",
  "with_unfolding_all",
]);

/** Other words that need what follows them (an argument, a term, patterns, alternatives). */
const OPEN_WORDS = new TokenWords([
  ...SEQUENCE_WORDS.words,
  "fun",
  "with",
  "at",
  "using",
  "from",
  "calc",
  "generalizing",
  "in",
  "says",
  "only",
  "if",
  "match",
  "have",
  "show",
  "suffices",
  "let",
  "set",
  "obtain",
  "exact",
  "refine",
  "refine'",
  "apply",
  "use",
  "exists",
  "rcases",
  "rintro",
  "cases",
  "induction",
  "cases'",
  "induction'",
  "rw",
  "rwa",
  "simp_rw",
  "change",
  "specialize",
  "convert",
  "first",
  "solve",
  "conv",
]);

/** Combinators whose tactic sequence starts right after their keyword (one line or below it). */
export const SEQUENCE_HEADS = new TokenWords(
  SEQUENCE_WORDS.words.filter((w) => w !== "by" && w !== "then" && w !== "else" && w !== "do"),
);

/** Whether token i (the first of its line) can only continue a tactic, never start one (rule 2). */
export function continuesOnly(ts: TokenStream, i: number): boolean {
  const kind = ts.kinds[i];
  if (kind === TokenKind.Ident) return CONTINUATION_WORDS.has(ts, i);
  if (kind === TokenKind.Symbol) return !TACTIC_START_SYMBOLS.has(ts, i);
  // Numbers, strings and chars are terms: no tactic starts with one.
  return kind === TokenKind.Number || kind === TokenKind.String || kind === TokenKind.Char;
}

/** Whether token i (the last code token of its line) leaves the tactic needing more input (rule 1). */
export function endsOpen(ts: TokenStream, i: number): boolean {
  const kind = ts.kinds[i];
  if (kind === TokenKind.Symbol) return !COMPLETE_SYMBOLS.has(ts, i);
  if (kind === TokenKind.Ident) return OPEN_WORDS.has(ts, i);
  // `iterate 3` takes a tactic sequence after its count.
  return kind === TokenKind.Number && i > 0 && tokenEquals(ts, i - 1, "iterate");
}

/**
 * Whether token i, ending its line and `endsOpen`, opens a tactic sequence (rule 3) rather than a term or
 * a single tactic. `=>` does unless a `fun`/`λ` before it on its line makes it a function's arrow.
 */
export function opensSequence(ts: TokenStream, i: number): boolean {
  const kind = ts.kinds[i];
  if (kind === TokenKind.Number) return true; // `iterate 3`
  if (kind === TokenKind.Ident) return SEQUENCE_WORDS.has(ts, i);
  if (tokenEquals(ts, i, "·") || tokenEquals(ts, i, ".")) return true;
  if (!tokenEquals(ts, i, "=>")) return false;
  for (let j = i - 1; j >= 0 && ts.lines[j] === ts.lines[i]; j--)
    if (tokenEquals(ts, j, "fun") || tokenEquals(ts, j, "λ")) return false;
  return true;
}

/**
 * Whether token i (the first of its line, at the column of an inner sequence opened by rule 3) ends that
 * sequence: the `|` of the next alternative, or the `else` of the `if` whose `then` branch it was.
 */
export function endsInnerSequence(ts: TokenStream, i: number, limit: number): boolean {
  if (tokenEquals(ts, i, "else")) return true;
  if (!tokenEquals(ts, i, "|")) return false;
  // An alternative has its `=>` on its line; a `|` without one continues a pattern (`rcases … | ⟨b⟩`).
  for (let j = i + 1; j <= limit && ts.lines[j] === ts.lines[i]; j++)
    if (tokenEquals(ts, j, "=>")) return true;
  return false;
}
