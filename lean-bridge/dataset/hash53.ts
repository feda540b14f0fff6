/**
 * Fast non-cryptographic hashing for set membership of many texts (de-duplication, held-out middles): a
 * crypto hash object per hole cost more than mining the hole. Two 32-bit multiply-xorshift lanes give 53
 * bits (a safe integer): two of 1.5 million different texts share a value with a chance of about 1 in 10,000.
 * The values only ever meet each other within one export (they are never written).
 *
 * Each step takes two UTF-16 units as one 32-bit word, so a lane's chain of multiplications is half as long
 * as a unit per step (nested holes make the middles add up to about three times the workspace's text); the
 * text's length is mixed in at the end, so a trailing NUL still counts. The middles of a file's holes are
 * hashed from its units in a Uint16Array (`hash53Units`: V8 reads a typed array about twice as fast as
 * `charCodeAt` of a two-byte string), with the same values as `hash53` of their text.
 */

const LANE1_START = 0xdeadbeef;
const LANE2_START = 0x41c6ce57;
const LANE1_MULTIPLIER = 2654435761;
const LANE2_MULTIPLIER = 1597334677;

/** The 53-bit value of two 32-bit lanes. */
export function hashFinish(lane1: number, lane2: number): number {
  let h1 = lane1;
  let h2 = lane2;
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 2097152 * (h2 >>> 0) + (h1 >>> 11);
}

export function hash53(text: string, seed = 0): number {
  let h1 = LANE1_START ^ seed;
  let h2 = LANE2_START ^ seed;
  const end = text.length;
  let i = 0;
  for (; i + 1 < end; i += 2) {
    const word = text.charCodeAt(i) | (text.charCodeAt(i + 1) << 16);
    h1 = Math.imul(h1 ^ word, LANE1_MULTIPLIER);
    h2 = Math.imul(h2 ^ word, LANE2_MULTIPLIER);
  }
  if (i < end) {
    const word = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ word, LANE1_MULTIPLIER);
    h2 = Math.imul(h2 ^ word, LANE2_MULTIPLIER);
  }
  return hashFinish(h1 ^ end, h2);
}

/** `hash53` of the text whose UTF-16 units are `units[start, end)`. */
export function hash53Units(units: Uint16Array, start: number, end: number, seed = 0): number {
  let h1 = LANE1_START ^ seed;
  let h2 = LANE2_START ^ seed;
  let i = start;
  for (; i + 1 < end; i += 2) {
    const word = units[i]! | (units[i + 1]! << 16);
    h1 = Math.imul(h1 ^ word, LANE1_MULTIPLIER);
    h2 = Math.imul(h2 ^ word, LANE2_MULTIPLIER);
  }
  if (i < end) {
    const word = units[i]!;
    h1 = Math.imul(h1 ^ word, LANE1_MULTIPLIER);
    h2 = Math.imul(h2 ^ word, LANE2_MULTIPLIER);
  }
  return hashFinish(h1 ^ (end - start), h2);
}
