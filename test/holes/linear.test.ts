/**
 * Mining stays linear in the size of a file. Work is counted, not timed: the miner reads the file only
 * through its token stream, so every read of a token's kind, column, line, offsets or line-start flag is
 * counted through proxies over those arrays. Growing a file fourfold must grow the reads (and the holes)
 * about fourfold, for files shaped to stress each part of the layout rule: many declarations, one long
 * proof, a proof under `classical` (one combinator over every later step), long alternatives at the
 * block's column, and long lines continued at the block's column.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mineText } from "../../lean-bridge/holes/mine";
import { parseFile } from "../../lean-bridge/lean/commands";
import { lex } from "../../lean-bridge/lean/lexer";
import type { TokenStream } from "../../lean-bridge/lean/tokens";
import { generateCorpusFile, mulberry32 } from "../../bench/corpus";

type Counter = { reads: number };

function counted<T extends Uint8Array | Int32Array>(array: T, counter: Counter): T {
  return new Proxy(array, {
    get(target, key) {
      if (typeof key === "string" && key.length > 0 && key.charCodeAt(0) >= 48 && key.charCodeAt(0) <= 57)
        counter.reads++;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** Token reads and holes for mining `text` (lexing is linear by construction and not counted). */
function work(text: string): { reads: number; holes: number } {
  const ts = lex(text);
  const counter: Counter = { reads: 0 };
  const watched: TokenStream = {
    text: ts.text,
    count: ts.count,
    unterminated: ts.unterminated,
    kinds: counted(ts.kinds, counter),
    starts: counted(ts.starts, counter),
    ends: counted(ts.ends, counter),
    cols: counted(ts.cols, counter),
    lines: counted(ts.lines, counter),
    lineFirst: counted(ts.lineFirst, counter),
  };
  const mined = mineText(text, parseFile(text, watched));
  return { reads: counter.reads, holes: mined.holes.length };
}

const SHAPES: Record<string, (n: number) => string> = {
  "many declarations": (n) => generateCorpusFile(mulberry32(7), n),
  "one long proof": (n) =>
    "theorem long (a : Nat) : a = a := by\n" +
    Array.from({ length: n * 4 }, (_, k) => `  have h${k} : a = a := by\n    simp\n  skip`).join("\n") +
    "\n  rfl\n",
  "classical over every step": (n) =>
    "theorem scoped (a : Nat) : a = a := by\n  classical\n" +
    Array.from({ length: n * 4 }, (_, k) => `  have h${k} : a = a := rfl`).join("\n") +
    "\n  rfl\n",
  "alternatives at the block's column": (n) =>
    "theorem arms (n : Nat) : n = n := by\n  match n with\n" +
    Array.from({ length: n * 4 }, (_, k) => `  | ${k} =>\n  skip\n  rfl`).join("\n") +
    "\n  | _ => rfl\n",
  "continued lines": (n) =>
    "theorem chains (a : Nat) : a = a := by\n" +
    Array.from({ length: n * 4 }, () => "  have : a = a :=\n  Eq.trans rfl <|\n  rfl").join("\n") +
    "\n  rfl\n",
};

for (const [shape, make] of Object.entries(SHAPES)) {
  test(`mining grows linearly: ${shape}`, () => {
    const small = work(make(50));
    const large = work(make(200));
    assert.ok(small.holes > 0 && small.reads > 0, `${shape}: the small file is mined`);
    const growth = large.reads / small.reads;
    // Four times the text: linear work grows ~4x; a quadratic step would grow it ~16x.
    assert.ok(growth < 5, `${shape}: 4x the text took ${growth.toFixed(2)}x the token reads`);
    assert.ok(large.holes / small.holes < 5, `${shape}: holes grow with the text`);
  });
}
