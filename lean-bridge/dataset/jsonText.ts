/**
 * A file's text serialised once as a JSON string, with where every UTF-16 offset of the text lands in it, so
 * that the JSON string of any slice (a task's middle, prefix and suffix, a declaration's text) is a slice of
 * it rather than a new `JSON.stringify`. Every task of a file quotes three slices of its text: serialising
 * and encoding them one by one was most of an export's time.
 *
 * The JSON is held as UTF-8 bytes in a one-byte string (one character per byte, "latin1"), so slices of it
 * and ASCII text join into a row that is written to disk with one copy (`JsonlWriter.writeLatin1Line`).
 */

import { unitsOf } from "../text/units";

/** Bytes of an ASCII character inside a JSON string: `\"`, `\\`, `\n`-style escapes, `\u00XX` for the rest. */
const ASCII_WIDTH = Uint8Array.from({ length: 128 }, (_, c) => {
  if (c === 0x22 || c === 0x5c) return 2;
  if (c >= 0x20) return 1;
  return c === 8 || c === 9 || c === 10 || c === 12 || c === 13 ? 2 : 6;
});

/** The letter after the backslash of a two-byte escape (`\"`, `\\`, `\b`, `\t`, `\n`, `\f`, `\r`). */
const SHORT_ESCAPE = Uint8Array.from({ length: 128 }, (_, c) =>
  c === 8 ? 0x62 : c === 9 ? 0x74 : c === 10 ? 0x6e : c === 12 ? 0x66 : c === 13 ? 0x72 : c,
);

const HEX = Uint8Array.from("0123456789abcdef", (c) => c.charCodeAt(0));

/** `\uXXXX` (lower-case hex, as JSON.stringify writes control characters and lone surrogates) at `at`. */
function writeUnicodeEscape(out: Buffer, at: number, c: number): void {
  out[at] = 0x5c; // \
  out[at + 1] = 0x75; // u
  out[at + 2] = HEX[(c >> 12) & 15]!;
  out[at + 3] = HEX[(c >> 8) & 15]!;
  out[at + 4] = HEX[(c >> 4) & 15]!;
  out[at + 5] = HEX[c & 15]!;
}

/** A buffer of at least `bytes` bytes, reused from file to file (the JSON is copied out of it as a string). */
let scratchBuffer = Buffer.allocUnsafe(0);

function scratch(bytes: number): Buffer {
  if (scratchBuffer.length < bytes) scratchBuffer = Buffer.allocUnsafe(bytes);
  return scratchBuffer;
}

/**
 * The two offset tables of a JsonText, reused from file to file by an exporter that holds one file's JsonText
 * at a time: a file's tables are as large as 8 bytes a character, and fresh zeroed memory per file cost page
 * faults and garbage collections. A JsonText made with them is valid until the next one made with them.
 */
export class OffsetTables {
  at = new Int32Array(0);
  utf8At = new Int32Array(0);

  fit(entries: number): this {
    if (this.at.length < entries) {
      const size = Math.max(entries, Math.ceil(this.at.length * 1.5));
      this.at = new Int32Array(size);
      this.utf8At = new Int32Array(size);
    }
    return this;
  }
}

/** Where a slice bound falls between the two halves of a surrogate pair: no byte offset there. */
const INSIDE_PAIR = -1;

/** UTF-8 bytes as a one-byte string: one character per byte. */
export function latin1OfUtf8(text: string): string {
  // ASCII (most names and keys) is its own UTF-8: no buffer made.
  if (!NON_ASCII.test(text)) return text;
  return Buffer.from(text, "utf8").toString("latin1");
}

const NON_ASCII = /[\u0080-\uffff]/;

export class JsonText {
  /** `JSON.stringify(text)` as UTF-8 bytes, one character per byte. */
  private readonly json: string;
  /** `at[k]`: where UTF-16 offset k of the text starts in `json` (`text.length + 1` entries). */
  private readonly at: Int32Array;
  /**
   * Where each UTF-16 offset starts in the text's UTF-8 (`Buffer.from(text, "utf8")`, lone surrogates as
   * U+FFFD), -1 between the halves of a pair; undefined when the text is ASCII (offset k is byte k).
   */
  readonly utf8At: Int32Array | undefined;
  /** The UTF-16 offsets of the high surrogates of the text's astral characters, ascending (`CodePointIndex`). */
  readonly pairs: readonly number[];

