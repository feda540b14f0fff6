/**
 * What the command parser (commands.ts) asks about many tokens, answered for a whole token stream in one
 * pass: the bracket depth before each token, which tokens come first on their line, and which start a
 * line (where commands begin). The parser then visits only the tokens that can matter (a tactic
 * block ends at a line's first token, a command begins at column 0) instead of every token of every body,
 * which is where parsing spent its time.
 */
import { TokenKind, isCommentKind, type TokenStream } from "./tokens";

export interface TokenIndex {
  /** depthBefore[i]: the bracket depth (`bracketDelta` summed) over tokens 0 … i-1; count + 1 entries. */
  readonly depthBefore: Int32Array;
  /** Ascending indices of the tokens that come first on their line (`lineFirst`). */
  readonly lineFirsts: number[];
  /**
   * Ascending indices of the tokens that start a line: first on their line at column 0, or following
   * nothing on their line but comments that do (`/- c -/ theorem x`: the comment is whitespace to Lean, so
   * the keyword starts a command; a line comment runs to the end of its line, so it never does).
   */
  readonly lineStarts: number[];
  /**
   * Ascending indices of the tokens that can end a declaration's statement (where they stand at its
   * bracket depth): `:=`, `|` first on its line (equations), `where`.
   */
  readonly statementEnds: number[];
}

/**
 * The bracket depth change of a token by its first character, with no look at its kind: only a symbol can
 * begin with a bracket or `@` (names, numbers, strings, chars and comments begin otherwise), and bracket
 * symbols are one character long. `@` is counted apart: only `@[` opens.
 */
const ASCII_BRACKET_DELTA = new Int8Array(128);
ASCII_BRACKET_DELTA[40] = ASCII_BRACKET_DELTA[91] = ASCII_BRACKET_DELTA[123] = 1; // ( [ {
ASCII_BRACKET_DELTA[41] = ASCII_BRACKET_DELTA[93] = ASCII_BRACKET_DELTA[125] = -1; // ) ] }

export function indexTokens(ts: TokenStream): TokenIndex {
  const { text, count, kinds, starts, ends, cols, lineFirst } = ts;
  const depthBefore = new Int32Array(count + 1);
  const lineFirsts: number[] = [];
  const lineStarts: number[] = [];
  const statementEnds: number[] = [];
  let depth = 0;
  // `startsLine` of a token that is not first on its line, carried forward: what the nearest line-first
  // comment of the run of comments just before it says, false after any other token.
  let afterComments = false;
  // Few branches per token, and those rarely taken: this loop visits every token of every file.
  for (let i = 0; i < count; i++) {
    depthBefore[i] = depth;
    const start = starts[i]!;
    const c = text.charCodeAt(start);
    if (c < 128) {
      depth += ASCII_BRACKET_DELTA[c]!;
      if (c === 64 && ends[i]! - start === 2)
        depth++; // `@[`
      else if (c === 58 || c === 124 || c === 119) {
        const len = ends[i]! - start;
        const ends_ =
          c === 58
            ? len === 2 && text.charCodeAt(start + 1) === 61 // `:=`
            : c === 124
              ? len === 1 && lineFirst[i] === 1 // `|`
              : len === 5 && kinds[i] === TokenKind.Ident && text.startsWith("where", start);
        if (ends_) statementEnds.push(i);
      }
    } else if (c === 0x27e8 || c === 0x2983)
      depth++; // ⟨ ⦃
    else if (c === 0x27e9 || c === 0x2984) depth--; // ⟩ ⦄
    if (lineFirst[i] === 1) {
      lineFirsts.push(i);
      if (cols[i] === 0) lineStarts.push(i);
    } else if (afterComments) lineStarts.push(i);
    const kind = kinds[i]!;
    if (isCommentKind(kind)) {
      if (lineFirst[i] === 1) afterComments = cols[i] === 0 && kind !== TokenKind.LineComment;
    } else afterComments = false;
  }
  depthBefore[count] = depth;
  return { depthBefore, lineFirsts, lineStarts, statementEnds };
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
