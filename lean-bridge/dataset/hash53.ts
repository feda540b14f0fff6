/**
 * Fast non-cryptographic hashing for set membership of many texts (de-duplication, held-out middles): a
 * crypto hash object per hole cost more than mining the hole. Two 32-bit multiply-xorshift lanes give 53
 * bits (a safe integer): two of 1.5 million different texts share a value with a chance of about 1 in 10,000.
 * The lanes are kept in local variables by each loop (an array of two cost a load and a store per character),
 * so a text hashed in pieces (`normalisedMiddleKey`) runs the same steps itself: `LANE1_START`,
 * `LANE2_START`, `LANE1_MULTIPLIER`, `LANE2_MULTIPLIER`, then `hashFinish`.
 */

export const LANE1_START = 0xdeadbeef;
export const LANE2_START = 0x41c6ce57;
export const LANE1_MULTIPLIER = 2654435761;
export const LANE2_MULTIPLIER = 1597334677;

/** The 53-bit value of the two lanes after the last character. */
export function hashFinish(lane1: number, lane2: number): number {
  let h1 = lane1;
  let h2 = lane2;
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 2097152 * (h2 >>> 0) + (h1 >>> 11);
}

export function hash53(text: string, seed = 0): number {
  return hash53Slice(text, 0, text.length, seed);
}

/** `hash53(text.slice(start, end), seed)` without the slice. */
export function hash53Slice(text: string, start: number, end: number, seed = 0): number {
  let h1 = LANE1_START ^ seed;
  let h2 = LANE2_START ^ seed;
  for (let i = start; i < end; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, LANE1_MULTIPLIER);
    h2 = Math.imul(h2 ^ code, LANE2_MULTIPLIER);
  }
  return hashFinish(h1, h2);
}
