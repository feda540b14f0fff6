/**
 * The one reading of a count option (`--steps`, `--workers`, `--seed`, …) for every command: a whole number,
 * written in digits, at least `min`. One message for every way it can be wrong, so `--steps -3`, `--steps=-3`,
 * `--steps ""` and `--steps 1.5` all say the same thing.
 */
export type WholeNumber = { kind: "ok"; value: number } | { kind: "error"; message: string };

export function readWholeNumber(flag: string, text: string, min: number): WholeNumber {
  const n = /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (Number.isSafeInteger(n) && n >= min) return { kind: "ok", value: n };
  return { kind: "error", message: `${flag} must be a whole number of at least ${min}, got "${text}"` };
}
