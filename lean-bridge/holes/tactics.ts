/**
 * The structure of a tactic block, read with Lean's layout rule (layout.ts): a block's steps all start at
 * the column of its first tactic; a line starting further right continues the step above, and so does a
 * line at the block's column that Lean's grammar reads as a continuation; a line starting further left (or
 * a closing bracket) ends the block. Inside a step, nested blocks open after a `·` bullet, after `by` (a
 * `have`'s proof, a `calc` step's proof), after `=>` of `case`, `next` and the alternatives of
 * `induction`/`cases`/`match`, and after combinators that take a tactic sequence (`classical`, `all_goals` …).
 */
import { TokenKind, bracketDelta, isCommentKind, tokenIs, tokenText, type TokenStream } from "../lean/tokens";
import { SEQUENCE_HEADS, continuesOnly, endsInnerSequence, endsOpen, opensSequence } from "./layout";

export interface TacticStep {
  /** Token indices of the step's first and last code tokens. */
  first: number;
  last: number;
  nested: TacticBlock[];
  /**
   * Whether the step's own tokens are a whole sequence at its column: its brackets balance (never closing
   * more than they opened) and no line of it starts left of its column. Read off while reading the block,
   * so that the miner need not scan each step again (mine.ts adds what may follow the step).
   */
  balanced: boolean;
}

export interface TacticBlock {
  first: number;
  last: number;
  column: number;
  steps: TacticStep[];
}

/** Steps whose `=>` opens tactic blocks (not a `fun x => term`). */
const ARROW_HEADS = new Set([
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
]);
/** Steps whose nested syntax is not ordinary tactics (conversions), left whole. */
const OPAQUE_HEADS = new Set(["conv", "conv_lhs", "conv_rhs"]);

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
    if (depth === 0 && tokenIs(ts, j, "|")) return false;
    if (depth === 0 && tokenIs(ts, j, "=>")) return true;
    depth += bracketDelta(ts, j);
    if (depth < 0) return false;
  }
  return false;
}

