/**
 * A generated workspace shaped like Mathlib, for the export benchmark (bench/mineExport.ts): files of a few
 * hundred to several thousand lines under a header of imports, a module docstring, `open`s, `namespace`s and
 * `variable`s; declarations with doc comments, term proofs beside tactic proofs, and tactic proofs from one
 * line to a hundred and more (nested `have … := by` blocks, bullets, `calc`), over a vocabulary of lemma names
 * large enough that middles vary as they do in a real library. Seeded: the same workspace every run.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mulberry32 } from "./corpus";

type Rand = () => number;

const pick = <T>(rand: Rand, items: readonly T[]): T => items[Math.floor(rand() * items.length)]!;
const between = (rand: Rand, lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

const AREAS = [
  "Algebra",
  "Analysis",
  "Topology",
  "Order",
  "Data",
  "RingTheory",
  "NumberTheory",
  "Combinatorics",
];
const TOPICS = [
  "Group",
  "Ring",
  "Field",
  "Module",
  "Finset",
  "Nat",
  "Int",
  "Real",
  "Filter",
  "Set",
  "List",
  "Polynomial",
];
const LEAVES = [
  "Basic",
  "Defs",
  "Lemmas",
  "Order",
  "Prod",
  "Pi",
  "Hom",
  "Card",
  "Sum",
  "Pow",
  "Dvd",
  "Prime",
];
const STEMS = [
  "mul",
  "add",
  "sub",
  "div",
  "pow",
  "neg",
  "inv",
  "sum",
  "prod",
  "card",
  "dvd",
  "le",
  "lt",
  "map",
  "comp",
];
const SUFFIXES = [
  "comm",
  "assoc",
  "left_comm",
  "zero",
  "one",
  "self",
  "cancel",
  "mono",
  "pos",
  "nonneg",
  "eq_iff",
  "le_iff",
  "inj",
  "congr",
  "succ",
];
const VARS = ["a", "b", "c", "x", "y", "n", "m", "k", "s", "t", "f", "g"];

function lemma(rand: Rand): string {
  const name = `${pick(rand, STEMS)}_${pick(rand, STEMS)}_${pick(rand, SUFFIXES)}`;
  return rand() < 0.4 ? `${pick(rand, TOPICS)}.${name}` : name;
}

function lemmas(rand: Rand, n: number): string {
  return Array.from({ length: n }, () => (rand() < 0.15 ? "← " : "") + lemma(rand)).join(", ");
}

function term(rand: Rand): string {
  const v = () => pick(rand, VARS);
  const op = () => pick(rand, [" + ", " * ", " - ", " ^ 2 + ", " • "]);
  return rand() < 0.5 ? `${v()}${op()}${v()}` : `${v()}${op()}(${v()}${op()}${v()})`;
}

function prop(rand: Rand): string {
  return `${term(rand)} ${pick(rand, ["=", "≤", "<", "∣"])} ${term(rand)}`;
}

/** One tactic line (no nested block), at `indent`. */
function tacticLine(rand: Rand, indent: string): string {
  const h = `h${between(rand, 0, 9)}`;
  switch (between(rand, 0, 15)) {
    case 0:
      return `${indent}simp [${lemmas(rand, between(rand, 1, 4))}]`;
    case 1:
      return `${indent}simp only [${lemmas(rand, between(rand, 2, 6))}] at ${h} ⊢`;
    case 2:
      return `${indent}rw [${lemmas(rand, between(rand, 1, 5))}]`;
    case 3:
      return `${indent}exact ${lemma(rand)} (${lemma(rand)} ${h}) ${pick(rand, VARS)}`;
    case 4:
      return `${indent}apply ${lemma(rand)}`;
    case 5:
      return `${indent}intro ${pick(rand, VARS)} h${pick(rand, VARS)}`;
    case 6:
      return `${indent}obtain ⟨${pick(rand, VARS)}, h${pick(rand, VARS)}, rfl⟩ := ${h}`;
    case 7:
      return `${indent}linarith [${lemma(rand)} ${pick(rand, VARS)}, sq_nonneg (${term(rand)})]`;
    case 8:
      return `${indent}nlinarith [mul_pos ${h} h${between(rand, 0, 9)}, ${lemma(rand)}]`;
    case 9:
      return `${indent}${pick(rand, ["ring", "positivity", "omega", "norm_num", "field_simp", "gcongr", "aesop"])}`;
    case 10:
      return `${indent}refine ${lemma(rand)} ?_ (fun ${pick(rand, VARS)} h${pick(rand, VARS)} => ?_)`;
    case 11:
      return `${indent}filter_upwards [${lemma(rand)} ${h}] with ${pick(rand, VARS)} h${pick(rand, VARS)}`;
    case 12:
      return `${indent}-- reduce to the case \`${term(rand)}\`\n${indent}rcases ${h} with ${h}l | ${h}r`;
    case 13:
      return `${indent}norm_num [${lemmas(rand, between(rand, 1, 3))}] at ${h}`;
    case 14:
      return `${indent}have ${h}' : ${prop(rand)} := ${lemma(rand)} ${h}`;
    default:
      return `${indent}exact_mod_cast ${lemma(rand)} ${pick(rand, VARS)}`;
  }
}

