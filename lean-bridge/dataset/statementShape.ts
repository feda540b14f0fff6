/**
 * A declaration's statement shape: its statement with every bound name replaced by `_` and every numeral by `#`,
 * and its binders reduced to the multiset of their types. Two instances of one family (other names, constants,
 * binder grouping, hypothesis order) have one shape; a held-out family tests generalisation only if its shapes
 * occur nowhere in training, which `familyShapeOverlap` checks on an exported dataset.
 *
 * This reads the statement's text with a small tokenizer (identifiers, numerals, brackets, everything else one
 * character): enough for statements written the way a family is, not a parser of Lean.
 */

const KEYWORDS = new Set(["theorem", "lemma", "example", "def", "abbrev", "instance", "opaque", "axiom"]);
const OPEN: Record<string, string> = { "(": ")", "{": "}", "[": "]", "⦃": "⦄" };

function tokens(text: string): string[] {
  return text.match(/[\p{L}_][\p{L}\p{N}_'.!?₀-₉]*|\d+|\S/gu) ?? [];
}

/** Index just after the bracket that closes the one at `start`, or the end of `ts`. */
function closing(ts: readonly string[], start: number): number {
  let depth = 0;
  for (let i = start; i < ts.length; i++) {
    if (ts[i]! in OPEN) depth++;
    else if (Object.values(OPEN).includes(ts[i]!)) {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return ts.length;
}

/** The shape of `statement` (`theorem name binders : type`, as contexts.jsonl writes it). */
export function statementShape(statement: string): string {
  const ts = tokens(statement);
  let i = 0;
  if (KEYWORDS.has(ts[0] ?? "")) {
    i = 1;
    if (ts[0] !== "example" && ts[1] !== undefined && /^[\p{L}_]/u.test(ts[1])) i = 2;
  }
  const bound = new Set<string>();
  const binderTypes: string[][] = [];
  while (i < ts.length && ts[i]! in OPEN) {
    const end = closing(ts, i);
    const inner = ts.slice(i + 1, end - 1);
    const colon = inner.indexOf(":");
    if (colon < 0) binderTypes.push(inner);
    else {
      const names = inner.slice(0, colon);
      for (const n of names) bound.add(n);
      for (let k = 0; k < Math.max(1, names.length); k++) binderTypes.push(inner.slice(colon + 1));
    }
    i = end;
  }
  if (ts[i] === ":") i++;
  // Names bound inside the type (`∃ x, …`, `∀ y : Nat, …`, `fun z => …`) are bound names too.
  for (let k = i; k < ts.length; k++)
    if (["∃", "∀", "fun", "λ"].includes(ts[k]!))
      for (let j = k + 1; j < ts.length && /^[\p{L}_]/u.test(ts[j]!); j++) bound.add(ts[j]!);
  const norm = (part: readonly string[]) =>
    part.map((t) => (bound.has(t) ? "_" : /^\d+$/.test(t) ? "#" : t)).join(" ");
  return `${norm(ts.slice(i))} ⊣ ${binderTypes.map(norm).sort().join(" , ")}`;
}

export interface ShapeTask {
  split: string;
  heldOut?: string | null;
  context: number;
  file: string;
}

export interface FamilyShapeOverlap {
  /** Declarations of held-out families (validation and test). */
  heldOutFamilyDeclarations: number;
  /** How many of them have a statement shape that some training declaration has: 0 for a clean split. */
  familyShapesInTraining: number;
  /** Declarations of held-out instances, and how many share a shape with training (expected: most). */
  heldOutInstanceDeclarations: number;
  instanceShapesInTraining: number;
  /** Up to five held-out-family statements whose shape training has, for the report. */
  examples: string[];
}

/** Whether held-out families' statement shapes occur in training, over an exported dataset's rows. */
export function familyShapeOverlap(
  tasks: readonly ShapeTask[],
  statements: readonly string[],
  scored: (file: string) => boolean = () => true,
): FamilyShapeOverlap {
  const training = new Set<string>();
  const family = new Set<number>();
  const instance = new Set<number>();
  for (const t of tasks) {
    if (!scored(t.file)) continue;
    if (t.split === "train") training.add(statementShape(statements[t.context] ?? ""));
    else if (t.heldOut === "family") family.add(t.context);
    else instance.add(t.context);
  }
  const inTraining = (c: number) => training.has(statementShape(statements[c] ?? ""));
  const overlapping = [...family].filter(inTraining);
  return {
    heldOutFamilyDeclarations: family.size,
    familyShapesInTraining: overlapping.length,
    heldOutInstanceDeclarations: instance.size,
    instanceShapesInTraining: [...instance].filter(inTraining).length,
    examples: overlapping.slice(0, 5).map((c) => statements[c] ?? ""),
  };
}
