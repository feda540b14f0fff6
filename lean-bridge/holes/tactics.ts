/**
 * The structure of a tactic block, read with Lean's layout rule (layout.ts): a block's steps all start at
 * the column of its first tactic; a line starting further right continues the step above, and so does a
 * line at the block's column that Lean's grammar reads as a continuation; a line starting further left (or
 * a closing bracket) ends the block. Inside a step, nested blocks open after a `·` bullet, after `by` (a
 * `have`'s proof, a `calc` step's proof), after `=>` of `case`, `next` and the alternatives of
 * `induction`/`cases`/`match`, and after combinators that take a tactic sequence (`classical`, `all_goals` …).
 */
import { TokenKind, bracketDelta, isCommentKind, type TokenStream } from "../lean/tokens";
import { TokenWordMap, TokenWords, textIs, tokenEquals } from "./tokenWords";
import { SEQUENCE_HEADS, continuesOnly, endsInnerSequence, endsOpen, opensSequence } from "./layout";

export interface TacticStep {
  /** Token indices of the step's first and last code tokens. */
  first: number;
  last: number;
  nested: readonly TacticBlock[];
  /**
   * Whether the step is a whole tactic sequence in its place (`isWholeSequence` in mine.ts, over the file's
   * own tokens): its brackets balance (never closing more than they opened), no line of it starts left of
   * its column, the file does not end inside its last token, and what follows it on its line can only close
   * an enclosing term. Read off while reading the block, so that the miner need not scan each step again.
   */
  whole: boolean;
}

export interface TacticBlock {
  first: number;
  last: number;
  column: number;
  steps: TacticStep[];
}

/** Steps whose `=>` opens tactic blocks (not a `fun x => term`). */
const ARROW_HEADS = [
  "case",
  "case'",
  "next",
  "induction",
  "cases",
  "match",
  "induction'",
  "cases'",
  "rcases",
  "on_goal",
];
/** Steps whose nested syntax is not ordinary tactics (conversions), left whole. */
const OPAQUE_HEADS = ["conv", "conv_lhs", "conv_rhs"];

/**
 * Where a step's nested blocks are, by its first token: none (`opaque`), right after it (`bullet`, and
 * `sequence` for SEQUENCE_HEADS), or after each `by` and, for `arrows`, each `=>` at the step's depth
 * (otherwise). One lookup per step.
 */
type HeadRole = "opaque" | "bullet" | "sequence" | "arrows";
const HEAD_ROLES = new TokenWordMap<HeadRole>([
  ...ARROW_HEADS.map((w): [string, HeadRole] => [w, "arrows"]),
  ...SEQUENCE_HEADS.words.map((w): [string, HeadRole] => [w, "sequence"]),
  ["·", "bullet"],
  [".", "bullet"],
  // Last, so that it wins were a word in two lists (none is): the original tests came in this order.
  ...OPAQUE_HEADS.map((w): [string, HeadRole] => [w, "opaque"]),
]);
function isCode(ts: TokenStream, i: number): boolean {
  return !isCommentKind(ts.kinds[i] ?? 0);
}

function nextCode(ts: TokenStream, i: number, limit: number): number {
  while (i <= limit && !isCode(ts, i)) i++;
  return i;
}

/**
 * Whether the `|` at token i (at the block's bracket depth) starts the next alternative of a `with`/`match`
 * rather than belonging to a term or pattern of the current arm (`|x|`, `rcases h with a | b`,
 * `first | a | b`). On its own line, a bar at or left of the arm's column starts an alternative and one
 * further right continues the step. Inside a line, it starts an alternative only when a `=>` follows it
 * on that line before any other bar (`| inl h => simp | inr h => simp`).
 */
function startsAlternative(ts: TokenStream, i: number, limit: number, column: number): boolean {
  if (ts.lineFirst[i] === 1) return (ts.cols[i] ?? 0) <= column;
  let depth = 0;
  for (let j = i + 1; j <= limit && ts.lineFirst[j] !== 1; j++) {
    if (!isCode(ts, j)) continue;
    if (depth === 0 && tokenEquals(ts, j, "|")) return false;
    if (depth === 0 && tokenEquals(ts, j, "=>")) return true;
    depth += bracketDelta(ts, j);
    if (depth < 0) return false;
  }
  return false;
}

/** Steps whose own syntax has a `:` (`have h : P`, `show P`): in them a `:` does not end a `by` in brackets. */
const TYPED_HEADS = new TokenWords([
  "have",
  "haveI",
  "let",
  "letI",
  "show",
  "suffices",
  "obtain",
  "set",
  "replace",
  "generalize",
  "calc",
]);

/** Whether token i is the `:` of a type ascription that ends a `by` block in brackets: `(by omega : 0 < n)`. */
function endsAscribed(ts: TokenStream, i: number, stepFirst: number): boolean {
  return tokenEquals(ts, i, ":") && !TYPED_HEADS.has(ts, stepFirst);
}

