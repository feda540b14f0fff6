/**
 * When two pieces of Lean are the same code: the same token texts in the same order, comments left out, so
 * layout and comments do not count but `a b` and `ab` stay different. One rule for every "same" the project
 * asks: two holes with the same middle (the export's held-out and novel splits), the same proof (the
 * simulator's judge, the reference proofs it knows), the same header or statement (the importer's keys).
 */
import { lex } from "./lexer";
import { isCommentKind, type TokenStream } from "./tokens";

/** The index of the first token starting at or after `offset` (binary search over the token starts). */
export function firstTokenAt(ts: TokenStream, offset: number): number {
  let lo = 0;
  let hi = ts.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ts.starts[mid]! < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The texts of the tokens lying wholly inside `start..end` of `ts`, comments left out. */
export function codeTokensOf(ts: TokenStream, start = 0, end = ts.text.length): string[] {
  const parts: string[] = [];
  for (let i = firstTokenAt(ts, start); i < ts.count && ts.ends[i]! <= end; i++)
    if (!isCommentKind(ts.kinds[i]!)) parts.push(ts.text.slice(ts.starts[i], ts.ends[i]));
  return parts;
}

/** The token texts of `text` as Lean reads it, comments left out. */
export function codeTokens(text: string): string[] {
  return codeTokensOf(lex(text));
}

/**
 * A middle as Lean reads it, for telling whether two holes ask for the same text: its code tokens one space
 * apart.
 */
export function normalisedMiddle(ts: TokenStream, start: number, end: number): string {
  return codeTokensOf(ts, start, end).join(" ");
}

/** `text` reduced to its code tokens one space apart: equal for two texts exactly when they are the same code. */
export function normalisedCode(text: string): string {
  return codeTokens(text).join(" ");
}
