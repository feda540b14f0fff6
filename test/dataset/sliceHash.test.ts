/**
 * SliceHashes (lean-bridge/dataset/sliceHash.ts): the key of every slice, read off the prefix hashes in constant
 * time, is the key of the slice's own text; keys are 53-bit whole numbers and tell short texts apart.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SliceHashes, sliceKey } from "../../lean-bridge/dataset/sliceHash";
import { unitsOf } from "../../lean-bridge/dataset/textUnits";

test("every slice's key is the key of its text, with and without a seed", () => {
  const text = '\0theorem t : 𝔽 = 𝔽 := by\r\n  simp [«x y»] -- "q"\n  exact ⟨rfl, rfl⟩\0';
  const hashes = new SliceHashes().load(text);
  for (let start = 0; start <= text.length; start++)
    for (let end = start; end <= text.length; end++) {
      const piece = text.slice(start, end);
      assert.equal(hashes.slice(start, end), sliceKey(piece), `${start}..${end}`);
      assert.equal(hashes.slice(start, end, 2 ** 52 + 12345), sliceKey(piece, 2 ** 52 + 12345));
    }
});

test("a text built piece by piece hashes as the whole; a reload replaces the text", () => {
  const text = "rw [← mul_comm] at h₁";
  const hashes = new SliceHashes().load("something much longer than the next text, to be replaced");
  hashes.begin(text.length);
  const units = unitsOf(text);
  hashes.pushUnits(units, 0, 3);
  hashes.push(text.charCodeAt(3));
  hashes.pushUnits(units, 4, text.length);
  assert.equal(hashes.length, text.length);
  for (let start = 0; start <= text.length; start++)
    assert.equal(hashes.slice(start, text.length), sliceKey(text.slice(start)));
  assert.throws(() => hashes.slice(0, text.length + 1), RangeError);
});

test("keys are 53-bit whole numbers and differ for every text of up to three characters", () => {
  const alphabet = ["\0", " ", "a", "b", "·", "𝔽"];
  const texts = new Set<string>([""]);
  let layer = [""];
  for (let length = 1; length <= 3; length++) {
    layer = layer.flatMap((t) => alphabet.map((c) => t + c));
    for (const t of layer) texts.add(t);
  }
  const keys = new Set<number>();
  for (const t of texts) {
    const key = sliceKey(t);
    assert.ok(Number.isSafeInteger(key) && key >= 0, `${key}`);
    keys.add(key);
  }
  assert.equal(keys.size, texts.size);
  // Long texts that differ in one place, and texts that differ by where a line break falls.
  const long = "simp only [Nat.add_comm]\n".repeat(500);
  assert.notEqual(sliceKey(long), sliceKey(long.slice(0, 6000) + "x" + long.slice(6001)));
  assert.notEqual(sliceKey("ab\ncd"), sliceKey("a\nbcd"));
});

test("a text's units are its UTF-16 code units, lone surrogates included; the last text's are reused", () => {
  for (const text of ["", "a", "ab", "ℕ → 𝔽 \ud800 x \udc00", "plain ascii text"]) {
    const units = unitsOf(text);
    assert.deepEqual(
      [...units],
      [...text].flatMap((c) => [...Array(c.length).keys()].map((k) => c.charCodeAt(k))),
    );
    assert.equal(unitsOf(text), units);
  }
});
