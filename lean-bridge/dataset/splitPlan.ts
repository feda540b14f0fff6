/**
 * Which split each declaration's tasks go to, as the field measures generalisation (LeanDojo's random and
 * novel-premises splits): held-out *instances* (declarations never trained on, of families training has) and
 * held-out *families* (families training never sees), both by declaration.
 *
 * A declaration's family is its file and the named `namespace`s and `section`s around it
 * (`FimExamples/Arith.lean#FimExamples.Arith.AddLeAdd`; a file without named scopes is one family). The
 * example workspace writes one `section` per family; in any workspace it groups what was written together.
 *
 * Split modes (`--split`):
 * - `family` (the default): about a third of each held-out split's share of tasks is whole families (chosen by a
 *   seeded hash among families of at least five declarations, while at least five families exist and the
 *   families held out keep at most half of any hole kind's tasks); the rest are declarations of families that
 *   keep at least one declaration in training. Held-out tasks say which (`heldOut`: "instance" | "family").
 * - `declaration`: every declaration by itself (no family held out on purpose).
 * - `dedup`: as `declaration`, then writeTasks.ts drops training tasks whose middle a held-out task has.
 *
 * In every mode the declarations not held out with their family start from a seeded hash split (splitOf), then
 * are balanced by moving single declarations while that brings the splits' task counts, overall and per hole
 * kind, closer to 80/10/10: so every kind keeps about its share in training, and a kind that only a few
 * declarations have still keeps one of them in training (a workspace whose `block` holes all sat in held-out
 * declarations trained on none). The result depends only on the seed and the tasks.
 */
import { SPLITS, SPLIT_FRACTIONS, hashSplit, unitHash, type Split } from "./split";

export type SplitMode = "family" | "declaration" | "dedup";
export const SPLIT_MODES: readonly SplitMode[] = ["family", "declaration", "dedup"];
export const DEFAULT_SPLIT_MODE: SplitMode = "family";

/**
 * The share of each held-out split's tasks that `family` mode takes as whole families: a third, so that most
 * held-out tasks are instances (what a prover of a project meets most: new statements like those it has).
 */
export const FAMILY_SHARE_OF_HELD_OUT = 1 / 3;
/** Fewer families than this, and `family` mode holds none out whole (each would be a large part of the data). */
export const MIN_FAMILIES_TO_HOLD_OUT = 5;
/** A family is held out whole only with at least this many declarations with tasks: fewer are no family. */
export const MIN_FAMILY_DECLARATIONS = 5;
/** A family is held out whole only while the held-out families keep at most this share of any kind's tasks. */
const MAX_KIND_SHARE_IN_HELD_OUT_FAMILIES = 0.5;
/** How much more the split shares of all tasks weigh in balancing than those of each kind. */
const TOTAL_WEIGHT = 3;

export type HeldOut = "instance" | "family";

/** The family of a declaration: its file and the named namespaces and sections it sits in (`scope` of context.ts). */
export function familyOf(file: string, scope: readonly string[]): string {
  const names: string[] = [];
  for (const command of scope) {
    const m = /^(?:namespace|section)\s+([^\s]+)/.exec(command);
    if (m) names.push(m[1]!);
  }
  return `${file}#${names.join(".")}`;
}

/** One declaration's tasks, by kind (in the order of the plan's `kinds`). */
export interface DeclarationTasks {
  /** `declarationKey(file, declKey)`: unique, and what the seeded hash reads. */
  key: string;
  family: string;
  byKind: number[];
}

export interface SplitReport {
  mode: SplitMode;
  /** How a family is known (the documented rule). */
  familyRule: string;
  families: {
    total: number;
    /** Families held out whole, per held-out split (`family` mode). */
    heldOut: { validation: number; test: number };
    /** Their names (`file#Namespace.Section`). */
    heldOutNames: string[];
  };
  /** Hole kinds with tasks in the workspace but none in training (each also a warning). */
  kindsWithoutTraining: string[];
}

export interface SplitPlan {
  /** Each declaration's split, by its index in the input. */
  splits: Split[];
  /** For held-out declarations: whether training has their family ("instance") or not ("family"). */
  heldOut: (HeldOut | undefined)[];
  report: SplitReport;
}

