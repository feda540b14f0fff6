/**
 * Fast non-cryptographic hashing for set membership of many texts (de-duplication, held-out middles): a
 * crypto hash object per hole cost more than mining the hole. Two 32-bit multiply-xorshift lanes give 53
 * bits (a safe integer): two of 1.5 million different texts share a value with a chance of about 1 in 10,000.
 * The lanes are exposed so that a text can be hashed in pieces (`normalisedMiddleKey`) without being built.
 */

/** The two lanes, packed in one number each step would allocate; a pair of int32 is kept in a small array. */
export type Lanes = [number, number];

export function hashStart(seed = 0): Lanes {
  return [0xdeadbeef ^ seed, 0x41c6ce57 ^ seed];
}

export function hashChar(lanes: Lanes, code: number): Lanes {
  lanes[0] = Math.imul(lanes[0] ^ code, 2654435761);
  lanes[1] = Math.imul(lanes[1] ^ code, 1597334677);
  return lanes;
}

export function hashEnd(lanes: Lanes): number {
  let [h1, h2] = lanes;
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 2097152 * (h2 >>> 0) + (h1 >>> 11);
}

export function hash53(text: string, seed = 0): number {
  const lanes = hashStart(seed);
  for (let i = 0; i < text.length; i++) hashChar(lanes, text.charCodeAt(i));
  return hashEnd(lanes);
}