  /** `json`: `JSON.stringify(text)` as UTF-8 bytes when already at hand (a files.jsonl row's), else written here. */
  constructor(
    private readonly text: string,
    json?: string,
    tables?: OffsetTables,
  ) {
    const n = text.length;
    const at = tables ? tables.fit(n + 1).at : new Int32Array(n + 1);
    // The UTF-8 offsets and the surrogate pairs come with the JSON offsets, and the JSON's bytes are written
    // in the same walk: JSON.stringify of a two-byte string, then encoding it, cost three times as much.
    const utf8At = tables ? tables.utf8At : new Int32Array(n + 1);
    const pairs: number[] = [];
    const units = unitsOf(text);
    const out = json === undefined ? scratch(6 * n + 2) : undefined;
    let b = 1; // After the opening quote.
    let u = 0;
    for (let k = 0; k < n; k++) {
      at[k] = b;
      utf8At[k] = u;
      const c = units[k]!;
      if (c < 0x80) {
        const width = ASCII_WIDTH[c]!;
        if (out) {
          if (width === 1) out[b] = c;
          else if (width === 2) {
            out[b] = 0x5c; // \
            out[b + 1] = SHORT_ESCAPE[c]!;
          } else writeUnicodeEscape(out, b, c);
        }
        b += width;
        u += 1;
      } else if (c < 0x800) {
        if (out) {
          out[b] = 0xc0 | (c >> 6);
          out[b + 1] = 0x80 | (c & 0x3f);
        }
        b += 2;
        u += 2;
      } else if (c < 0xd800 || c > 0xdfff) {
        if (out) {
          out[b] = 0xe0 | (c >> 12);
          out[b + 1] = 0x80 | ((c >> 6) & 0x3f);
          out[b + 2] = 0x80 | (c & 0x3f);
        }
        b += 3;
        u += 3;
      } else if (c <= 0xdbff && k + 1 < n && (units[k + 1]! & 0xfc00) === 0xdc00) {
        if (out) {
          const point = 0x10000 + ((c - 0xd800) << 10) + (units[k + 1]! - 0xdc00);
          out[b] = 0xf0 | (point >> 18);
          out[b + 1] = 0x80 | ((point >> 12) & 0x3f);
          out[b + 2] = 0x80 | ((point >> 6) & 0x3f);
          out[b + 3] = 0x80 | (point & 0x3f);
        }
        pairs.push(k);
        at[++k] = INSIDE_PAIR;
        utf8At[k] = INSIDE_PAIR;
        b += 4;
        u += 4;
      } else {
        // A lone surrogate: `\udXXX`, as JSON.stringify writes it, and U+FFFD in UTF-8.
        if (out) writeUnicodeEscape(out, b, c);
        b += 6;
        u += 3;
      }
    }
    at[n] = b;
    utf8At[n] = u;
    if (out) {
      out[0] = 0x22; // "
      out[b] = 0x22;
      this.json = out.toString("latin1", 0, b + 1);
    } else this.json = json!;
    if (b + 1 !== this.json.length) throw new Error("JsonText: offsets disagree with JSON.stringify");
    this.at = at;
    this.utf8At = u === n ? undefined : utf8At;
    this.pairs = pairs;
  }

  /**
   * Where UTF-16 offset k of the text starts in `JSON.stringify(text)`'s UTF-8 bytes, or -1 between the
   * halves of a surrogate pair (where `quoted` escapes each half alone instead).
   */
  byteAt(k: number): number {
    return this.at[k]!;
  }

  /** `JSON.stringify(text.slice(start, end))` as UTF-8 bytes, one character per byte. */
  quoted(start: number, end: number): string {
    const from = this.at[start]!;
    const to = this.at[end]!;
    // A bound between the halves of a pair (never a token's or a line's bound): each half is escaped alone.
    if (from === INSIDE_PAIR || to === INSIDE_PAIR)
      return latin1OfUtf8(JSON.stringify(this.text.slice(start, end)));
    return `"${this.json.slice(from, to)}"`;
  }
}