export const FAMILY_RULE =
  "a declaration's family is its file and the named namespaces and sections around it (file#Namespace.Section)";

const HELD_OUT_SPLITS = ["validation", "test"] as const;

/** Per split, per kind (plus the total at index `kinds.length`): task counts. */
type Counts = Record<Split, number[]>;

function zeroCounts(width: number): Counts {
  return {
    train: new Array<number>(width).fill(0),
    validation: new Array(width).fill(0),
    test: new Array(width).fill(0),
  };
}

function sum(xs: readonly number[]): number {
  return xs.reduce((a, b) => a + b, 0);
}

/**
 * The splits of `decls` under `mode`, deterministic in the seed and the tasks (not their order).
 * `kinds` names the entries of each declaration's `byKind`.
 */
export function planSplits(
  seed: number,
  mode: SplitMode,
  kinds: readonly string[],
  decls: readonly DeclarationTasks[],
): SplitPlan {
  const width = kinds.length + 1; // per kind, then the total
  const vector = decls.map((d) => [...d.byKind, sum(d.byKind)]);
  const totals = new Array<number>(width).fill(0);
  for (const v of vector) v.forEach((n, k) => (totals[k]! += n));
  const order = decls.map((d) => unitHash(seed, d.key));

  // Families, in seeded-hash order.
  const familyIndex = new Map<string, number>();
  const familyDecls: number[][] = [];
  decls.forEach((d, i) => {
    let f = familyIndex.get(d.family);
    if (f === undefined) {
      f = familyDecls.length;
      familyIndex.set(d.family, f);
      familyDecls.push([]);
    }
    familyDecls[f]!.push(i);
  });
  const familyNames = [...familyIndex.keys()];
  const familyTasks = familyDecls.map((members) => {
    const v = new Array<number>(width).fill(0);
    for (const i of members) vector[i]!.forEach((n, k) => (v[k]! += n));
    return v;
  });

  // 1. Whole families held out (`family` mode).
  const familySplit = new Array<Split | undefined>(familyNames.length).fill(undefined);
  const held: Record<"validation" | "test", number[]> = {
    validation: new Array<number>(width).fill(0),
    test: new Array<number>(width).fill(0),
  };
  if (mode === "family" && familyNames.length >= MIN_FAMILIES_TO_HOLD_OUT) {
    const familyOrder = familyNames
      .map((name, f) => [f, unitHash(seed, `family\0${name}`)] as const)
      .sort((a, b) => a[1] - b[1])
      .map(([f]) => f);
    const target = (s: "validation" | "test") =>
      FAMILY_SHARE_OF_HELD_OUT * SPLIT_FRACTIONS[s] * totals[width - 1]!;
    for (const f of familyOrder) {
      const v = familyTasks[f]!;
      const n = v[width - 1]!;
      if (familyDecls[f]!.filter((i) => vector[i]![width - 1]! > 0).length < MIN_FAMILY_DECLARATIONS)
        continue;
      // The held-out split this family helps most: the one furthest below its target that it does not overshoot by more.
      const split = [...HELD_OUT_SPLITS]
        .filter(
          (s) => Math.abs(held[s][width - 1]! + n - target(s)) < Math.abs(held[s][width - 1]! - target(s)),
        )
        .sort((a, b) => target(b) - held[b][width - 1]! - (target(a) - held[a][width - 1]!))[0];
      if (!split) continue;
      const heldOfKind = (k: number) => held.validation[k]! + held.test[k]! + v[k]!;
      if (kinds.some((_, k) => v[k]! > 0 && heldOfKind(k) > MAX_KIND_SHARE_IN_HELD_OUT_FAMILIES * totals[k]!))
        continue;
      // Training keeps at least one family.
      if (familySplit.filter((s) => s === undefined).length <= 1) break;
      familySplit[f] = split;
      v.forEach((x, k) => (held[split][k]! += x));
    }
  }

  // 2. Every other declaration: the hash split, then the balancing moves.
  const splits = decls.map((d, i): Split => {
    const f = familyIndex.get(d.family)!;
    return familySplit[f] ?? hashSplit(order[i]!);
  });
  const movable = decls.map((d) => familySplit[familyIndex.get(d.family)!] === undefined);
  const counts = zeroCounts(width);
  decls.forEach((_, i) => vector[i]!.forEach((n, k) => (counts[splits[i]!][k]! += n)));
  const targets: Counts = {
    train: totals.map((t) => SPLIT_FRACTIONS.train * t),
    validation: totals.map((t) => SPLIT_FRACTIONS.validation * t),
    test: totals.map((t) => SPLIT_FRACTIONS.test * t),
  };
  const trainOf = familyDecls.map((members) => members.filter((i) => splits[i] === "train").length);
  if (mode === "family") {
    // A family not held out whole keeps a declaration in training: its held-out ones are then instances.
    familyDecls.forEach((members, f) => {
      if (familySplit[f] !== undefined || trainOf[f]! > 0) return;
      const first = members
        .filter((i) => vector[i]![width - 1]! > 0)
        .sort((a, b) => order[a]! - order[b]!)[0];
      if (first === undefined) return;
      vector[first]!.forEach((n, k) => {
        counts[splits[first]!][k]! -= n;
        counts.train[k]! += n;
      });
      splits[first] = "train";
      trainOf[f] = 1;
    });
  }
  const canLeaveTrain = (i: number) => mode !== "family" || trainOf[familyIndex.get(decls[i]!.family)!]! > 1;
  balance(splits, vector, counts, targets, order, movable, canLeaveTrain, (i, from, to) => {
    const f = familyIndex.get(decls[i]!.family)!;
    if (from === "train") trainOf[f]!--;
    if (to === "train") trainOf[f]!++;
  });

  // 3. A kind a few declarations have, all of them held out: one of them (the smallest) back to training.
  const kindsWithoutTraining: string[] = [];
  kinds.forEach((kind, k) => {
    if (totals[k] === 0 || counts.train[k]! > 0) return;
    const candidates = decls
      .map((_, i) => i)
      .filter((i) => movable[i] && vector[i]![k]! > 0)
      .sort((a, b) => vector[a]![width - 1]! - vector[b]![width - 1]! || order[a]! - order[b]!);
    const i = candidates[0];
    if (i === undefined) {
      kindsWithoutTraining.push(kind);
      return;
    }
    vector[i]!.forEach((n, j) => {
      counts[splits[i]!][j]! -= n;
      counts.train[j]! += n;
    });
    trainOf[familyIndex.get(decls[i]!.family)!]!++;
    splits[i] = "train";
  });

  const familyInTraining = familyDecls.map((members) => members.some((i) => splits[i] === "train"));
  const heldOut = decls.map((d, i): HeldOut | undefined =>
    splits[i] === "train" ? undefined : familyInTraining[familyIndex.get(d.family)!] ? "instance" : "family",
  );
  const heldOutNames = familyNames.filter((_, f) => familySplit[f] !== undefined).sort();
  return {
    splits,
    heldOut,
    report: {
      mode,
      familyRule: FAMILY_RULE,
      families: {
        total: familyNames.length,
        heldOut: {
          validation: familySplit.filter((s) => s === "validation").length,
          test: familySplit.filter((s) => s === "test").length,
        },
        heldOutNames,
      },
      kindsWithoutTraining,
    },
  };
}

