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
import { SPLITS, SPLIT_FRACTIONS, hashSplit, unitHash, type Split, type SplitFractions } from "./split";

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

/** Families already made, per scope array (context.ts shares one array per scope state) and file. */
const familyCache = new WeakMap<readonly string[], { file: string; family: string }>();

/**
 * The family of a declaration: its file and the named namespaces and sections it sits in (`scope` of
 * context.ts). Declarations of one scope share one string (a workspace has many declarations, few scopes).
 */
export function familyOf(file: string, scope: readonly string[]): string {
  const cached = familyCache.get(scope);
  if (cached?.file === file) return cached.family;
  const names: string[] = [];
  for (const command of scope) {
    const m = /^(?:namespace|section)\s+([^\s]+)/.exec(command);
    if (m) names.push(m[1]!);
  }
  const family = `${file}#${names.join(".")}`;
  familyCache.set(scope, { file, family });
  return family;
}

/**
 * The declarations to split, as columns (a workspace may have hundreds of thousands): each one's key, family and
 * task count per kind.
 */
export interface DeclarationTable {
  /** `declarationKey(file, declKey)`: unique, and what the seeded hash reads. */
  keys: readonly string[];
  families: readonly string[];
  /** Tasks of declaration i and kind k (the plan's `kinds`) at `i * kinds.length + k`. */
  counts: Int32Array;
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
const SPLIT_CODE: Record<Split, number> = { train: 0, validation: 1, test: 2 };

/** Task counts per split (by SPLIT_CODE) and kind, the total last. */
type Counts = Float64Array[];

/**
 * The splits of `table`'s declarations under `mode`, deterministic in the seed and the tasks (not their order).
 * `kinds` names the columns of `table.counts`; `fractions` are the target shares (default 80/10/10).
 */
export function planSplits(
  seed: number,
  mode: SplitMode,
  kinds: readonly string[],
  table: DeclarationTable,
  fractions: SplitFractions = SPLIT_FRACTIONS,
): SplitPlan {
  const n = table.keys.length;
  const kindCount = kinds.length;
  const width = kindCount + 1; // per kind, then the total
  const TOTAL = kindCount;
  // Each declaration's counts, its total last: vec[i * width + k].
  const vec = new Int32Array(n * width);
  const totals = new Float64Array(width);
  for (let i = 0; i < n; i++) {
    let all = 0;
    for (let k = 0; k < kindCount; k++) {
      const c = table.counts[i * kindCount + k]!;
      vec[i * width + k] = c;
      all += c;
    }
    vec[i * width + TOTAL] = all;
    for (let k = 0; k < width; k++) totals[k]! += vec[i * width + k]!;
  }
  const size = (i: number) => vec[i * width + TOTAL]!;
  const order = new Float64Array(n);
  for (let i = 0; i < n; i++) order[i] = unitHash(seed, table.keys[i]!);

  // Families, each with its declarations and tasks.
  const familyIndex = new Map<string, number>();
  const familyOfDecl = new Int32Array(n);
  const familyDecls: number[][] = [];
  for (let i = 0; i < n; i++) {
    const name = table.families[i]!;
    let f = familyIndex.get(name);
    if (f === undefined) {
      f = familyDecls.length;
      familyIndex.set(name, f);
      familyDecls.push([]);
    }
    familyOfDecl[i] = f;
    familyDecls[f]!.push(i);
  }
  const familyNames = [...familyIndex.keys()];
  const familyTasks = familyDecls.map((members) => {
    const v = new Float64Array(width);
    for (const i of members) for (let k = 0; k < width; k++) v[k]! += vec[i * width + k]!;
    return v;
  });

  // 1. Whole families held out (`family` mode), in seeded-hash order of their names.
  const familySplit = new Array<Split | undefined>(familyNames.length).fill(undefined);
  const held = { validation: new Float64Array(width), test: new Float64Array(width) };
  if (mode === "family" && familyNames.length >= MIN_FAMILIES_TO_HOLD_OUT) {
    const familyOrder = familyNames
      .map((name, f) => [f, unitHash(seed, `family\0${name}`)] as const)
      .sort((a, b) => a[1] - b[1])
      .map(([f]) => f);
    const target = (s: "validation" | "test") => FAMILY_SHARE_OF_HELD_OUT * fractions[s] * totals[TOTAL]!;
    let inTraining = familyNames.length;
    for (const f of familyOrder) {
      const v = familyTasks[f]!;
      const tasks = v[TOTAL]!;
      if (familyDecls[f]!.filter((i) => size(i) > 0).length < MIN_FAMILY_DECLARATIONS) continue;
      // The held-out split this family helps most: the one furthest below its target that it brings closer,
      // overshooting by a quarter of the target at most (instances stay the larger held-out set).
      const split = [...HELD_OUT_SPLITS]
        .filter((s) => {
          const now = held[s][TOTAL]!;
          return (
            Math.abs(now + tasks - target(s)) < Math.abs(now - target(s)) && now + tasks <= 1.25 * target(s)
          );
        })
        .sort((a, b) => target(b) - held[b][TOTAL]! - (target(a) - held[a][TOTAL]!))[0];
      if (!split) continue;
      const tooMuchOfAKind = kinds.some(
        (_, k) =>
          v[k]! > 0 &&
          held.validation[k]! + held.test[k]! + v[k]! > MAX_KIND_SHARE_IN_HELD_OUT_FAMILIES * totals[k]!,
      );
      if (tooMuchOfAKind) continue;
      if (inTraining <= 1) break; // Training keeps at least one family.
      familySplit[f] = split;
      inTraining--;
      for (let k = 0; k < width; k++) held[split][k]! += v[k]!;
    }
  }

  // 2. Every other declaration: the hash split at the shares the held-out families leave (the plain hash split
  // when none is held out), then the balancing moves.
  const all = totals[TOTAL]!;
  const rest = all - held.validation[TOTAL]! - held.test[TOTAL]!;
  const share = (s: "validation" | "test") =>
    rest > 0 ? Math.max(0, fractions[s] * all - held[s][TOTAL]!) / rest : fractions[s];
  const validationShare = share("validation");
  const testShare = share("test");
  const splits = new Uint8Array(n);
  const movable = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    const heldSplit = familySplit[familyOfDecl[i]!];
    const u = order[i]!;
    if (heldSplit) splits[i] = SPLIT_CODE[heldSplit];
    else {
      movable[i] = 1;
      splits[i] =
        rest === all
          ? SPLIT_CODE[hashSplit(u, fractions)]
          : u < 1 - validationShare - testShare
            ? 0
            : u < 1 - testShare
              ? 1
              : 2;
    }
  }
  const counts: Counts = [new Float64Array(width), new Float64Array(width), new Float64Array(width)];
  const moveTo = (i: number, to: number) => {
    for (let k = 0; k < width; k++) {
      counts[splits[i]!]![k]! -= vec[i * width + k]!;
      counts[to]![k]! += vec[i * width + k]!;
    }
    if (splits[i] === 0) trainOf[familyOfDecl[i]!]!--;
    if (to === 0) trainOf[familyOfDecl[i]!]!++;
    splits[i] = to;
  };
  for (let i = 0; i < n; i++) for (let k = 0; k < width; k++) counts[splits[i]!]![k]! += vec[i * width + k]!;
  const trainOf = new Int32Array(familyNames.length);
  for (let i = 0; i < n; i++) if (splits[i] === 0) trainOf[familyOfDecl[i]!]!++;
  if (mode === "family") {
    // A family not held out whole keeps a declaration in training: its held-out ones are then instances.
    familyDecls.forEach((members, f) => {
      if (familySplit[f] !== undefined || trainOf[f]! > 0) return;
      const first = members.filter((i) => size(i) > 0).sort((a, b) => order[a]! - order[b]!)[0];
      if (first !== undefined) moveTo(first, 0);
    });
  }
  const targets: Counts = SPLITS.map((s) => totals.map((t) => fractions[s] * t));
  const canLeaveTrain = (i: number) => mode !== "family" || trainOf[familyOfDecl[i]!]! > 1;
  balance(n, width, vec, splits, counts, targets, order, movable, canLeaveTrain, moveTo);

