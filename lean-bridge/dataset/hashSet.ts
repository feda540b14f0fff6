/**
 * A set of 53-bit hashes (hash53.ts: whole numbers in [0, 2^53)) in one Float64Array, open addressing with
 * linear probing. `Set<number>` boxes every number above 2^31 in a heap object of its own and hashes it
 * again: with the 1.5 million pair digests and held-out middle keys of a 100 MB workspace that was seconds
 * of CPU and garbage collection. Membership is exact, as `Set`'s.
 */

/** An empty slot: never a hash (they are non-negative). */
const EMPTY = -1;
const GOLDEN = 0x9e3779b1;

export class HashSet53 {
  private slots: Float64Array;
  /** 32 − log2(slots): the top bits of the mixed key pick the slot. */
  private shift: number;
  private mask: number;
  size = 0;

  constructor(capacity = 1 << 12) {
    let slots = 16;
    while (slots < 2 * capacity) slots *= 2;
    this.slots = new Float64Array(slots).fill(EMPTY);
    this.shift = 32 - Math.log2(slots);
    this.mask = slots - 1;
  }

  has(key: number): boolean {
    return this.slots[this.slotOf(key)] === key;
  }

  add(key: number): this {
    this.addNew(key);
    return this;
  }

  /** Adds `key`; whether it was new (one probe where `has` then `add` take two). */
  addNew(key: number): boolean {
    if (!(key >= 0 && Number.isSafeInteger(key)))
      throw new RangeError(`HashSet53: ${key} is not a 53-bit hash`);
    const slot = this.slotOf(key);
    if (this.slots[slot] === key) return false;
    this.slots[slot] = key;
    if (++this.size * 2 > this.slots.length) this.grow();
    return true;
  }

  /** Where `key` is, or the empty slot where it would go. */
  private slotOf(key: number): number {
    const slots = this.slots;
    const mask = this.mask;
    // Both 32-bit halves, mixed (Fibonacci hashing), so that any bits of the key spread over the slots.
    let slot =
      Math.imul((key >>> 0) ^ Math.imul((key / 4294967296) >>> 0, 0x85ebca6b), GOLDEN) >>> this.shift;
    for (;;) {
      const held = slots[slot]!;
      if (held === key || held === EMPTY) return slot;
      slot = (slot + 1) & mask;
    }
  }

  private grow(): void {
    const old = this.slots;
    this.slots = new Float64Array(old.length * 2).fill(EMPTY);
    this.shift--;
    this.mask = this.slots.length - 1;
    this.size = 0;
    for (const key of old) if (key !== EMPTY) this.add(key);
  }
}