/**
 * Moves single declarations between splits while one move lowers the distance of the task counts from their
 * targets, overall and per kind (the sum of absolute differences, the overall one weighing TOTAL_WEIGHT times
 * as much: the requested shares come first, each kind's share second). Declarations with the same counts per kind
 * are interchangeable for the distance, so moves are looked for per (split, counts) bucket, and the one taken
 * is the first of its bucket in seeded-hash order. Ties go to the smaller declaration.
 */
function balance(
  splits: Split[],
  vector: readonly number[][],
  counts: Counts,
  targets: Counts,
  order: readonly number[],
  movable: readonly boolean[],
  canLeaveTrain: (i: number) => boolean,
  moved: (i: number, from: Split, to: Split) => void,
): void {
  const width = counts.train.length;
  const buckets: Record<Split, Map<string, number[]>> = {
    train: new Map(),
    validation: new Map(),
    test: new Map(),
  };
  const signature = (i: number) => vector[i]!.join(",");
  const byOrder = splits.map((_, i) => i).sort((a, b) => order[a]! - order[b]! || a - b);
  for (const i of byOrder) {
    if (!movable[i] || vector[i]![width - 1] === 0) continue;
    const bucket = buckets[splits[i]!];
    const key = signature(i);
    (bucket.get(key) ?? bucket.set(key, []).get(key)!).push(i);
  }
  // The change in distance when `v` leaves `from` for `to`; the total weighs more than any kind.
  const gain = (v: readonly number[], from: Split, to: Split) => {
    let g = 0;
    for (let k = 0; k < width; k++) {
      const n = v[k]!;
      if (n === 0) continue;
      const a = counts[from][k]! - targets[from][k]!;
      const b = counts[to][k]! - targets[to][k]!;
      const weight = k === width - 1 ? TOTAL_WEIGHT : 1;
      g += weight * (Math.abs(a) + Math.abs(b) - Math.abs(a - n) - Math.abs(b + n));
    }
    return g;
  };
  for (let moves = 0; moves < 1_000_000; moves++) {
    let best: { i: number; from: Split; to: Split; gain: number; size: number; at: number } | undefined;
    for (const from of SPLITS) {
      for (const [, members] of buckets[from]) {
        const i = from === "train" ? members.find(canLeaveTrain) : members[0];
        if (i === undefined) continue;
        const v = vector[i]!;
        for (const to of SPLITS) {
          if (to === from) continue;
          const g = gain(v, from, to);
          if (g <= 1e-9) continue;
          const size = v[width - 1]!;
          if (
            !best ||
            g > best.gain + 1e-9 ||
            (Math.abs(g - best.gain) <= 1e-9 &&
              (size < best.size || (size === best.size && order[i]! < best.at)))
          )
            best = { i, from, to, gain: g, size, at: order[i]! };
        }
      }
    }
    if (!best) break;
    const { i, from, to } = best;
    const key = signature(i);
    const list = buckets[from].get(key)!;
    list.splice(list.indexOf(i), 1);
    if (list.length === 0) buckets[from].delete(key);
    const target = buckets[to].get(key) ?? buckets[to].set(key, []).get(key)!;
    target.push(i);
    target.sort((a, b) => order[a]! - order[b]!);
    vector[i]!.forEach((n, k) => {
      counts[from][k]! -= n;
      counts[to][k]! += n;
    });
    splits[i] = to;
    moved(i, from, to);
  }
}

