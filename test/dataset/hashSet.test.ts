/**
 * HashSet53 (lean-bridge/dataset/hashSet.ts) answers as `Set<number>` does for 53-bit hashes: through growth,
 * at the range's ends, and for keys that differ only in their high or only in their low 32 bits.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { HashSet53 } from "../../lean-bridge/dataset/hashSet";
import { hash53 } from "../../lean-bridge/dataset/hash53";

test("HashSet53 agrees with Set on adds and lookups, through growth", () => {
  const ours = new HashSet53(4);
  const reference = new Set<number>();
  const keys: number[] = [0, 1, 2 ** 32, 2 ** 32 + 1, 2 ** 53 - 1, 2 ** 53 - 2 ** 32];
  for (let i = 0; i < 20_000; i++) keys.push(hash53(`key ${i % 15_000}`)); // repeats included
  for (let i = 0; i < 2_000; i++) keys.push(i * 2 ** 32, i); // only high bits, only low bits differ
  for (const key of keys) {
    assert.equal(ours.has(key), reference.has(key), `before adding ${key}`);
    ours.add(key);
    reference.add(key);
    assert.ok(ours.has(key));
  }
  assert.equal(ours.size, reference.size);
  for (let i = 0; i < 5_000; i++) {
    const probe = hash53(`absent ${i}`);
    assert.equal(ours.has(probe), reference.has(probe));
  }
});

test("HashSet53 refuses what is not a 53-bit hash", () => {
  const set = new HashSet53();
  for (const bad of [-1, 0.5, 2 ** 53, Number.NaN]) assert.throws(() => set.add(bad), RangeError);
});

test("addNew says whether the key was new, as Set's has before add would", () => {
  const ours = new HashSet53(4);
  const reference = new Set<number>();
  for (let i = 0; i < 30_000; i++) {
    const key = hash53(`key ${i % 20_000}`);
    assert.equal(ours.addNew(key), !reference.has(key));
    reference.add(key);
  }
  assert.equal(ours.size, reference.size);
});
