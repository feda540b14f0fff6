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

const BACKSLASH = 92;
const QUOTE = 34;
const OPEN_BRACE = 123;

/** Whether the string token [start, end) is a raw string (`r"…"`, `r#"…"#`), which is never interpolated. */
function isRaw(text: string, start: number): boolean {
  const next = text.charCodeAt(start + 1);
  return text.charCodeAt(start) === 114 && (next === QUOTE || next === 35);
}

/**
 * Where the code opened by the `{` just before `from` ends: the first `}` token at brace depth 0 that our
 * lexer finds before `limit`, or -1 when none does (the code would run past the string).
 */
function closingBrace(text: string, from: number, limit: number): number {
  const ts = lex(text.slice(from, limit));
  let depth = 0;
  for (let k = 0; k < ts.count; k++) {
    if (ts.kinds[k] !== TokenKind.Symbol) continue;
    const c = ts.text.charCodeAt(ts.starts[k] ?? 0);
    if ((ts.ends[k] ?? 0) - (ts.starts[k] ?? 0) !== 1) continue;
    if (c === OPEN_BRACE) depth++;
    else if (c === 125) {
      if (depth === 0) return from + (ts.starts[k] ?? 0);
      depth--;
    }
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
