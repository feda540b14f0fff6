/**
 * text/units.ts and hash53Units: a text's UTF-16 units as a Uint16Array, and the hash of any slice of them,
 * which is `hash53` of the slice's text (the pair digests of export pass 1 are read this way).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { hash53, hash53Units } from "../../lean-bridge/dataset/hash53";
import { unitsOf } from "../../lean-bridge/text/units";

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

test("the hash of every slice of a text's units is hash53 of the slice, with and without a seed", () => {
  const text = '\0theorem t : 𝔽 = 𝔽 := by\r\n  simp [«x y»] -- "q"\n  exact ⟨rfl, \ud800⟩';
  const units = unitsOf(text);
  for (let start = 0; start <= text.length; start++)
    for (let end = start; end <= text.length; end++)
      for (const seed of [0, 12345, 2 ** 31 + 7])
        assert.equal(hash53Units(units, start, end, seed), hash53(text.slice(start, end), seed));
});

test("hash53 tells apart every text of up to three units over a small alphabet, NULs included", () => {
  const alphabet = ["\0", " ", "a", "b", "·", "\ud835"];
  const texts = new Set<string>([""]);
  let layer = [""];
  for (let length = 1; length <= 3; length++) {
    layer = layer.flatMap((t) => alphabet.map((c) => t + c));
    for (const t of layer) texts.add(t);
  }
  const keys = new Set<number>();
  for (const t of texts) {
    const key = hash53(t);
    assert.ok(Number.isSafeInteger(key) && key >= 0, `${key}`);
    keys.add(key);
  }
  assert.equal(keys.size, texts.size);
});
