/**
 * Unbiased pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code"): from n samples of one
 * task of which c passed, the probability that at least one of k samples drawn without replacement passes,
 * 1 − C(n−c, k) / C(n, k). Computed as the product 1 − ∏_{i=n−c+1}^{n} (1 − k/i), which never forms a binomial
 * coefficient (they overflow doubles from n ≈ 1030) — the same formula as the trainer's
 * `fim_rlvr.run.validation.pass_at_k`, so the two report the same figure for the same counts.
 */

/** pass@k of one task. Needs 1 ≤ k ≤ n and 0 ≤ c ≤ n (a bug otherwise: callers check n ≥ k first). */
export function passAtK(n: number, c: number, k: number): number {
  if (
    !(Number.isInteger(n) && Number.isInteger(c) && Number.isInteger(k)) ||
    k < 1 ||
    k > n ||
    c < 0 ||
    c > n
  )
    throw new RangeError(`pass@k needs 1 <= k <= n and 0 <= c <= n (got n=${n}, c=${c}, k=${k})`);
  // Every draw of k contains a passing sample when fewer than k samples fail.
  if (n - c < k) return 1;
  let product = 1;
  for (let i = n - c + 1; i <= n; i++) product *= 1 - k / i;
  return 1 - product;
}

/** One task's counts: samples that count (infrastructure failures left out) and how many of them proved. */
export interface TaskCounts {
  n: number;
  c: number;
}

export interface PassAtKFigure {
  /** Mean pass@k over the tasks that had at least k counted samples; null when none had. */
  value: number | null;
  /** Tasks in the mean. */
  tasks: number;
  /** Tasks left out because infrastructure failures left them fewer than k counted samples. */
  excluded: number;
}

/** The mean pass@k over tasks; tasks with fewer than k counted samples are left out and counted apart. */
export function meanPassAtK(tasks: readonly TaskCounts[], k: number): PassAtKFigure {
  let sum = 0;
  let counted = 0;
  for (const t of tasks) {
    if (t.n < k) continue;
    sum += passAtK(t.n, t.c, k);
    counted++;
  }
  return { value: counted ? sum / counted : null, tasks: counted, excluded: tasks.length - counted };
}

/** Reads `-k 1,8,32`: distinct positive whole numbers, ascending. */
export function parseKs(text: string): { kind: "ok"; ks: number[] } | { kind: "error"; message: string } {
  const parts = text.split(",").map((s) => s.trim());
  const ks: number[] = [];
  for (const part of parts) {
    const k = Number(part);
    if (!part || !Number.isInteger(k) || k < 1)
      return { kind: "error", message: `-k takes positive whole numbers separated by commas, got "${text}"` };
    if (!ks.includes(k)) ks.push(k);
  }
  return { kind: "ok", ks: ks.sort((a, b) => a - b) };
}
