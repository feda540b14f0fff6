/**
 * Task ids (`holeId`, split.ts) of one file's holes, hashed from the file's UTF-8 bytes: the SHA-256 input is
 * the id's short head followed by the middle's bytes, copied from the file encoded once, and the digest is
 * asked for in hex (Node's one-shot `crypto.hash` returns a hex string in half the time of a Buffer). Building
 * each id's input as a string (the middle encoded again per hole) and asking for a Buffer made the ids about
 * a third slower; what is left is mostly Node's cost per `crypto.hash` call.
 */
import * as crypto from "node:crypto";
import { holeIdHalves } from "./split";

/** Where a bound falls between the two halves of a surrogate pair: no byte offset there. */
const INSIDE_PAIR = -1;

/** `crypto.hash` (Node 20.12+) when present. */
const oneShot = (crypto as { hash?: unknown }).hash as
  ((algorithm: string, data: Uint8Array, encoding: "hex") => string) | undefined;

const sha256Hex = (data: Uint8Array): string =>
  oneShot ? oneShot("sha256", data, "hex") : crypto.createHash("sha256").update(data).digest("hex");

export class FileHoleIds {
  /** The file's text as UTF-8. */
  private readonly utf8: Buffer;
  /** `byteAt[k]`: where UTF-16 offset k starts in `utf8`; undefined when the text is ASCII (k itself). */
  private readonly byteAt: Int32Array | undefined;
  /** The hash input being built: `file\0declKey\0` (kept while the declaration lasts), then the rest. */
  private scratch = Buffer.allocUnsafe(64 * 1024);
  private declKey: string | undefined;
  /** Bytes of `file\0declKey\0` at the start of `scratch`. */
  private headBytes = 0;

  constructor(
    private readonly text: string,
    private readonly file: string,
  ) {
    this.utf8 = Buffer.from(text, "utf8");
    this.byteAt = this.utf8.length === text.length ? undefined : utf8Offsets(text);
  }

  /** `holeIdHalves(file, declKey, kind, start, end, text.slice(start, end))`. */
  halves(declKey: string, kind: string, start: number, end: number): [number, number] {
    const from = this.byteAt ? this.byteAt[start]! : start;
    const to = this.byteAt ? this.byteAt[end]! : end;
    // A bound inside a surrogate pair (never a token's): the middle alone encodes each half as U+FFFD.
    if (from === INSIDE_PAIR || to === INSIDE_PAIR)
      return holeIdHalves(this.file, declKey, kind, start, end, this.text.slice(start, end));
    if (declKey !== this.declKey) {
      const head = Buffer.from(`${this.file}\0${declKey}\0`, "utf8");
      this.fit(head.length);
      this.scratch.set(head);
      this.headBytes = head.length;
      this.declKey = declKey;
    }
    // `kind\0start:end\0`, ASCII, written byte by byte (a string and a native call cost more for a few bytes).
    this.fit(this.headBytes + kind.length + 24 + (to - from));
    const scratch = this.scratch;
    let at = this.headBytes;
    for (let k = 0; k < kind.length; k++) scratch[at++] = kind.charCodeAt(k);
    scratch[at++] = 0;
    at = putDecimal(scratch, at, start);
    scratch[at++] = 0x3a; // ":"
    at = putDecimal(scratch, at, end);
    scratch[at++] = 0;
    at += this.utf8.copy(scratch, at, from, to);
    const hex = sha256Hex(scratch.subarray(0, at));
    return [hexInt32(hex, 0), hexInt32(hex, 8)];
  }

  /** Grows `scratch` (keeping its head) to hold `bytes`. */
  private fit(bytes: number): void {
    if (bytes <= this.scratch.length) return;
    const bigger = Buffer.allocUnsafe(2 * bytes);
    bigger.set(this.scratch.subarray(0, this.headBytes));
    this.scratch = bigger;
  }
}

/** Writes the decimal digits of a whole number (as `String(n)` writes them) at `at`; returns where they end. */
function putDecimal(out: Uint8Array, at: number, n: number): number {
  let digits = 1;
  for (let rest = n; rest >= 10; rest = Math.floor(rest / 10)) digits++;
  let k = at + digits;
  for (let rest = n; k > at; rest = Math.floor(rest / 10)) out[--k] = 48 + (rest % 10);
  return at + digits;
}

/** The 8 lower-case hex digits at `from` as a signed 32-bit integer (`Buffer.readInt32BE` of their bytes). */
function hexInt32(hex: string, from: number): number {
  let n = 0;
  for (let k = from; k < from + 8; k++) {
    const c = hex.charCodeAt(k);
    n = (n << 4) | (c <= 57 ? c - 48 : c - 87);
  }
  return n;
}

/** Where each UTF-16 offset of `text` starts in its UTF-8 encoding (as `Buffer.from(text, "utf8")` writes it). */
function utf8Offsets(text: string): Int32Array {
  const n = text.length;
  const at = new Int32Array(n + 1);
  let b = 0;
  for (let k = 0; k < n; k++) {
    at[k] = b;
    const c = text.charCodeAt(k);
    if (c < 0x80) b += 1;
    else if (c < 0x800) b += 2;
    else if (c >= 0xd800 && c <= 0xdbff && k + 1 < n && (text.charCodeAt(k + 1) & 0xfc00) === 0xdc00) {
      at[++k] = INSIDE_PAIR;
      b += 4;
    } else b += 3; // Other BMP characters, and lone surrogates (written as U+FFFD).
  }
  at[n] = b;
  return at;
}
