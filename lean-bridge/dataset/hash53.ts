/**
 * Fast non-cryptographic hashing for set membership of many texts (de-duplication, held-out middles): a
 * crypto hash object per hole cost more than mining the hole. Two 32-bit multiply-xorshift lanes give 53
 * bits (a safe integer): two of 1.5 million different texts share a value with a chance of about 1 in 10,000.
 */
export function hash53(text: string, seed = 0): number {
  let h1 = 0xdeadbeef ^ seed;
  let h2 = 0x41c6ce57 ^ seed;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 2097152 * (h2 >>> 0) + (h1 >>> 11);
}