  // 3. A kind a few declarations have, all of them held out: one of them (the smallest) back to training.
  const kindsWithoutTraining: string[] = [];
  kinds.forEach((kind, k) => {
    if (totals[k] === 0 || counts[0]![k]! > 0) return;
    let best = -1;
    for (let i = 0; i < n; i++)
      if (movable[i] && vec[i * width + k]! > 0)
        if (best < 0 || size(i) < size(best) || (size(i) === size(best) && order[i]! < order[best]!))
          best = i;
    if (best < 0) kindsWithoutTraining.push(kind);
    else moveTo(best, 0);
  });

  const heldOut = new Array<HeldOut | undefined>(n);
  const result = new Array<Split>(n);
  for (let i = 0; i < n; i++) {
    result[i] = SPLITS[splits[i]!]!;
    if (splits[i] !== 0) heldOut[i] = trainOf[familyOfDecl[i]!]! > 0 ? "instance" : "family";
  }
  const heldOutNames = familyNames.filter((_, f) => familySplit[f] !== undefined).sort();
  return {
    splits: result,
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
 * as much: the requested shares come first, each kind's share second). Declarations with the same counts per
 * kind are interchangeable for the distance, so moves are looked for per (split, counts) bucket, and the one
 * taken is the first of its bucket in seeded-hash order. Ties go to the smaller declaration.
 */
function balance(
  n: number,
  width: number,
  vec: Int32Array,
  splits: Uint8Array,
  counts: Counts,
  targets: Counts,
  order: Float64Array,
  movable: Uint8Array,
  canLeaveTrain: (i: number) => boolean,
  moveTo: (i: number, to: number) => void,
): void {
  const TOTAL = width - 1;
  const buckets: Map<string, number[]>[] = [new Map(), new Map(), new Map()];
  const signature = (i: number) => vec.subarray(i * width, i * width + width).join(",");
  const byOrder = Array.from({ length: n }, (_, i) => i).sort((a, b) => order[a]! - order[b]! || a - b);
  for (const i of byOrder) {
    if (!movable[i] || vec[i * width + TOTAL] === 0) continue;
    const bucket = buckets[splits[i]!]!;
    const key = signature(i);
    (bucket.get(key) ?? bucket.set(key, []).get(key)!).push(i);
  }
  // The change in distance when declaration `i` leaves `from` for `to`; the total weighs more than any kind.
  const gain = (i: number, from: number, to: number) => {
    let g = 0;
    for (let k = 0; k < width; k++) {
      const c = vec[i * width + k]!;
      if (c === 0) continue;
      const a = counts[from]![k]! - targets[from]![k]!;
      const b = counts[to]![k]! - targets[to]![k]!;
      g += (k === TOTAL ? TOTAL_WEIGHT : 1) * (Math.abs(a) + Math.abs(b) - Math.abs(a - c) - Math.abs(b + c));
    }
    return g;
  };
  for (let moves = 0; moves < 1_000_000; moves++) {
    let best: { i: number; from: number; to: number; gain: number } | undefined;
    for (let from = 0; from < 3; from++) {
      for (const members of buckets[from]!.values()) {
        const i = from === 0 ? members.find(canLeaveTrain) : members[0];
        if (i === undefined) continue;
        for (let to = 0; to < 3; to++) {
          if (to === from) continue;
          const g = gain(i, from, to);
          if (g <= 1e-9) continue;
          const better =
            !best ||
            g > best.gain + 1e-9 ||
            (Math.abs(g - best.gain) <= 1e-9 &&
              (vec[i * width + TOTAL]! < vec[best.i * width + TOTAL]! ||
                (vec[i * width + TOTAL] === vec[best.i * width + TOTAL] && order[i]! < order[best.i]!)));
          if (better) best = { i, from, to, gain: g };
        }
      }
    }
    if (!best) break;
    const { i, from, to } = best;
    const key = signature(i);
    const list = buckets[from]!.get(key)!;
    list.splice(list.indexOf(i), 1);
    if (list.length === 0) buckets[from]!.delete(key);
    const target = buckets[to]!.get(key) ?? buckets[to]!.set(key, []).get(key)!;
    target.push(i);
    target.sort((a, b) => order[a]! - order[b]!);
    moveTo(i, to);
  }
}

/** The declarations' table, their task counts per kind read from the tasks' heads (`decl`: the declaration's index). */
export function declarationTable(
  heads: Iterable<{ decl: number; kind: string }>,
  keys: readonly string[],
  families: readonly string[],
  kinds: readonly string[],
): DeclarationTable {
  const kindIndex = new Map(kinds.map((k, i) => [k, i]));
  const counts = new Int32Array(keys.length * kinds.length);
  for (const h of heads) {
    const k = kindIndex.get(h.kind);
    if (k !== undefined) counts[h.decl * kinds.length + k]!++;
  }
  return { keys, families, counts };
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
