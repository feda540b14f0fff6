/**
 * What the command parser (commands.ts) asks about many tokens, answered for a whole token stream in one
 * pass: the bracket depth before each token, which tokens come first on their line, and which begin a
 * line in Lean's sense (`startsLine`). The parser then visits only the tokens that can matter (a tactic
 * block ends at a line's first token, a command begins at column 0) instead of every token of every body,
 * which is where parsing spent its time.
 */
import { TokenKind, isCommentKind, type TokenStream } from "./tokens";

export interface TokenIndex {
  /** depthBefore[i]: the bracket depth (`bracketDelta` summed) over tokens 0 … i-1; count + 1 entries. */
  readonly depthBefore: Int32Array;
  /** Ascending indices of the tokens that come first on their line (`lineFirst`). */
  readonly lineFirsts: number[];
  /** Ascending indices of the tokens for which `startsLine` holds. */
  readonly lineStarts: number[];
}

/**
 * Whether token i begins its line, at column 0, or follows nothing on its line but comments that do
 * (`/- c -/ theorem x`: the comment is whitespace to Lean, so the keyword starts a command).
 */
export function startsLine(ts: TokenStream, i: number): boolean {
  if (ts.lineFirst[i] === 1) return ts.cols[i] === 0;
  for (let j = i - 1; j >= 0 && isCommentKind(ts.kinds[j] ?? 0); j--)
    if (ts.lineFirst[j] === 1) return ts.cols[j] === 0 && ts.kinds[j] !== TokenKind.LineComment;
  return false;
}

export function indexTokens(ts: TokenStream): TokenIndex {
  const { text, count, kinds, starts, ends, cols, lineFirst } = ts;
  const depthBefore = new Int32Array(count + 1);
  const lineFirsts: number[] = [];
  const lineStarts: number[] = [];
  let depth = 0;
  // `startsLine` of a token that is not first on its line, carried forward: what the nearest line-first
  // comment of the run of comments just before it says, false after any other token.
  let afterComments = false;
  for (let i = 0; i < count; i++) {
    depthBefore[i] = depth;
    const kind = kinds[i]!;
    const first = lineFirst[i] === 1;
    if (first) lineFirsts.push(i);
    if (first ? cols[i] === 0 : afterComments) lineStarts.push(i);
    if (kind === TokenKind.Symbol) {
      // `symbolBracketDelta` (tokens.ts), inline: ( [ { ⟨ ⦃ `@[` open; ) ] } ⟩ ⦄ close.
      const c = text.charCodeAt(starts[i]!);
      const len = ends[i]! - starts[i]!;
      if (c === 40 || c === 91 || c === 123 || c === 0x27e8 || c === 0x2983) depth += len === 1 ? 1 : 0;
      else if (c === 64 && len === 2) depth++;
      else if (c === 41 || c === 93 || c === 125 || c === 0x27e9 || c === 0x2984) depth -= len === 1 ? 1 : 0;
      afterComments = false;
    } else if (
      kind === TokenKind.LineComment ||
      kind === TokenKind.BlockComment ||
      kind === TokenKind.DocComment
    ) {
      if (first) afterComments = cols[i] === 0 && kind !== TokenKind.LineComment;
    } else afterComments = false;
  }
  depthBefore[count] = depth;
  return { depthBefore, lineFirsts, lineStarts };
}

/** The position in `sorted` (ascending) of its first element at or after `i`. */
export function firstAtOrAfter(sorted: readonly number[], i: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < i) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
