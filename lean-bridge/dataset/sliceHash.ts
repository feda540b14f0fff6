/**
 * 53-bit hashes of any slice of one text in constant time, for the exporter's per-hole keys (the (statement,
 * middle) pair digest and the normalised-middle key). A proof's holes nest: their middles add up to about
 * three times the workspace's text, and hashing each middle character by character, twice per hole, was a
 * tenth of an export. Here each text is walked once, keeping the polynomial hash of every prefix; a slice's
 * hash is then two multiplications away (`h[a, b) = P[b] − P[a]·B^(b−a)`).
 *
 * Two lanes, each a polynomial hash modulo 2^32 with its own odd base, are mixed into 53 bits with the slice's
 * length (and an optional seed) by `hashFinish`. These keys only ever meet each other inside one export
 * (membership in the dedup and held-out sets); they are never written, so they need to be well spread on
 * Lean text, not stable across versions. Two different texts share a key with a chance of about 2^-53.
 */
import { hashFinish } from "./hash53";
import { unitsOf } from "./textUnits";

const BASE1 = 0x2545f491;
const BASE2 = 0x6c8e9cf5 | 0;

/** `POW1[k]` = BASE1^k mod 2^32 (as a signed 32-bit integer), grown on demand for longer slices. */
let POW1 = new Int32Array(0);
let POW2 = new Int32Array(0);

function growPowers(length: number): void {
  if (length < POW1.length) return;
  const size = Math.max(1024, 2 ** Math.ceil(Math.log2(length + 1)));
  const p1 = new Int32Array(size);
  const p2 = new Int32Array(size);
  p1[0] = 1;
  p2[0] = 1;
  for (let k = 1; k < size; k++) {
    p1[k] = Math.imul(p1[k - 1]!, BASE1);
    p2[k] = Math.imul(p2[k - 1]!, BASE2);
  }
  POW1 = p1;
  POW2 = p2;
}

/** The lanes after `fillLanes`' last unit. */
let lanesEnd1 = 0;
let lanesEnd2 = 0;

/**
 * Writes the prefix hashes of `units[start, end)` to `l1[at…]` and `l2[at…]`, continuing from lanes `h1`,
 * `h2`: a plain function over its arguments, so that the loop keeps its lanes in registers.
 */
function fillLanes(
  units: Uint16Array,
  start: number,
  end: number,
  l1: Int32Array,
  l2: Int32Array,
  at: number,
  h1: number,
  h2: number,
): void {
  let k = at;
  for (let i = start; i < end; i++) {
    const c = units[i]! + 1;
    h1 = (Math.imul(h1, BASE1) + c) | 0;
    h2 = (Math.imul(h2, BASE2) + c) | 0;
    l1[k] = h1;
    l2[k++] = h2;
  }
  lanesEnd1 = h1;
  lanesEnd2 = h2;
}

/** The two lanes of a slice, its length and a seed as one 53-bit number. */
function finish(h1: number, h2: number, length: number, seed: number): number {
  const seedLow = seed >>> 0;
  const seedHigh = (seed / 4294967296) >>> 0;
  return hashFinish(h1 ^ Math.imul(length, 0x9e3779b1) ^ seedLow, h2 ^ seedHigh);
}

/** The key of a whole text: what `SliceHashes.slice` gives for a slice holding exactly these characters. */
export function sliceKey(text: string, seed = 0): number {
  let h1 = 0;
  let h2 = 0;
  for (let k = 0; k < text.length; k++) {
    // +1: a leading NUL still counts (a prefix of zeros would otherwise hash as nothing).
    const c = text.charCodeAt(k) + 1;
    h1 = (Math.imul(h1, BASE1) + c) | 0;
    h2 = (Math.imul(h2, BASE2) + c) | 0;
  }
  return finish(h1, h2, text.length, seed);
}

/**
 * The prefix hashes of one text (UTF-16 units, or any 16-bit codes), in arrays reused from text to text:
 * `load` (or `begin` and pieces) replaces what was held, and `slice` answers for the text loaded last.
 */
export class SliceHashes {
  private lane1 = new Int32Array(1024);
  private lane2 = new Int32Array(1024);
  /** Units of the text hashed (the lanes hold length + 1 prefixes). */
  length = 0;
  /** The lanes' last values, while a text is built piece by piece. */
  private h1 = 0;
  private h2 = 0;

  /** Hashes the prefixes of `text`. */
  load(text: string): this {
    this.begin(text.length).pushUnits(unitsOf(text), 0, text.length);
    return this;
  }

  /**
   * Starts a text of at most `capacity` units that is built piece by piece (`push`, `pushUnits`): the
   * normalised middles' codes are hashed as they are laid out, never stored.
   */
  begin(capacity: number): this {
    this.fit(capacity);
    this.length = 0;
    this.h1 = 0;
    this.h2 = 0;
    return this;
  }

  /** Appends one UTF-16 unit to the text begun. */
  push(code: number): void {
    this.room(1);
    const k = ++this.length;
    const c = code + 1;
    this.lane1[k] = this.h1 = (Math.imul(this.h1, BASE1) + c) | 0;
    this.lane2[k] = this.h2 = (Math.imul(this.h2, BASE2) + c) | 0;
  }

  /** Appends `units[start, end)` (a text's UTF-16 units: `unitsOf`) to the text begun. */
  pushUnits(units: Uint16Array, start: number, end: number): void {
    this.room(end - start);
    fillLanes(units, start, end, this.lane1, this.lane2, this.length + 1, this.h1, this.h2);
    this.h1 = lanesEnd1;
    this.h2 = lanesEnd2;
    this.length += end - start;
  }

  /** `sliceKey(text.slice(start, end), seed)` of the text loaded last, in constant time. */
  slice(start: number, end: number, seed = 0): number {
    if (start < 0 || end > this.length || end < start)
      throw new RangeError(`SliceHashes: ${start}..${end} is outside the text (${this.length})`);
    const n = end - start;
    const h1 = (this.lane1[end]! - Math.imul(this.lane1[start]!, POW1[n]!)) | 0;
    const h2 = (this.lane2[end]! - Math.imul(this.lane2[start]!, POW2[n]!)) | 0;
    return finish(h1, h2, n, seed);
  }

  /** Typed arrays drop writes past their end: a text longer than `begin` promised would hash wrongly. */
  private room(units: number): void {
    if (this.length + units >= this.lane1.length)
      throw new RangeError(`SliceHashes: more units than begin() made room for (${this.lane1.length - 1})`);
  }

  /** Room for the prefixes of a text of `n` units. */
  private fit(n: number): void {
    if (n + 1 > this.lane1.length) {
      const size = 2 ** Math.ceil(Math.log2(n + 1));
      this.lane1 = new Int32Array(size);
      this.lane2 = new Int32Array(size);
    }
    this.lane1[0] = 0;
    this.lane2[0] = 0;
    growPowers(n);
  }
}
