/** Unbiased pass@k against values computed by hand from 1 − C(n−c, k)/C(n, k), edge cases included. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { meanPassAtK, parseKs, passAtK } from "../../lean-bridge/eval/passAtK";

const close = (actual: number, expected: number, what: string) =>
  assert.ok(Math.abs(actual - expected) < 1e-12, `${what}: ${actual} should be ${expected}`);

test("pass@k matches hand-computed binomial ratios", () => {
  // n=4, c=2: pass@1 = c/n; pass@2 = 1 − C(2,2)/C(4,2) = 1 − 1/6; pass@4 = 1 − C(2,4)/C(4,4) = 1 (C(2,4)=0).
  close(passAtK(4, 2, 1), 0.5, "n=4 c=2 k=1");
  close(passAtK(4, 2, 2), 5 / 6, "n=4 c=2 k=2");
  close(passAtK(4, 2, 4), 1, "n=4 c=2 k=4");
  // n=10, c=3, k=5: 1 − C(7,5)/C(10,5) = 1 − 21/252.
  close(passAtK(10, 3, 5), 1 - 21 / 252, "n=10 c=3 k=5");
  // n=8, c=1, k=3: 1 − C(7,3)/C(8,3) = 1 − 35/56 = 3/8 (= k/n when c = 1).
  close(passAtK(8, 1, 3), 3 / 8, "n=8 c=1 k=3");
});

test("edge cases: c = 0, n = c, k = n, n = k = 1", () => {
  for (const [n, k] of [
    [1, 1],
    [5, 1],
    [5, 5],
    [32, 8],
  ] as const)
    assert.equal(passAtK(n, 0, k), 0, `c=0 n=${n} k=${k}`);
  for (const [n, k] of [
    [1, 1],
    [5, 1],
    [5, 5],
  ] as const)
    assert.equal(passAtK(n, n, k), 1, `c=n=${n} k=${k}`);
  // k = n: any proved sample makes the only draw pass.
  assert.equal(passAtK(6, 1, 6), 1);
  assert.equal(passAtK(6, 0, 6), 0);
});

test("stable where binomial coefficients overflow doubles", () => {
  // C(3000, 100) is far beyond Number.MAX_VALUE; compare with the ratio summed in log space.
  const n = 3000;
  const c = 10;
  const k = 100;
  let logRatio = 0; // log C(n−c, k) − log C(n, k) = Σ_{i=0}^{k−1} log((n−c−i)/(n−i))
  for (let i = 0; i < k; i++) logRatio += Math.log((n - c - i) / (n - i));
  const value = passAtK(n, c, k);
  assert.ok(Number.isFinite(value));
  assert.ok(Math.abs(value - (1 - Math.exp(logRatio))) < 1e-9, `${value}`);
  close(passAtK(2000, 1, 1), 1 / 2000, "n=2000 c=1 k=1");
});

test("n < k and out-of-range counts are refused (callers enforce n >= k first)", () => {
  assert.throws(() => passAtK(3, 1, 4), RangeError);
  assert.throws(() => passAtK(3, 4, 1), RangeError);
  assert.throws(() => passAtK(3, -1, 1), RangeError);
  assert.throws(() => passAtK(3, 1, 0), RangeError);
});

test("the mean leaves out tasks with fewer than k counted samples and counts them", () => {
  const figure = meanPassAtK(
    [
      { n: 4, c: 2 },
      { n: 4, c: 0 },
      { n: 2, c: 2 },
    ],
    4,
  );
  assert.deepEqual(figure, { value: 0.5, tasks: 2, excluded: 1 });
  assert.deepEqual(meanPassAtK([{ n: 1, c: 1 }], 2), { value: null, tasks: 0, excluded: 1 });
  close(
    meanPassAtK(
      [
        { n: 4, c: 2 },
        { n: 4, c: 1 },
      ],
      1,
    ).value!,
    (0.5 + 0.25) / 2,
    "mean pass@1",
  );
});

test("-k lists are read, de-duplicated and sorted; bad ones explained", () => {
  assert.deepEqual(parseKs("8, 1,32,8"), { kind: "ok", ks: [1, 8, 32] });
  for (const bad of ["", "0", "1,,2", "1.5", "x"]) assert.equal(parseKs(bad).kind, "error", bad);
});