/** Tasks per declaration and kind, counted from the tasks' heads (`decl` is the declaration's index). */
export function declarationTasks(
  heads: Iterable<{ decl: number; kind: string }>,
  declKeys: readonly string[],
  families: readonly string[],
  kinds: readonly string[],
): DeclarationTasks[] {
  const kindIndex = new Map(kinds.map((k, i) => [k, i]));
  const out = declKeys.map((key, i) => ({
    key,
    family: families[i] ?? key.split("\0")[0]!,
    byKind: new Array<number>(kinds.length).fill(0),
  }));
  for (const h of heads) {
    const k = kindIndex.get(h.kind);
    if (k !== undefined) out[h.decl]!.byKind[k]!++;
  }
  return out;
}

/** A warning for each kind asked for that has tasks but none in training (a model could not learn it). */
export function splitWarnings(
  byKindAndSplit: Record<string, Record<string, number>>,
  kinds: readonly string[],
): string[] {
  return kinds.flatMap((kind) => {
    const row = byKindAndSplit[kind] ?? {};
    const heldOut = (row.validation ?? 0) + (row.test ?? 0);
    return heldOut > 0 && (row.train ?? 0) === 0
      ? [
          `no training task of kind ${kind} (${heldOut} held out): a model trained on this dataset never sees one`,
        ]
      : [];
  });
}
