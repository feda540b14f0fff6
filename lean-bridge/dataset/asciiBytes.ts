/**
 * ASCII written byte by byte into a buffer, for rows laid out in place (taskRows.ts) and hash inputs
 * (holeIds.ts): for a few bytes, a loop costs less than a string and a native call.
 */

/**
 * Writes the decimal digits of a whole number below 2^31 (as `String(n)` writes them) at `at`; returns where
 * they end. Integer division by a constant (`/ 10 | 0`): V8 makes it a multiplication, where `Math.floor`
 * of a float division costs a division per digit.
 */
export function putDecimal(out: Uint8Array, at: number, n: number): number {
  if (n < 10) {
    out[at] = 48 + n;
    return at + 1;
  }
  let digits = 2;
  for (let rest = (n / 100) | 0; rest > 0; rest = (rest / 10) | 0) digits++;
  let k = at + digits;
  let rest = n | 0;
  while (k > at) {
    const q = (rest / 10) | 0;
    out[--k] = 48 + (rest - q * 10);
    rest = q;
  }
  return at + digits;
}

const HEX_DIGITS = Uint8Array.from("0123456789abcdef", (c) => c.charCodeAt(0));

/** Writes the 8 lower-case hex digits of a 32-bit integer (its two's complement bits) at `at`. */
export function putHex32(out: Uint8Array, at: number, x: number): number {
  for (let shift = 28; shift >= 0; shift -= 4) out[at++] = HEX_DIGITS[(x >>> shift) & 15]!;
  return at;
}

/** Writes `bytes` at `at`; returns where they end. */
export function putBytes(out: Uint8Array, at: number, bytes: Uint8Array): number {
  for (let k = 0; k < bytes.length; k++) out[at++] = bytes[k]!;
  return at;
}

/** Bytes of a one-byte string (ASCII text, or UTF-8 held one character per byte), as a plain Uint8Array. */
export function ascii(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length);
  for (let k = 0; k < text.length; k++) bytes[k] = text.charCodeAt(k);
  return bytes;
}
