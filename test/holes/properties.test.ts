/**
 * Properties that must hold for every hole of every corpus: putting the middle back at the hole's LSP
 * range gives back the file exactly, and the middle is a whole tactic sequence at its column and in its
 * place (nothing but a closing bracket may follow it on its line). Then a fuzz
 * test: random and mutated inputs never crash or hang the miner, and the properties still hold.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { isWholeHole, mineText } from "../../lean-bridge/holes/mine";
import { LineIndex } from "../../lean-bridge/text/positions";
import { EXAMPLE, REPO } from "../helpers";
import { generateCorpusFile, mulberry32 } from "../../bench/corpus";

function corpora(): { name: string; text: string }[] {
  const out: { name: string; text: string }[] = [];
  const exampleDir = join(EXAMPLE, "FimExamples");
  for (const f of readdirSync(exampleDir))
    out.push({ name: f, text: readFileSync(join(exampleDir, f), "utf8") });
  const fixtures = join(REPO, "test", "fixtures", "mining");
  for (const f of readdirSync(fixtures).filter((n) => n.endsWith(".lean")))
    out.push({ name: f, text: readFileSync(join(fixtures, f), "utf8") });
  for (const c of [...out]) out.push({ name: `${c.name} (CRLF)`, text: c.text.replace(/\n/g, "\r\n") });
  for (let k = 0; k < 5; k++)
    out.push({ name: `generated ${k}`, text: generateCorpusFile(mulberry32(k), 40) });
  return out;
}

function checkProperties(name: string, text: string): number {
  const index = new LineIndex(text);
  const mined = mineText(text);
  for (const h of mined.holes) {
    const start = index.offsetAt(h.range.start);
    const end = index.offsetAt(h.range.end);
    assert.equal(
      text.slice(0, start) + h.middle + text.slice(end),
      text,
      `${name}: ${h.decl} ${h.kind} does not reconstruct`,
    );
    assert.equal(text.slice(start, end), h.middle, `${name}: the LSP range and the middle disagree`);
    assert.equal(
      start - (text.lastIndexOf("\n", start - 1) + 1),
      h.indent,
      `${name}: indent is the hole's column`,
    );
    // Whole in its place too: a hole never stops at a `|` (or anything else) that continues its line.
    assert.ok(
      isWholeHole(text, start, end, h.indent),
      `${name}: ${h.decl} ${h.kind} is not a whole tactic sequence: ${JSON.stringify(h.middle)} ` +
        `followed by ${JSON.stringify(text.slice(end, end + 20))}`,
    );
  }
  return mined.holes.length;
}

test("every hole of every corpus reconstructs its file exactly and is a whole tactic sequence", () => {
  let total = 0;
  for (const { name, text } of corpora()) total += checkProperties(name, text);
  assert.ok(total > 1000, `the corpora have holes (${total})`);
});

test("CRLF files give the same holes at the same LSP positions as their LF originals", () => {
  const text = readFileSync(join(REPO, "test", "fixtures", "mining", "tricky.lean"), "utf8");
  const lf = mineText(text).holes.map((h) => [h.kind, h.range, h.middle]);
  const crlf = mineText(text.replace(/\n/g, "\r\n")).holes.map((h) => [
    h.kind,
    h.range,
    String(h.middle).replace(/\r\n/g, "\n"),
  ]);
  assert.deepEqual(crlf, lf);
});

const PIECES = [
  "/-",
  "-/",
  "/--",
  '"',
  '\\"',
  's!"{',
  "}",
  'r#"',
  '"#',
  "'",
  "'a'",
  "«",
  "»",
  "by",
  "·",
  "=>",
  "|",
  "(",
  ")",
  "[",
  "]",
  "⟨",
  "⟩",
  "\n",
  "\n  ",
  "\n    ",
  "--",
  ":=",
  "theorem t : p := by\n  ",
  "calc",
  "_ = x := by",
  "case h =>",
  "𝔸",
  "\r\n",
  "\t",
  "with",
  "termination_by",
  "where",
  "#exit",
  "|x|",
  "hp | hq",
  "first | a | b",
  "rcases h with a | b",
  "\n  | inl h => ",
  "all_goals ",
  "⟨by simp, by omega⟩",
];

test("fuzz: random and mutated inputs never crash the miner, and its holes stay whole", () => {
  const rand = mulberry32(20261122);
  const seeds = corpora().map((c) => c.text);
  let holes = 0;
  for (let round = 0; round < 400; round++) {
    let text: string;
    if (round % 4 === 0) {
      text = Array.from(
        { length: 1 + Math.floor(rand() * 200) },
        () => PIECES[Math.floor(rand() * PIECES.length)]!,
      ).join(rand() < 0.5 ? " " : "");
    } else {
      text = seeds[Math.floor(rand() * seeds.length)]!;
      for (let m = 0; m < 1 + Math.floor(rand() * 8); m++) {
        const at = Math.floor(rand() * (text.length + 1));
        const op = rand();
        if (op < 0.4) text = text.slice(0, at) + PIECES[Math.floor(rand() * PIECES.length)]! + text.slice(at);
        else if (op < 0.7) text = text.slice(0, at) + text.slice(at + Math.floor(rand() * 40));
        else text = text.slice(0, at) + text.slice(Math.max(0, at - 60), at) + text.slice(at);
      }
    }
    holes += checkProperties(`fuzz round ${round}`, text);
  }
  assert.ok(holes > 0);
});

test("pathological nesting does not exhaust the stack", () => {
  const deep =
    "theorem t : True := by\n" +
    Array.from({ length: 3000 }, (_, k) => " ".repeat(2 + k) + "· have h : True := by").join("\n") +
    "\n";
  assert.doesNotThrow(() => mineText(deep));
  assert.doesNotThrow(() => mineText("(".repeat(100_000) + "theorem"));
  assert.doesNotThrow(() => mineText("/-".repeat(50_000)));
});
