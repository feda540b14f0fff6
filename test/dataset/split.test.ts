/** Splits by declaration, balanced toward 80/10/10 (issue #8), and code-point offsets for Python users. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { CodePointIndex } from "../../lean-bridge/dataset/records";
import { JsonText } from "../../lean-bridge/dataset/jsonText";
import { SPLITS, SPLIT_FRACTIONS, assignSplits, splitOf, type Split } from "../../lean-bridge/dataset/split";
import { mulberry32 } from "../../bench/corpus";

function counts(assignment: Map<string, Split>, sizes: Map<string, number>): Record<Split, number> {
  const c: Record<Split, number> = { train: 0, validation: 0, test: 0 };
  for (const [key, split] of assignment) c[split] += sizes.get(key)!;
  return c;
}

function distance(c: Record<Split, number>, total: number): number {
  return SPLITS.reduce((d, s) => d + Math.abs(c[s] - SPLIT_FRACTIONS[s] * total), 0);
}

/** Declarations with skewed sizes, like a small workspace: a few big theorems, many small ones. */
function workspace(seed: number, n: number): Map<string, number> {
  const rand = mulberry32(seed);
  const sizes = new Map<string, number>();
  for (let k = 0; k < n; k++) sizes.set(`F${k % 7}.lean\0thm_${k}`, 1 + Math.floor(rand() ** 3 * 12));
  return sizes;
}

test("balanced splits are at a local optimum: no single declaration's move brings the shares closer", () => {
  for (let seed = 0; seed < 20; seed++) {
    const sizes = workspace(seed, 40 + seed * 10);
    const total = [...sizes.values()].reduce((a, b) => a + b, 0);
    const assignment = assignSplits(seed, sizes);
    assert.equal(assignment.size, sizes.size);
    const c = counts(assignment, sizes);
    const d = distance(c, total);
    for (const [key, split] of assignment)
      for (const to of SPLITS) {
        if (to === split) continue;
        const moved = { ...c, [split]: c[split] - sizes.get(key)!, [to]: c[to] + sizes.get(key)! };
        assert.ok(distance(moved, total) >= d - 1e-9, `seed ${seed}: moving ${key} to ${to} would help`);
      }
    const biggest = Math.max(...sizes.values());
    for (const s of SPLITS)
      assert.ok(
        Math.abs(c[s] - SPLIT_FRACTIONS[s] * total) <= 2 * biggest,
        `seed ${seed}: ${s} within granularity`,
      );
  }
});

test("balancing is never worse than the hash splits, and far better on small workspaces", () => {
  let hashWorse = 0;
  for (let seed = 0; seed < 20; seed++) {
    const sizes = workspace(100 + seed, 50);
    const total = [...sizes.values()].reduce((a, b) => a + b, 0);
    const hashed = new Map(
      [...sizes.keys()].map((k) => {
        const [file, decl] = k.split("\0") as [string, string];
        return [k, splitOf(seed, file, decl)] as const;
      }),
    );
    const balanced = distance(counts(assignSplits(seed, sizes), sizes), total);
    const hash = distance(counts(hashed, sizes), total);
    assert.ok(balanced <= hash + 1e-9, `seed ${seed}: ${balanced} vs hash ${hash}`);
    if (hash > balanced + 2) hashWorse++;
  }
  assert.ok(
    hashWorse >= 10,
    `the hash alone is off by more than 2 tasks on most small workspaces (${hashWorse}/20)`,
  );
});

test("splits depend only on the seed and the counts, and another seed moves declarations", () => {
  const sizes = workspace(7, 200);
  const a = assignSplits(3, sizes);
  const b = assignSplits(3, new Map([...sizes].reverse()));
  assert.deepEqual([...a].sort(), [...b].sort());
  const c = assignSplits(4, sizes);
  assert.ok([...a].some(([k, s]) => c.get(k) !== s));
});

test("code-point offsets: what Python's str slicing needs, for BMP and astral characters alike", () => {
  const text = "theorem t (𝔸 : Type) : 𝔸 = 𝔸 := by\n  -- 😀 α\n  rfl\n𝔹";
  const index = new CodePointIndex(text);
  for (let k = 0; k <= text.length; k++) {
    const c = text.charCodeAt(k - 1);
    if (c >= 0xd800 && c <= 0xdbff) continue; // Never inside a pair: holes start and end at tokens.
    assert.equal(index.codePointOffset(k), Array.from(text.slice(0, k)).length, `offset ${k}`);
  }
  assert.equal(new CodePointIndex("plain ascii").codePointOffset(5), 5);
});

test("the code-point index JsonText's walk finds is the one found from the text", () => {
  const text = "a😀é\ud800b⟨😀😀⟩\udc00c\n𝔽";
  const found = new CodePointIndex(text);
  const given = new CodePointIndex(text, new JsonText(text).pairs);
  for (let k = 0; k <= text.length; k++) assert.equal(given.codePointOffset(k), found.codePointOffset(k));
  assert.equal(found.codePointOffset(text.length), [...text].length);
});