/** Where a block must end besides Lean's layout rule. */
export interface BlockStops {
  /** At a `|` that starts the next alternative of a `with`/`match` (the block is an arm). */
  bar: boolean;
  /** At a `,` or an ascription's `:` at the block's depth (a `by` in brackets: `⟨by simp, by omega⟩`, `(by omega : p)`). */
  comma: boolean;
}

const NO_STOPS: BlockStops = { bar: false, comma: false };
/** The four stop sets, shared (readBlock never changes them), by `bar` then `comma`. */
const STOPS: readonly (readonly BlockStops[])[] = [
  [NO_STOPS, { bar: false, comma: true }],
  [
    { bar: true, comma: false },
    { bar: true, comma: true },
  ],
];

/** The nested blocks of most steps: one shared empty list, not one allocated per step. */
const NO_BLOCKS: readonly TacticBlock[] = [];

/**
 * Whether token i may follow a whole tactic sequence on its line: it closes the term the sequence sits in
 * (`)`, `]`, `}`, `⟩`, `⦄`, `,`). Compared by code unit, not by slicing the token's text.
 */
function isCloser(ts: TokenStream, i: number): boolean {
  const start = ts.starts[i] ?? 0;
  if ((ts.ends[i] ?? 0) - start !== 1) return false;
  const c = ts.text.charCodeAt(start);
  return c === 41 || c === 93 || c === 125 || c === 0x27e9 || c === 0x2984 || c === 44;
}

/** A step [first, last]; `balanced`: its brackets balance and no line of it starts left of its column. */
function step(ts: TokenStream, first: number, last: number, balanced: boolean): TacticStep {
  return { first, last, nested: NO_BLOCKS, whole: balanced && endsInPlace(ts, last) };
}

/**
 * Whether a sequence ending at token `last` ends in its place: the file does not end inside that token (an
 * unterminated comment or string), and what follows on its line can only close an enclosing term.
 */
function endsInPlace(ts: TokenStream, last: number): boolean {
  if (ts.unterminated && last === ts.count - 1) return false;
  let next = last + 1;
  while (next < ts.count && !isCode(ts, next)) next++;
  return next >= ts.count || ts.lineFirst[next] === 1 || isCloser(ts, next);
}

