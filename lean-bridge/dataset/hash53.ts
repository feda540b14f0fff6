/**
 * Fast non-cryptographic hashing for set membership of many texts (de-duplication, held-out middles): a
 * crypto hash object per hole cost more than mining the hole. Two 32-bit multiply-xorshift lanes give 53
 * bits (a safe integer): two of 1.5 million different texts share a value with a chance of about 1 in 10,000.
 * The middles of a file's holes are hashed from its UTF-16 units in a Uint16Array (`hash53Units`: V8 reads
 * a typed array about twice as fast as `charCodeAt` of a two-byte string), with the same values.
 */

/** The 53-bit value of two 32-bit lanes. */
export function hashFinish(lane1: number, lane2: number): number {
  let h1 = lane1;
  let h2 = lane2;
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 2097152 * (h2 >>> 0) + (h1 >>> 11);
}

export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  return hashFinish(h1, h2);
}

/** `hash53` of the text whose UTF-16 units are `units[start, end)`. */
export function hash53Units(units: Uint16Array, start: number, end: number, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = start; i < end; i++) {
    const code = units[i]!;
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  return hashFinish(h1, h2);
}
