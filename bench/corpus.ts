/**
 * Generates realistic Lean source for mining benchmarks and property tests by recombining the example
 * workspace's declarations and the tricky-syntax fixture (comments, strings, calc, conv, match, bullets…),
 * renamed so that statements differ, with random comments and blank lines between them.
 */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseFile } from "../lean-bridge/lean/commands";
import { packageRoot } from "../lean-bridge/server/launch";

const ROOT = packageRoot(__filename);

/** A small seeded PRNG (mulberry32), so corpora are the same on every run. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

let pieces: string[] | undefined;

function declarationPieces(): string[] {
  if (pieces) return pieces;
  const sources = [
    ...readdirSync(join(ROOT, "lean-env", "FimExamples")).map((f) =>
      join(ROOT, "lean-env", "FimExamples", f),
    ),
    join(ROOT, "test", "fixtures", "mining", "tricky.lean"),
  ];
  pieces = [];
  for (const path of sources) {
    const text = readFileSync(path, "utf8");
    for (const c of parseFile(text).commands) if (c.declaration) pieces.push(text.slice(c.start, c.end));
  }
  return pieces;
}

const FILLERS = [
  "-- a remark about the next proof\n",
  "/- A block comment with `by` and := inside. /- nested -/ -/\n",
  "/-! ## Section header -/\n",
  "\n",
  "open Nat in\n",
  "section\nvariable (x : Nat)\nend\n",
];

export function generateCorpusFile(rand: () => number, declarations: number): string {
  const all = declarationPieces();
  const parts: string[] = [`namespace Gen${Math.floor(rand() * 1e6)}\n\n`];
  for (let k = 0; k < declarations; k++) {
    if (rand() < 0.3) parts.push(FILLERS[Math.floor(rand() * FILLERS.length)]!);
    const piece = all[Math.floor(rand() * all.length)]!;
    // Rename the declaration so that statements differ between copies.
    parts.push(
      piece.replace(
        /^((?:.|\n)*?\b(?:theorem|lemma|def|instance|abbrev)\s+)([^\s(:[{]+)/,
        (_m, head: string, name: string) => `${head}${name}_${k}`,
      ),
      "\n\n",
    );
  }
  parts.push("end\n");
  return parts.join("");
}
