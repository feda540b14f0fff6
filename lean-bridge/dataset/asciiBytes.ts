/**
 * Writing a row's bytes in place: short ASCII pieces and numbers byte by byte (a string, or a native call,
 * per piece cost more than the few bytes it writes), long slices with one native copy. Each returns where it
 * stopped writing.
 */

/** Below this many bytes a loop copies faster than `Buffer.copy`'s native call. */
const NATIVE_COPY_BYTES = 48;

/** `bytes[from, to)` written at `at`. */
export function putBytes(out: Buffer, at: number, bytes: Buffer, from: number, to: number): number {
  if (to - from >= NATIVE_COPY_BYTES) return at + bytes.copy(out, at, from, to);
  for (let k = from; k < to; k++) out[at++] = bytes[k]!;
  return at;
}

/** A string of one-byte characters (ASCII, or UTF-8 bytes held one per character) written at `at`. */
export function putLatin1(out: Buffer, at: number, text: string): number {
  if (text.length >= NATIVE_COPY_BYTES) return at + out.write(text, at, "latin1");
  for (let k = 0; k < text.length; k++) out[at++] = text.charCodeAt(k);
  return at;
}

/** The decimal digits of a whole number (as `String(n)` writes them) at `at`. */
export function putDecimal(out: Uint8Array, at: number, n: number): number {
  let digits = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let k = at + digits;
  for (let rest = n; k > at; rest = Math.floor(rest / 10)) out[--k] = 48 + (rest % 10);
  return at + digits;
}

const HEX_DIGITS = Uint8Array.from("0123456789abcdef", (c) => c.charCodeAt(0));

/** The 8 lower-case hex digits of a 32-bit integer (its two's complement) at `at`. */
export function putHex32(out: Uint8Array, at: number, x: number): number {
  for (let shift = 28; shift >= 0; shift -= 4) out[at++] = HEX_DIGITS[(x >>> shift) & 15]!;
  return at;
}