/** A tactic block of about `size` lines at `indent`, with nested blocks where size allows. */
function block(rand: Rand, indent: string, size: number, depth = 0): string[] {
  const lines: string[] = [];
  while (lines.length < size) {
    const left = size - lines.length;
    const r = rand();
    if (depth < 3 && left >= 4 && r < 0.3) {
      lines.push(`${indent}have h${between(rand, 0, 9)} : ${prop(rand)} := by`);
      lines.push(...block(rand, indent + "  ", between(rand, 1, Math.min(left - 1, 12)), depth + 1));
    } else if (depth < 3 && left >= 5 && r < 0.45) {
      lines.push(`${indent}${pick(rand, ["constructor", "refine ⟨?_, ?_⟩", "rcases h with h | h"])}`);
      const half = Math.max(1, Math.floor((left - 1) / 2) - 1);
      for (let b = 0; b < 2; b++) {
        const body = block(rand, indent + "  ", between(rand, 1, Math.min(half, 10)), depth + 1);
        lines.push(`${indent}· ${body[0]!.trimStart()}`, ...body.slice(1));
      }
    } else if (left >= 3 && r < 0.5) {
      lines.push(`${indent}calc ${term(rand)} = ${term(rand)} := by rw [${lemma(rand)}]`);
      lines.push(`${indent}  _ ≤ ${term(rand)} := ${lemma(rand)} _`);
    } else lines.push(...tacticLine(rand, indent).split("\n"));
  }
  return lines;
}

/** Proof length in lines: mostly short, some medium, a few long (Mathlib's spread). */
function proofLength(rand: Rand): number {
  const r = rand();
  if (r < 0.6) return between(rand, 1, 3);
  if (r < 0.92) return between(rand, 4, 12);
  if (r < 0.99) return between(rand, 13, 40);
  return between(rand, 41, 150);
}

function declaration(rand: Rand, k: number): string {
  const name = `${pick(rand, STEMS)}_${pick(rand, SUFFIXES)}_${k}`;
  const binders = Array.from({ length: between(rand, 1, 4) }, () =>
    pick(rand, [
      `{${pick(rand, VARS)} ${pick(rand, VARS)} : R}`,
      `(h${between(rand, 0, 9)} : ${prop(rand)})`,
      `[Fact (1 < ${pick(rand, VARS)})]`,
    ]),
  ).join(" ");
  const docLines = Array.from(
    { length: between(rand, 0, 3) },
    () => `\n${prop(rand)} whenever ${prop(rand)}.`,
  );
  const doc =
    rand() < 0.6
      ? `/-- The ${pick(rand, TOPICS).toLowerCase()} lemma \`${name}\`: ${prop(rand)}.${docLines.join("")} -/\n`
      : "";
  const attr = rand() < 0.2 ? `@[${pick(rand, ["simp", "simp, norm_cast", "gcongr", "to_additive"])}]\n` : "";
  const r = rand();
  if (r < 0.15) return `${doc}def ${name} ${binders} : R :=\n  ${term(rand)}\n`;
  if (r < 0.45)
    return `${doc}${attr}theorem ${name} ${binders} :\n    ${prop(rand)} :=\n  ${lemma(rand)} (${lemma(rand)} _)\n`;
  if (r < 0.6)
    return `${doc}${attr}theorem ${name} ${binders} : ${prop(rand)} := by simp [${lemmas(rand, 2)}]\n`;
  const statement =
    rand() < 0.3 ? `${binders}\n    (hx : ${prop(rand)}) :\n    ${prop(rand)}` : `${binders} : ${prop(rand)}`;
  return `${doc}${attr}theorem ${name} ${statement} := by\n${block(rand, "  ", proofLength(rand)).join("\n")}\n`;
}

function fileText(rand: Rand, targetLines: number, index: number): string {
  const imports = Array.from(
    { length: between(rand, 3, 15) },
    () => `import Mathlib.${pick(rand, AREAS)}.${pick(rand, TOPICS)}.${pick(rand, LEAVES)}`,
  );
  const parts = [
    [...new Set(imports)].join("\n"),
    "",
    `/-!\n# ${pick(rand, TOPICS)} lemmas, part ${index}\n\n${Array.from({ length: between(rand, 2, 8) }, () => `Facts about ${term(rand)} and ${prop(rand)}.`).join("\n")}\n-/`,
    "",
    `open ${Array.from({ length: between(rand, 1, 3) }, () => pick(rand, TOPICS)).join(" ")}`,
    rand() < 0.4 ? "open scoped BigOperators Topology" : "",
    "",
    `namespace ${pick(rand, TOPICS)}${index}`,
    "",
    `variable {R : Type*} [CommRing R] {M : Type*} [AddCommGroup M] [Module R M]`,
    "",
  ];
  let lines = parts.join("\n").split("\n").length;
  let k = 0;
  let section = false;
  while (lines < targetLines) {
    if (rand() < 0.03) {
      parts.push(section ? "end Part\n" : "section Part\n\nvariable (p : ℕ) [Fact p.Prime]\n");
      section = !section;
    }
    const decl = declaration(rand, k++);
    parts.push(decl);
    lines += decl.split("\n").length;
  }
  if (section) parts.push("end Part\n");
  parts.push(`end ${parts[7]!.slice("namespace ".length)}\n`);
  return parts.join("\n");
}

/** Writes about `megabytes` of generated Lean under `dir`; returns the bytes and files written. */
export function generateMathlibLike(
  dir: string,
  megabytes: number,
  seed = 7,
): { bytes: number; files: number } {
  const rand = mulberry32(seed);
  let bytes = 0;
  let files = 0;
  while (bytes < megabytes * 1024 * 1024) {
    // Most files a few hundred lines, a third long (up to 6,000 lines, Mathlib's longest files).
    const lines = rand() < 0.67 ? between(rand, 150, 1200) : between(rand, 1200, 6000);
    const text = fileText(rand, lines, files);
    const sub = join(dir, "Gen", pick(rand, AREAS));
    mkdirSync(sub, { recursive: true });
    writeFileSync(join(sub, `File${files}.lean`), text);
    bytes += Buffer.byteLength(text, "utf8");
    files++;
  }
  return { bytes, files };
}