/** Steps whose own syntax has a `:` (`have h : P`, `show P`): in them a `:` does not end a `by` in brackets. */
const TYPED_HEADS = new Set([
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
  return tokenIs(ts, i, ":") && !TYPED_HEADS.has(tokenText(ts, stepFirst));
}

/** Where a block must end besides Lean's layout rule. */
export interface BlockStops {
  /** At a `|` that starts the next alternative of a `with`/`match` (the block is an arm). */
  bar: boolean;
  /** At a `,` or an ascription's `:` at the block's depth (a `by` in brackets: `⟨by simp, by omega⟩`, `(by omega : p)`). */
  comma: boolean;
}

const NO_STOPS: BlockStops = { bar: false, comma: false };

/** Reads the block that starts at token `from` and may run to token `limit` (inclusive). */
export function readBlock(
  ts: TokenStream,
  from: number,
  limit: number,
  stops: BlockStops = NO_STOPS,
  budget = { depth: 0 },
): TacticBlock {
  const column = ts.cols[from] ?? 0;
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
  let i = from;
  for (; i <= limit; i++) {
    if (!isCode(ts, i)) continue;
    if (i !== from) {
      const lineFirst = ts.lineFirst[i] === 1;
      const col = ts.cols[i] ?? 0;
      // Left of the column the block ends, unless the tactic above still needs input: Lean checks the
      // column only where a tactic starts (`by constructor <;>` with the next tactic below, further left).
      // So does the next alternative of a `with` (`by induction xs with` ending a line, `| nil` below).
      if (
        depth === 0 &&
        lineFirst &&
        col < column &&
        !endsOpen(ts, lastCode) &&
        !(takesAlternatives && !stops.bar && tokenIs(ts, i, "|"))
      )
        break;
      if (
        depth === 0 &&
        stops.bar &&
        !takesAlternatives &&
        tokenIs(ts, i, "|") &&
        !tokenIs(ts, stepFirst, "first") &&
        startsAlternative(ts, i, limit, column)
      )
        break;
      if (depth === 0 && stops.comma && (tokenIs(ts, i, ",") || endsAscribed(ts, i, stepFirst))) break;
      if (depth === 0 && lineFirst && col === column) {
        if (continuesOnly(ts, i)) {
          if (inner > 0 && endsInnerSequence(ts, i, limit)) inner--;
        } else if (endsOpen(ts, lastCode)) {
          if (opensSequence(ts, lastCode)) inner++;
        } else if (inner === 0) {
          steps.push({
            first: stepFirst,
            last: lastCode,
            nested: [],
            balanced: !leftOfColumn && depthAtLast === 0,
          });
          stepFirst = i;
          takesAlternatives = false;
          leftOfColumn = false;
        }
      }
    }
    if (depth === 0 && !takesAlternatives && ts.kinds[i] === TokenKind.Ident)
      takesAlternatives =
        tokenIs(ts, i, "with") ||
        tokenIs(ts, i, "match") ||
        (tokenIs(ts, i, "fun") && tokenIs(ts, nextCode(ts, i + 1, limit), "|"));
    depth += bracketDelta(ts, i);
    if (depth < 0) {
      // A block cut at its very first token still holds it (`lastCode` starts there): a lone closer.
      if (i === from) depthAtLast = depth;
      break;
    }
    if (i !== stepFirst && ts.lineFirst[i] === 1 && (ts.cols[i] ?? 0) < column) leftOfColumn = true;
    lastCode = i;
    depthAtLast = depth;
  }
  steps.push({ first: stepFirst, last: lastCode, nested: [], balanced: !leftOfColumn && depthAtLast === 0 });
  // Deeply nested input (or a fuzzer's) must not exhaust the stack: past 64 levels, blocks stay whole.
  if (budget.depth < 64) {
    budget.depth++;
    for (const step of steps) step.nested = nestedBlocks(ts, step, budget);
    budget.depth--;
  }
  return { first: from, last: lastCode, column, steps };
}

function nestedBlocks(ts: TokenStream, step: TacticStep, budget: { depth: number }): TacticBlock[] {
  const head = tokenText(ts, step.first);
  if (OPAQUE_HEADS.has(head)) return [];
  const blocks: TacticBlock[] = [];
  let i = step.first;
  if (head === "·" || head === ".") {
    const j = nextCode(ts, step.first + 1, step.last);
    if (j <= step.last) blocks.push(readBlock(ts, j, step.last, NO_STOPS, budget));
    return blocks;
  }
  if (SEQUENCE_HEADS.has(head)) {
    // `classical`, `all_goals`, `try` …: the sequence after the keyword (and `iterate`'s count).
    let j = nextCode(ts, step.first + 1, step.last);
    if (head === "iterate" && ts.kinds[j] === TokenKind.Number) j = nextCode(ts, j + 1, step.last);
    if (j <= step.last) blocks.push(readBlock(ts, j, step.last, NO_STOPS, budget));
    return blocks;
  }
  const arrows = ARROW_HEADS.has(head);
  let depth = 0;
  for (; i <= step.last; i++) {
    if (!isCode(ts, i)) continue;
    const kind = ts.kinds[i];
    const isBy = kind === TokenKind.Ident && tokenIs(ts, i, "by");
    const isArrow = !isBy && arrows && depth === 0 && kind === TokenKind.Symbol && tokenIs(ts, i, "=>");
    if (isBy || isArrow) {
      const j = nextCode(ts, i + 1, step.last);
      if (j > step.last) break;
      const block = readBlock(ts, j, step.last, { bar: isArrow, comma: depth > 0 }, budget);
      blocks.push(block);
      i = block.last;
      continue;
    }
    depth += bracketDelta(ts, i);
  }
  return blocks;
}
