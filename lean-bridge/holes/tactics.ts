/**
 * The structure of a tactic block, read with Lean's layout rule: a block's steps all start at the column
 * of its first tactic; a line starting further right continues the step above; a line starting further
 * left (or a closing bracket) ends the block. Inside a step, nested blocks open after a `·` bullet, after
 * `by` (a `have`'s proof, a `calc` step's proof), and after `=>` of `case`, `next` and the alternatives of
 * `induction`/`cases`/`match`.
 */
import { TokenKind, bracketDelta, isCommentKind, tokenIs, tokenText, type TokenStream } from "../lean/lexer";

export interface TacticStep {
  /** Token indices of the step's first and last code tokens. */
  first: number;
  last: number;
  nested: TacticBlock[];
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
/** Tokens that cannot begin a tactic: at the block's column they continue the step above (`cases … with` alternatives, `else`). */
const CONTINUATIONS = new Set([
  "|",
  "else",
  "then",
  "<;>",
  "with",
  "at",
  "using",
  "from",
  ":=",
  "=>",
  "_",
  ")",
  "]",
  "}",
  "⟩",
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
 * Reads the block that starts at token `from` and may run to token `limit` (inclusive). With `stopAtBar`
 * the block also ends at a `|` at its own bracket depth (the next alternative of a `with`).
 */
export function readBlock(
  ts: TokenStream,
  from: number,
  limit: number,
  stopAtBar = false,
  budget = { depth: 0 },
): TacticBlock {
  const column = ts.cols[from] ?? 0;
  const steps: TacticStep[] = [];
  let depth = 0;
  let stepFirst = from;
  let lastCode = from;
  let i = from;
  for (; i <= limit; i++) {
    if (!isCode(ts, i)) continue;
    if (i !== from) {
      const lineFirst = ts.lineFirst[i] === 1;
      const col = ts.cols[i] ?? 0;
      if (depth === 0 && lineFirst && col < column) break;
      if (depth === 0 && stopAtBar && tokenIs(ts, i, "|") && !tokenIs(ts, stepFirst, "first")) break;
      if (depth === 0 && lineFirst && col === column && !CONTINUATIONS.has(tokenText(ts, i))) {
        steps.push({ first: stepFirst, last: lastCode, nested: [] });
        stepFirst = i;
      }
    }
    depth += bracketDelta(ts, i);
    if (depth < 0) break;
    lastCode = i;
  }
  steps.push({ first: stepFirst, last: lastCode, nested: [] });
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
    if (j <= step.last) blocks.push(readBlock(ts, j, step.last, false, budget));
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
      const block = readBlock(ts, j, step.last, isArrow, budget);
      blocks.push(block);
      i = block.last;
      continue;
    }
    depth += bracketDelta(ts, i);
  }
  return blocks;
}
