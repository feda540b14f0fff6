/**
 * The lexer's symbol tables: which strings make an interpolated string of the one after them, the
 * multi-character symbols by their first character, and the ASCII characters that are a whole symbol.
 */
import { ASCII_ID_START } from "./chars";

/** Prefixes written against their string (`s!"…"`) whose string is interpolated: one token for us. */
export const ADJACENT_INTERPOLATION = new Set(["s!", "m!", "f!", "println!", "toString!"]);

/**
 * Core syntaxes whose argument is `interpolatedStr(term)` (src/Init, src/Lean: `throwError`, `dbg_trace`,
 * `m!` …), for the token stream: any other identifier before a string (`foo!"{"`) leaves it an ordinary
 * string, where `{` is a plain character (Lean reads `foo!` and then the string). Any syntax can take an
 * interpolated string after any token, so the candidate policy does not rely on this list: it reads every
 * string both ways (stringCode.ts).
 */
export const INTERPOLATING_KEYWORDS = new Set([
  ...ADJACENT_INTERPOLATION,
  "throwError",
  "throwErrorAt",
  "dbg_trace",
]);

export const MULTI_SYMBOLS = [":=", "=>", "<;>", "@[", "..", "::", "<|>", "<|", "|>", "->", "<-"];

/** Multi-character symbols by their first character, longest first. */
export const MULTI_BY_FIRST = new Map<number, string[]>();
export const ASCII_MULTI_FIRST = new Uint8Array(128);
for (const sym of [...MULTI_SYMBOLS].sort((a, b) => b.length - a.length)) {
  const first = sym.charCodeAt(0);
  MULTI_BY_FIRST.set(first, [...(MULTI_BY_FIRST.get(first) ?? []), sym]);
  if (first < 128) ASCII_MULTI_FIRST[first] = 1;
}

/**
 * ASCII characters that are a whole symbol token by themselves (`(`, `)`, `,`, `+`, …): not the first
 * character of a multi-character symbol, a comment (`--`, `/-`), a string, number or char literal, nor of a
 * name. Half of all tokens are symbols; this lets them skip the other branches.
 */
export const ASCII_PLAIN_SYMBOL = new Uint8Array(128);
for (let c = 33; c < 127; c++) {
  const special =
    ASCII_ID_START[c] === 1 || ASCII_MULTI_FIRST[c] === 1 || (c >= 48 && c <= 57) || c === 34 || c === 39;
  ASCII_PLAIN_SYMBOL[c] = special || c === 45 || c === 47 ? 0 : 1;
}
