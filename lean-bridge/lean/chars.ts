/**
 * Lean's character classes (src/Init/Meta.lean: `isLetterLike`, `isSubScriptAlnum`, `isIdFirst`, `isIdRest`),
 * on code points, with lookup tables for ASCII because the lexer asks for every character of every file.
 */

// Lean's `isLetterLike` (src/Init/Meta.lean), extended with the ASCII letters.
export function isLetterLike(c: number): boolean {
  return (
    (c >= 0x3b1 && c <= 0x3c9 && c !== 0x3bb) || // Greek lower case, without λ
    (c >= 0x391 && c <= 0x3a9 && c !== 0x3a0 && c !== 0x3a3) || // Greek upper case, without Π Σ
    (c >= 0x3ca && c <= 0x3fb) || // Coptic
    (c >= 0x1f00 && c <= 0x1ffe) || // Polytonic Greek
    (c >= 0x2100 && c <= 0x214f) || // Letter-like block
    (c >= 0x1d49c && c <= 0x1d59f) // Script, double-struck and Fraktur letters
  );
}

// Lean's `isSubScriptAlnum`: numeric subscripts ₀…₉ (not ₊₋₌), subscript letters.
export function isSubscriptAlnum(c: number): boolean {
  return (c >= 0x2080 && c <= 0x2089) || (c >= 0x2090 && c <= 0x209c) || (c >= 0x1d62 && c <= 0x1d6a);
}

export function isAsciiLetter(c: number): boolean {
  return (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
}

export function isDigit(c: number): boolean {
  return c >= 48 && c <= 57;
}

export function isHexDigit(c: number): boolean {
  return isDigit(c) || ((c | 0x20) >= 97 && (c | 0x20) <= 102);
}

export function isIdStart(c: number): boolean {
  return isAsciiLetter(c) || c === 95 || isLetterLike(c);
}

export function isIdRest(c: number): boolean {
  return isIdStart(c) || isDigit(c) || c === 39 || c === 33 || c === 63 || isSubscriptAlnum(c);
}

export const ASCII_ID_REST = new Uint8Array(128);
export const ASCII_ID_START = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  ASCII_ID_REST[c] = isIdRest(c) ? 1 : 0;
  ASCII_ID_START[c] = isIdStart(c) ? 1 : 0;
}

export function codePointAt(text: string, i: number): number {
  return text.codePointAt(i) ?? 0;
}

export function width(c: number): number {
  return c > 0xffff ? 2 : 1;
}
