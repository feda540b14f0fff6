/**
 * The code Lean may read inside a string literal. Any syntax can take `interpolatedStr(term)` after any token
 * (core's `trace[cls] "…{e}…"`, `throwErrorAt stx "…{e}…"`, `m!`, `s!`, or a library's own macro), and then the
 * text between a `{` and its `}` is a term (src/Lean/Parser/Basic.lean, `interpolatedStrFn`). Which syntax
 * stands before a string depends on the environment, so a reader that must not miss code takes every `{` of
 * every string for the start of code, and reads the string both ways:
 *
 * - as a plain literal (`strLitFnAux`): a `\` escapes what follows, and the first other `"` ends it;
 * - as an interpolated one: the same, except that a `{` opens code, read by Lean's tokenizer up to the `}`
 *   that closes it (strings, char literals and comments inside are tokens of that code).
 *
 * Where both readings end the string at the same quote, they differ only inside it, in the code of its
 * braces, which the caller can then check as code. Where they end it in different places (a quote inside the
 * braces, a `{` whose code runs past the string), the text after the string is read differently too, and the
 * string is unreadable: a caller that must not guess refuses it.
 */
import { lex } from "./lexer";
import { TokenKind } from "./tokens";

/** A stretch of code between a string's `{` and its `}` (both excluded), as offsets into the text. */
export interface CodeRegion {
  start: number;
  end: number;
}

export type StringCode =
  { kind: "regions"; regions: CodeRegion[] } | { kind: "unreadable"; at: number; reason: string };

/**
 * The most `{…}` one string may hold. Each is read by lexing the rest of the string, so the cost of a
 * string grows with their number times its length; proofs never need many.
 */
export const MAX_CODE_REGIONS = 32;

const BACKSLASH = 92;
const QUOTE = 34;
const OPEN_BRACE = 123;
const CLOSE_BRACE = 125;

/** Whether the string token [start, end) is a raw string (`r"…"`, `r#"…"#`), which is never interpolated. */
function isRaw(text: string, start: number): boolean {
  const next = text.charCodeAt(start + 1);
  return text.charCodeAt(start) === 114 && (next === QUOTE || next === 35);
}

/**
 * The first `}` token at brace depth 0 in the lexing of text[from, limit), or -1 when there is none (the code
 * would run past the string).
 */
function closingBraceIn(text: string, from: number, limit: number): number {
  const ts = lex(text.slice(from, limit));
  let depth = 0;
  for (let k = 0; k < ts.count; k++) {
    if (ts.kinds[k] !== TokenKind.Symbol || (ts.ends[k] ?? 0) - (ts.starts[k] ?? 0) !== 1) continue;
    const c = ts.text.charCodeAt(ts.starts[k] ?? 0);
    if (c === OPEN_BRACE) depth++;
    else if (c === CLOSE_BRACE) {
      if (depth === 0) return from + (ts.starts[k] ?? 0);
      depth--;
    }
  }
  return -1;
}

/**
 * Characters past a `}` that decide the token around it: a char literal `'}'` needs the quote after it (no
 * other token of Lean's holds a `}` and needs to see past it); a few more for good measure.
 */
const LOOKAHEAD = 8;

/** Tries at the next `}` characters before lexing the whole rest of the string. */
const SHORT_TRIES = 8;

/**
 * Where the code opened by the `{` just before `from` ends: the first `}` token at brace depth 0 that our
 * lexer finds before `limit`, or -1. Lexing up to each `}` character in turn (with a little lookahead) finds
 * it in the same place as lexing the whole rest, and costs the length of the code instead of the string's.
 */
function closingBrace(text: string, from: number, limit: number): number {
  let tries = 0;
  for (let p = text.indexOf("}", from); p !== -1 && p < limit; p = text.indexOf("}", p + 1)) {
    if (++tries > SHORT_TRIES) return closingBraceIn(text, from, limit);
    const found = closingBraceIn(text, from, Math.min(limit, p + 1 + LOOKAHEAD));
    if (found === p) return p;
    if (found !== -1 && found < p) return found;
  }
  return -1;
}

/**
 * The code regions of the string token [start, end) of `text` under the interpolated reading, provided both
 * readings end the string where the token ends; `unreadable` otherwise. A raw string has none.
 */
export function stringCode(text: string, start: number, end: number): StringCode {
  if (isRaw(text, start)) return { kind: "regions", regions: [] };
  const quote = text.indexOf('"', start);
  if (quote === -1 || quote >= end) return { kind: "unreadable", at: start, reason: "no opening quote" };
  // The plain reading: escapes skipped, the first other quote closes.
  let close = quote + 1;
  while (close < end) {
    const c = text.charCodeAt(close);
    if (c === BACKSLASH) close += 2;
    else if (c === QUOTE) break;
    else close++;
  }
  if (close !== end - 1)
    return {
      kind: "unreadable",
      at: Math.min(close, end - 1),
      reason:
        "a quotation mark inside its braces: read as a plain string it ends there, read as an interpolated one it does not",
    };
  const regions: CodeRegion[] = [];
  let j = quote + 1;
  while (j < close) {
    const c = text.charCodeAt(j);
    if (c === BACKSLASH) j += 2;
    else if (c === OPEN_BRACE) {
      if (regions.length === MAX_CODE_REGIONS)
        return { kind: "unreadable", at: j, reason: `more than ${MAX_CODE_REGIONS} \`{…}\` in one string` };
      const brace = closingBrace(text, j + 1, close);
      if (brace === -1)
        return {
          kind: "unreadable",
          at: j,
          reason:
            "a `{` whose code does not end inside the string (no `}` closes it before the closing quote)",
        };
      regions.push({ start: j + 1, end: brace });
      j = brace + 1;
    } else j++;
  }
  return { kind: "regions", regions };
}
