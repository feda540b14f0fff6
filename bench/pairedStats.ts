/**
 * Exact paired tests for bench:seeds, small enough to need no statistics library: a sign-flip permutation test
 * over per-seed differences, and a binomial sign test over discordant pairs.
 */

/** Exact two-sided sign-flip permutation p-value of the mean of paired differences. */
export function signFlipP(diffs: readonly number[]): number {
  const n = diffs.length;
  if (n === 0) return 1;
  const observed = Math.abs(diffs.reduce((a, b) => a + b, 0));
  let extreme = 0;
  for (let mask = 0; mask < 2 ** n; mask++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += mask & (1 << i) ? -diffs[i]! : diffs[i]!;
    if (Math.abs(sum) >= observed - 1e-12) extreme++;
  }
  return extreme / 2 ** n;
}

/** Exact two-sided binomial sign test: P(a result at least as lopsided as `wins` of `n` under p = 1/2). */
export function signTestP(wins: number, n: number): number {
  if (n === 0) return 1;
  const k = Math.min(wins, n - wins);
  let tail = 0;
  let term = 0.5 ** n; // C(n, 0) / 2^n
  for (let i = 0; i <= k; i++) {
    tail += term;
    term = (term * (n - i)) / (i + 1);
  }
  return Math.min(1, 2 * tail);
}