/** Reads the block that starts at token `from` and may run to token `limit` (inclusive). */
export function readBlock(
  ts: TokenStream,
  from: number,
  limit: number,
  stops: BlockStops = NO_STOPS,
  budget = { depth: 0 },
): TacticBlock {
  // The token arrays, read once here: this loop runs over every token of every block.
  const { kinds, lineFirst: lineFirsts, cols, starts, ends, text } = ts;
  const column = cols[from] ?? 0;
  const { bar: barStops, comma: commaStops } = stops;
  const steps: TacticStep[] = [];
  let depth = 0;
  let stepFirst = from;
  let lastCode = from;
  // Tactic sequences opened inside the current step at this block's own column (layout.ts, rule 3).
  let inner = 0;
  // The current step takes `|` alternatives itself (`cases … with`, `match … with`, `fun |`): Lean's parser
  // gives a `|` to the innermost construct, so such a bar never ends the arm this block is.
  let takesAlternatives = false;
  // What `balanced` needs, for the current step: a line of it started left of the column, and the bracket
  // depth after its last token (every split happens at depth 0, so the block's depth is the step's).
  let leftOfColumn = false;
  let depthAtLast = 0;
  // Where nestedBlocks need start looking in each step: its first `by` or `=>` (-1: none) and the depth
  // there, in pairs per step. Most steps have neither, and then are not scanned a second time.
  const marks: number[] = [];
  let mark = -1;
  let markDepth = 0;
  let i = from;
  for (; i <= limit; i++) {
    const kind = kinds[i] ?? 0;
    if (isCommentKind(kind)) continue;
    const lineFirst = lineFirsts[i] === 1;
    const col = cols[i] ?? 0;
    if (i !== from && depth === 0) {
      // Left of the column the block ends, unless the tactic above still needs input: Lean checks the
      // column only where a tactic starts (`by constructor <;>` with the next tactic below, further left).
      // So does the next alternative of a `with` (`by induction xs with` ending a line, `| nil` below).
      if (
        lineFirst &&
        col < column &&
        !endsOpen(ts, lastCode) &&
        !(takesAlternatives && !barStops && tokenEquals(ts, i, "|"))
      )
        break;
      if (
        barStops &&
        !takesAlternatives &&
        tokenEquals(ts, i, "|") &&
        !tokenEquals(ts, stepFirst, "first") &&
        startsAlternative(ts, i, limit, column)
      )
        break;
      if (commaStops && (tokenEquals(ts, i, ",") || endsAscribed(ts, i, stepFirst))) break;
      if (lineFirst && col === column) {
        if (continuesOnly(ts, i)) {
          if (inner > 0 && endsInnerSequence(ts, i, limit)) inner--;
        } else if (endsOpen(ts, lastCode)) {
          if (opensSequence(ts, lastCode)) inner++;
        } else if (inner === 0) {
          // What follows this step is token i, starting its line (only comments lie between): it ends in place.
          steps.push({
            first: stepFirst,
            last: lastCode,
            nested: NO_BLOCKS,
            whole: !leftOfColumn && depthAtLast === 0,
          });
          marks.push(mark, markDepth);
          mark = -1;
          stepFirst = i;
          takesAlternatives = false;
          leftOfColumn = false;
        }
      }
    }
    if (kind === TokenKind.Ident) {
      // The word's length, read once, says which of `by`, `fun`, `with`, `match` it can be.
      const start = starts[i] ?? 0;
      const length = (ends[i] ?? 0) - start;
      if (length === 2) {
        if (mark < 0 && textIs(text, start, length, "by")) {
          mark = i;
          markDepth = depth;
        }
      } else if (length >= 3 && length <= 5 && depth === 0 && !takesAlternatives)
        takesAlternatives =
          length === 4
            ? textIs(text, start, length, "with")
            : length === 5
              ? textIs(text, start, length, "match")
              : textIs(text, start, length, "fun") && tokenEquals(ts, nextCode(ts, i + 1, limit), "|");
    } else if (kind === TokenKind.Symbol) {
      if (mark < 0 && tokenEquals(ts, i, "=>")) {
        mark = i;
        markDepth = depth;
      }
      const delta = bracketDelta(ts, i); // Only symbols are brackets.
      if (delta !== 0 && (depth += delta) < 0) {
        // A block cut at its very first token still holds it (`lastCode` starts there): a lone closer.
        if (i === from) depthAtLast = depth;
        break;
      }
    }
    if (i !== stepFirst && lineFirst && col < column) leftOfColumn = true;
    lastCode = i;
    depthAtLast = depth;
  }
  steps.push(step(ts, stepFirst, lastCode, !leftOfColumn && depthAtLast === 0));
  marks.push(mark, markDepth);
  // Deeply nested input (or a fuzzer's) must not exhaust the stack: past 64 levels, blocks stay whole.
  if (budget.depth < 64) {
    budget.depth++;
    for (let k = 0; k < steps.length; k++)
      steps[k]!.nested = nestedBlocks(ts, steps[k]!, marks[2 * k]!, marks[2 * k + 1]!, budget);
    budget.depth--;
  }
  return { first: from, last: lastCode, column, steps };
}

/**
 * The blocks nested in a step. `mark` is the step's first `by` or `=>` token (-1: none) and `markDepth` the
 * bracket depth there (the step's own, as the step starts at its block's depth 0): no block starts before it.
 */
function nestedBlocks(
  ts: TokenStream,
  step: TacticStep,
  mark: number,
  markDepth: number,
  budget: { depth: number },
): readonly TacticBlock[] {
  const role = HEAD_ROLES.get(ts, step.first);
  if (role === "opaque") return NO_BLOCKS;
  if (role === "bullet" || role === "sequence") {
    // `· tacs`; `classical`, `all_goals`, `try` …: the sequence after the head (and `iterate`'s count).
    let j = nextCode(ts, step.first + 1, step.last);
    if (role === "sequence" && tokenEquals(ts, step.first, "iterate") && ts.kinds[j] === TokenKind.Number)
      j = nextCode(ts, j + 1, step.last);
    return j <= step.last ? [readBlock(ts, j, step.last, NO_STOPS, budget)] : NO_BLOCKS;
  }
  if (mark < 0) return NO_BLOCKS;
  const arrows = role === "arrows";
  const kinds = ts.kinds;
  let blocks: TacticBlock[] | undefined;
  let depth = markDepth;
  for (let i = mark; i <= step.last; i++) {
    const kind = kinds[i] ?? 0;
    if (kind === TokenKind.Ident) {
      if (!tokenEquals(ts, i, "by")) continue;
    } else if (kind === TokenKind.Symbol) {
      if (!(arrows && depth === 0 && tokenEquals(ts, i, "=>"))) {
        depth += bracketDelta(ts, i);
        continue;
      }
    } else continue; // Comments, and literals (no brackets).
    // A `by`, or the `=>` of an alternative: a block follows.
    const j = nextCode(ts, i + 1, step.last);
    if (j > step.last) break;
    const stops = STOPS[kind === TokenKind.Symbol ? 1 : 0]![depth > 0 ? 1 : 0]!;
    const block = readBlock(ts, j, step.last, stops, budget);
    (blocks ??= []).push(block);
    i = block.last;
  }
  return blocks ?? NO_BLOCKS;
}
