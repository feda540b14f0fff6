/**
 * Task ids (`holeId`, split.ts) of one file's holes, hashed from the file's UTF-8 bytes: the SHA-256 input is
 * the id's short head followed by the middle's bytes, copied from the file encoded once, and the digest is
 * asked for in hex (Node's one-shot `crypto.hash` returns a hex string in half the time of a Buffer). Building
 * each id's input as a string (the middle encoded again per hole) and asking for a Buffer made the ids about
 * a third slower; a `Buffer.copy` and a `subarray` per hole (each makes a view object) another third. What is
 * left is mostly Node's cost per `crypto.hash` call (about 0.9 µs).
 */
import * as crypto from "node:crypto";
import { putDecimal } from "./asciiBytes";
import { holeIdHalves } from "./split";

/** Where a bound falls between the two halves of a surrogate pair: no byte offset there. */
const INSIDE_PAIR = -1;

/** `crypto.hash` (Node 20.12+) when present. */
const oneShot = (crypto as { hash?: unknown }).hash as
  ((algorithm: string, data: Uint8Array, encoding: "hex") => string) | undefined;

const sha256Hex = (data: Uint8Array): string =>
  oneShot ? oneShot("sha256", data, "hex") : crypto.createHash("sha256").update(data).digest("hex");

/**
 * Bytes kept after the text for the hash input; grown (with the text copied) for a longer one. Small: a
 * buffer is made per file, and most middles are a few hundred bytes.
 */
const SCRATCH_BYTES = 4 * 1024;

export class FileHoleIds {
  /**
   * The file's text as UTF-8 at [0, textBytes), then the hash input being built at [textBytes, …): one
   * buffer, so that a middle's bytes move into the input with `copyWithin` (a memmove, where `Buffer.copy`
   * between two buffers makes a view object per call).
   */
  private bytes: Buffer;
  private readonly textBytes: number;
  /** `byteAt[k]`: where UTF-16 offset k starts in the UTF-8; undefined when the text is ASCII (k itself). */
  private readonly byteAt: Int32Array | undefined;
  /** `inputs[n]`: a view of the first n bytes of the hash input, made once per length (not per hole). */
  private inputs: Uint8Array[] = [];
  private declKey: string | undefined;
  /** Bytes of `file\0declKey\0` at the start of the input (kept while the declaration lasts). */
  private headBytes = 0;
  private readonly pair = new Int32Array(2);

  /**
   * `measured`: the text's UTF-8 offsets when already at hand (a `JsonText`), else computed here; `utf8`: the
   * text's UTF-8 when at hand (the file's own bytes), else encoded here; `reuse`: a buffer holder shared by
   * ids made one file after another (each valid until the next is made with it), so that a large export
   * does not take fresh memory for every file.
   */
  constructor(
    private readonly text: string,
    private readonly file: string,
    measured?: { utf8At: Int32Array | undefined },
    utf8?: Uint8Array,
    reuse?: { buffer: Buffer },
  ) {
    this.textBytes = utf8 ? utf8.length : Buffer.byteLength(text, "utf8");
    // A Buffer, as the rows' writer's: `putDecimal` then always writes into one kind of array.
    const needed = this.textBytes + SCRATCH_BYTES;
    if (reuse && reuse.buffer.length >= needed) this.bytes = reuse.buffer;
    else {
      this.bytes = Buffer.allocUnsafeSlow(
        reuse ? Math.max(needed, Math.ceil(reuse.buffer.length * 1.5)) : needed,
      );
      if (reuse) reuse.buffer = this.bytes;
    }
    if (utf8) this.bytes.set(utf8, 0);
    else this.bytes.write(text, 0, "utf8");
    this.byteAt = this.textBytes === text.length ? undefined : measured ? measured.utf8At : utf8Offsets(text);
  }

  /** `holeIdHalves(file, declKey, kind, start, end, text.slice(start, end))`. */
  halves(declKey: string, kind: string, start: number, end: number): [number, number] {
    this.halvesInto(this.pair, 0, declKey, kind, start, end);
    return [this.pair[0]!, this.pair[1]!];
  }

  /** `halves(…)` written to `out[at]` and `out[at + 1]` (a task's sketch), with no array made per hole. */
  halvesInto(out: Int32Array, at: number, declKey: string, kind: string, start: number, end: number): void {
    const from = this.byteAt ? this.byteAt[start]! : start;
    const to = this.byteAt ? this.byteAt[end]! : end;
    // A bound inside a surrogate pair (never a token's): the middle alone encodes each half as U+FFFD.
    if (from === INSIDE_PAIR || to === INSIDE_PAIR) {
      const [high, low] = holeIdHalves(this.file, declKey, kind, start, end, this.text.slice(start, end));
      out[at] = high;
      out[at + 1] = low;
      return;
    }
    const input = this.textBytes;
    if (declKey !== this.declKey) {
      const head = Buffer.from(`${this.file}\0${declKey}\0`, "utf8");
      this.fit(head.length);
      this.bytes.set(head, input);
      this.headBytes = head.length;
      this.declKey = declKey;
    }
    // `kind\0start:end\0`, ASCII, written byte by byte (a string and a native call cost more for a few bytes).
    this.fit(this.headBytes + kind.length + 24 + (to - from));
    const bytes = this.bytes;
    let b = input + this.headBytes;
    for (let k = 0; k < kind.length; k++) bytes[b++] = kind.charCodeAt(k);
    bytes[b++] = 0;
    b = putDecimal(bytes, b, start);
    bytes[b++] = 0x3a; // ":"
    b = putDecimal(bytes, b, end);
    bytes[b++] = 0;
    bytes.copyWithin(b, from, to);
    const length = b + (to - from) - input;
    const view = (this.inputs[length] ??= new Uint8Array(bytes.buffer, bytes.byteOffset + input, length));
    const hex = sha256Hex(view);
    out[at] = hexInt32(hex, 0);
    out[at + 1] = hexInt32(hex, 8);
  }

  /** Grows the input's room (keeping the text and the input's head) to hold `bytes`. */
  private fit(bytes: number): void {
    if (this.textBytes + bytes <= this.bytes.length) return;
    const bigger = Buffer.allocUnsafeSlow(this.textBytes + 2 * bytes);
    bigger.set(this.bytes.subarray(0, this.textBytes + this.headBytes));
    this.bytes = bigger;
    this.inputs = [];
  }
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
