/**
 * The ends of Lean's number and char literals (src/Lean/Parser/Basic.lean: `numberFnAux`,
 * `quotedCharCoreFn`), for the lexer (lexer.ts).
 */
import { isDigit, isHexDigit, codePointAt, width } from "./chars";

/**
 * Lean's `numberFnAux`: `0x`/`0b`/`0o` literals take only digits of their base; decimals take digits, an
 * optional `.digits` and an optional exponent. A letter after the digits is a new token (`2sorry` is
 * `2` then `sorry` to Lean, so it must be to us).
 */
export function skipNumber(text: string, i: number): number {
  const c0 = text.charCodeAt(i);
  const c1 = text.charCodeAt(i + 1) | 0x20; // Lower case.
  if (c0 === 48 && (c1 === 120 || c1 === 98 || c1 === 111)) {
    const isBaseDigit =
      c1 === 120
        ? (c: number) => isDigit(c) || ((c | 0x20) >= 97 && (c | 0x20) <= 102)
        : c1 === 98
          ? (c: number) => c === 48 || c === 49
          : (c: number) => c >= 48 && c <= 55;
    let j = i + 2;
    while (isBaseDigit(text.charCodeAt(j))) j++;
    return j === i + 2 ? i + 1 : j; // `0x` without digits: Lean reads `0` (then fails on `x`).
  }
  let j = i + 1;
  while (isDigit(text.charCodeAt(j))) j++;
  if (text.charCodeAt(j) === 46 && isDigit(text.charCodeAt(j + 1))) {
    j += 2;
    while (isDigit(text.charCodeAt(j))) j++;
  }
  if ((text.charCodeAt(j) | 0x20) === 101) {
    let k = j + 1;
    if (text.charCodeAt(k) === 43 || text.charCodeAt(k) === 45) k++;
    if (isDigit(text.charCodeAt(k))) {
      j = k;
      while (isDigit(text.charCodeAt(j))) j++;
    }
  }
  return j;
}

/** The end of a char literal starting at i, or 0 when the quote is not one (e.g. a lone `'`). */
export function charLiteralEnd(text: string, i: number): number {
  if (text.charCodeAt(i + 1) === 92) {
    // Lean's `quotedCharCoreFn`: \\ \" \' \n \t \r, \xHH or \uHHHH; anything else is an error in Lean.
    const e = text.charCodeAt(i + 2);
    const hex = (from: number, count: number) => {
      for (let k = from; k < from + count; k++) if (!isHexDigit(text.charCodeAt(k))) return -1;
      return from + count;
    };
    let after = -1;
    if (e === 92 || e === 34 || e === 39 || e === 110 || e === 116 || e === 114) after = i + 3;
    else if (e === 120) after = hex(i + 3, 2);
    else if (e === 117) after = hex(i + 3, 4);
    return after > 0 && text.charCodeAt(after) === 39 ? after + 1 : 0;
  }
  const cp = codePointAt(text, i + 1);
  if (cp === 0 || cp === 10 || cp === 39) return 0;
  const after = i + 1 + width(cp);
  return text.charCodeAt(after) === 39 ? after + 1 : 0;
}
