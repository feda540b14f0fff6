/**
 * Deterministic splits by declaration: every hole of one theorem falls in the same split (no leakage), and
 * the same seed and workspace always give the same assignment. A seeded hash of (file, declaration) gives
 * each declaration its split; on a small workspace the hash alone can miss 80/10/10 by several points (a
 * few large declarations decide it), so the assignment is then balanced by moving the fewest declarations
 * that bring each split's share of tasks closest to its target that declaration granularity allows.
 */
import * as crypto from "node:crypto";

/** SHA-256 in hex: the one-shot `crypto.hash` where Node has it (20.12+), a third of a hash object's cost. */
const sha256Hex: (text: string) => string =
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (text) =>
        (crypto as unknown as { hash(a: string, d: string, e: string): string }).hash("sha256", text, "hex")
    : (text) => crypto.createHash("sha256").update(text).digest("hex");

/** SHA-256 as bytes, one-shot where Node has it (see `sha256Hex`). */
const sha256Bytes: (text: string) => Buffer =
  typeof (crypto as { hash?: unknown }).hash === "function"
    ? (text) =>
        (crypto as unknown as { hash(a: string, d: string, e: string): Buffer }).hash(
          "sha256",
          text,
          "buffer",
        )
    : (text) => crypto.createHash("sha256").update(text).digest();

export type Split = "train" | "validation" | "test";

export const SPLITS: readonly Split[] = ["train", "validation", "test"];

export const SPLIT_FRACTIONS = { train: 0.8, validation: 0.1, test: 0.1 } as const;

/** The target share of tasks per split (each in [0, 1], summing to 1). */
export type SplitFractions = Readonly<Record<Split, number>>;

/** Why `fractions` cannot be split targets, or undefined when they can. */
export function splitFractionsProblem(fractions: SplitFractions): string | undefined {
  const values = SPLITS.map((s) => fractions[s]);
  if (values.some((v) => !Number.isFinite(v) || v < 0 || v > 1))
    return `split fractions must be numbers in [0, 1]: ${SPLITS.map((s) => `${s} ${fractions[s]}`).join(", ")}`;
  const sum = values.reduce((a, b) => a + b, 0);
  if (Math.abs(sum - 1) > 1e-9) return `split fractions must sum to 1 (they sum to ${sum})`;
  if (fractions.train <= 0) return "the training split's fraction must be above 0";
  return undefined;
}

/** A number in [0, 1) from the seed and the declaration's key, uniform over keys. */
export function unitHash(seed: number, key: string): number {
  // The digest's first four bytes as a big-endian number.
  return parseInt(sha256Hex(`${seed}\0${key}`).slice(0, 8), 16) / 2 ** 32;
}

/** The split a hash in [0, 1) gives at the target fractions. */
export function hashSplit(u: number, fractions: SplitFractions = SPLIT_FRACTIONS): Split {
  if (u < fractions.train) return "train";
  if (u < fractions.train + fractions.validation) return "validation";
  return "test";
}

/** The hash split of one declaration (before balancing). `declKey` is unique within its file. */
export function splitOf(seed: number, file: string, declKey: string): Split {
  return hashSplit(unitHash(seed, `${file}\0${declKey}`));
}

/** The key `assignSplits` takes for a declaration. */
export function declarationKey(file: string, declKey: string): string {
  return `${file}\0${declKey}`;
}

/**
 * Splits for declarations with the given task counts (keys from `declarationKey`). Starts from the hash
 * splits, then repeatedly makes the single move of one declaration that most reduces the total distance
 * of the splits' task counts from their targets, until no move helps. Ties go to the declaration that
 * comes first in seeded-hash order, so the result depends only on the seed and the counts.
 */
export function assignSplits(seed: number, tasksPerDecl: ReadonlyMap<string, number>): Map<string, Split> {
  const assignment = new Map<string, Split>();
  const order = new Map<string, number>();
  const count: Record<Split, number> = { train: 0, validation: 0, test: 0 };
  let total = 0;
  for (const [key, n] of tasksPerDecl) {
    const u = unitHash(seed, key);
    order.set(key, u);
    const split = hashSplit(u);
    assignment.set(key, split);
    count[split] += n;
    total += n;
  }
  // Per split: task count → declarations with that count, in seeded-hash order.
  const buckets: Record<Split, Map<number, string[]>> = {
    train: new Map(),
    validation: new Map(),
    test: new Map(),
  };
  const sorted = [...order].sort((a, b) => a[1] - b[1]).map(([key]) => key);
  for (const key of sorted) {
    const n = tasksPerDecl.get(key)!;
    if (n <= 0) continue;
    const bucket = buckets[assignment.get(key)!];
    (bucket.get(n) ?? bucket.set(n, []).get(n)!).push(key);
  }
  const excess = (s: Split) => count[s] - SPLIT_FRACTIONS[s] * total;
  for (let moves = 0; moves < 1_000_000; moves++) {
    let best: { from: Split; to: Split; n: number; gain: number } | undefined;
    for (const from of SPLITS) {
      const e1 = excess(from);
      if (e1 <= 0) continue;
      for (const to of SPLITS) {
        const e2 = excess(to);
        if (to === from || e2 >= 0) continue;
        for (const n of buckets[from].keys()) {
          const gain = Math.abs(e1) + Math.abs(e2) - Math.abs(e1 - n) - Math.abs(e2 + n);
          if (
            gain > 1e-9 &&
            (!best || gain > best.gain + 1e-9 || (Math.abs(gain - best.gain) <= 1e-9 && n < best.n))
          )
            best = { from, to, n, gain };
        }
      }
    }
    if (!best) break;
    const list = buckets[best.from].get(best.n)!;
    const key = list.shift()!;
    if (list.length === 0) buckets[best.from].delete(best.n);
    const target = buckets[best.to];
    (target.get(best.n) ?? target.set(best.n, []).get(best.n)!).push(key);
    target.get(best.n)!.sort((a, b) => order.get(a)! - order.get(b)!);
    assignment.set(key, best.to);
    count[best.from] -= best.n;
    count[best.to] += best.n;
  }
  return assignment;
}

/** A stable id for a hole: the same hole in the same file text always gets the same id. */
export function holeId(
  file: string,
  declKey: string,
  kind: string,
  start: number,
  end: number,
  middle: string,
): string {
  return sha256Hex(holeIdInput(file, declKey, kind, start, end, middle)).slice(0, 16);
}

/** The text a hole's id hashes: the task id contract (a change renames every task of every dataset). */
function holeIdInput(
  file: string,
  declKey: string,
  kind: string,
  start: number,
  end: number,
  middle: string,
): string {
  return `${file}\0${declKey}\0${kind}\0${start}:${end}\0${middle}`;
}

/**
 * `holeId` as the two 32-bit halves of its 16 hex digits (for taskSketches.ts), without writing them out:
 * `idOfHalves(...holeIdHalves(…))` is `holeId(…)`.
 */
export function holeIdHalves(
  file: string,
  declKey: string,
  kind: string,
  start: number,
  end: number,
  middle: string,
): [number, number] {
  const digest = sha256Bytes(holeIdInput(file, declKey, kind, start, end, middle));
  return [digest.readInt32BE(0), digest.readInt32BE(4)];
}
