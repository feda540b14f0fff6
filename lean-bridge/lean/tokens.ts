/**
 * Tokens as the lexer (lexer.ts) hands them out: parallel typed arrays over the text (one allocation per file,
 * not per token), and the small questions every reader of a token stream asks: its text, whether it is a
 * comment, how it changes the bracket depth.
 */

export const enum TokenKind {
  Ident = 0,
  Number = 1,
  String = 2,
  Char = 3,
  LineComment = 4,
  BlockComment = 5,
  /** `/-- … -/` and `/-! … -/`. */
  DocComment = 6,
  Symbol = 7,
}

export interface TokenStream {
  readonly text: string;
  readonly count: number;
  readonly kinds: Uint8Array;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  /** UTF-16 column of the token's first character. */
  readonly cols: Int32Array;
  /** 0-based line of the token's first character. */
  readonly lines: Int32Array;
  /** 1 when the token is the first non-blank thing on its line. */
  readonly lineFirst: Uint8Array;
  /** True when the text ends inside a comment or string: a sign that the text is cut mid-token. */
  readonly unterminated: boolean;
}

export function tokenText(ts: TokenStream, i: number): string {
  return ts.text.slice(ts.starts[i], ts.ends[i]);
}

/** Whether token i's text is `word`, without allocating a string. */
export function tokenIs(ts: TokenStream, i: number, word: string): boolean {
  const start = ts.starts[i] ?? 0;
  return (ts.ends[i] ?? 0) - start === word.length && ts.text.startsWith(word, start);
}

export function isCommentKind(kind: number): boolean {
  return kind === TokenKind.LineComment || kind === TokenKind.BlockComment || kind === TokenKind.DocComment;
}

/** Bracket depth change of token i: ( [ { ⟨ ⦃ `@[` open; ) ] } ⟩ ⦄ close. */
export function bracketDelta(ts: TokenStream, i: number): number {
  return ts.kinds[i] !== TokenKind.Symbol
    ? 0
    : symbolBracketDelta(ts.text, ts.starts[i] ?? 0, ts.ends[i] ?? 0);
}

/** The bracket depth change of a symbol token: ( [ { ⟨ ⦃ `@[` open; ) ] } ⟩ ⦄ close. */
function symbolBracketDelta(text: string, start: number, end: number): number {
  const c = text.charCodeAt(start);
  const len = end - start;
  if (c === 40 || c === 91 || c === 123 || c === 0x27e8 || c === 0x2983) return len === 1 ? 1 : 0;
  if (c === 64 && len === 2) return 1; // `@[`
  if (c === 41 || c === 93 || c === 125 || c === 0x27e9 || c === 0x2984) return len === 1 ? -1 : 0;
  return 0;
}
