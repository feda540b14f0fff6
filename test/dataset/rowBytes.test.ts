/**
 * Export pass 1 writes its rows from the file's text escaped once (lean-bridge/dataset/rowBytes.ts) instead of
 * `JSON.stringify` per row: these check that every row is still byte for byte `JSON.stringify` of its record
 * (records.ts), on text with what JSON escapes (quotes, backslashes, control characters, CRLF) and astral
 * characters, at several context windows.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mineText } from "../../lean-bridge/holes/mine";
import { JsonlWriter } from "../../lean-bridge/dataset/jsonl";
import { JsonText, latin1OfUtf8 } from "../../lean-bridge/dataset/jsonText";
import { boundPrefix, boundSuffix, prefixStart, suffixEnd } from "../../lean-bridge/dataset/context";
import { CodePointIndex, contextRecord, fileRecord, taskRecord } from "../../lean-bridge/dataset/records";
import { FileRows } from "../../lean-bridge/dataset/rowBytes";
import { PendingHeads } from "../../lean-bridge/dataset/pendingHeads";
import { sketchedRows } from "../../lean-bridge/dataset/taskRows";
import { SKETCH_INTS, Sketch, TaskSketchWriter } from "../../lean-bridge/dataset/taskSketches";

const TEXT = [
  "import Mathlib.Data.Real.Basic",
  "",
  '/-- 𝔸 docs with 😀, "quotes" and a back\\slash -/',
  "theorem «weird name» (𝔸 : Type) (x : 𝔸) : x = x := by",
  "  -- a comment with 𝔹 and a\ttab",
  "  have h : (1 : Nat) = 1 := by",
  "    rfl",
  '  simp only [show "a\\"b\\\\c" = "a\\"b\\\\c" from rfl]',
  "  exact rfl",
  "",
  "theorem ctl (n : Nat) : n = n := by",
  '  have : "\u0001\u001f\u007f\u2028\b\f" = "\u0001\u001f\u007f\u2028\b\f" := rfl',
  "  induction n with",
  "  | zero => rfl",
  "  | succ k ih =>",
  "    exact 😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀😀 k",
  "    rfl",
  "",
].join("\r\n");

test("JsonText: every slice is JSON.stringify's, also where a bound splits an astral character", () => {
  const text = 'a"\\\n\r\t\u0001😀é€\u2028𝔸z';
  const json = new JsonText(text);
  for (let start = 0; start <= text.length; start++)
    for (let end = start; end <= text.length; end++)
      assert.equal(
        json.quoted(start, end),
        latin1OfUtf8(JSON.stringify(text.slice(start, end))),
        `slice ${start}..${end}`,
      );
});

test("JsonText writes JSON.stringify's bytes for every UTF-16 unit, astral characters and lone surrogates", () => {
  const units: string[] = [];
  for (let c = 0; c < 0x10000; c++) units.push(String.fromCharCode(c), "x");
  const texts = [units.join(""), "😀𝔸\ud800\udc00\udbff\udfff", "\udc00\ud800", "", '"\\'];
  for (const text of texts)
    assert.equal(new JsonText(text).quoted(0, text.length), latin1OfUtf8(JSON.stringify(text)));
});

test("prefixStart and suffixEnd cut a window of the whole text as boundPrefix and boundSuffix cut the slice", () => {
  for (let from = 0; from < TEXT.length; from += 7)
    for (let to = from; to <= Math.min(TEXT.length, from + 300); to += 13)
      for (const max of [0, 1, 7, 24, 96]) {
        const slice = TEXT.slice(from, to);
        assert.equal(TEXT.slice(prefixStart(TEXT, from, to, max), to), boundPrefix(slice, max));
        assert.equal(TEXT.slice(from, suffixEnd(TEXT, from, to, max)), boundSuffix(slice, max));
      }
});

test("files, contexts and pending task rows are byte for byte JSON.stringify of their records", () => {
  const mined = mineText(TEXT);
  assert.ok(mined.holes.length >= 8, "the text has holes to write");
  for (const contextChars of [0, 7, 96]) {
    const dir = mkdtempSync(join(tmpdir(), "fim-rowbytes-"));
    const context = {
      file: 'Ä "q\\x"/Name.lean',
      imports: mined.imports,
      scope: ["namespace «A»"],
      codePoints: new CodePointIndex(TEXT),
      contextChars,
    };
    const rows = new FileRows(TEXT, context);
    const out = new JsonlWriter(join(dir, "rows.jsonl"), { durable: false });
    const expected: string[] = [JSON.stringify(fileRecord(context.file, TEXT))];
    rows.writeFile(out, fileRecord(context.file, TEXT).sha256);
    const splitAts: number[] = [];
    mined.holes.forEach((hole, k) => {
      rows.writeContext(out, hole, k);
      expected.push(JSON.stringify(contextRecord(hole, k, context)));
      splitAts.push(rows.writePending(out, hole, k, 2 ** 52 + k));
      const tail = { declKind: hole.declKind, declStart: hole.declStart };
      const record = JSON.stringify(taskRecord(hole, "train", k, context));
      expected.push(
        `{"_decl":${k},"_mk":${2 ** 52 + k},${record.slice(1, -1)},${JSON.stringify(tail).slice(1)}`,
      );
    });
    out.close();
    const written = readFileSync(join(dir, "rows.jsonl"));
    assert.equal(written.toString("utf8"), expected.map((line) => `${line}\n`).join(""));
    // Where each pending line's split placeholder is, as pass 3 will look for it.
    const lines = written.toString("utf8").split("\n");
    splitAts.forEach((at, k) => {
      const line = Buffer.from(lines[2 + 2 * k]!);
      assert.equal(line.toString("utf8", at, at + 16), ',"split":"train"');
      assert.equal(line.length - at > 16, true);
      assert.equal(rows.tailBytes(mined.holes[k]!) < line.length, true);
    });
  }
});

test("a task row rebuilt from its sketch is its pending row less head and tail, with the split field put in", () => {
  const mined = mineText(TEXT);
  let marked = 0;
  for (const contextChars of [0, 1, 7, 96]) {
    const dir = mkdtempSync(join(tmpdir(), "fim-sketch-"));
    const context = {
      file: 'Ä "q\\x"/Name.lean',
      imports: mined.imports,
      scope: [],
      codePoints: new CodePointIndex(TEXT),
      contextChars,
    };
    const rows = new FileRows(TEXT, context);
    const files = new JsonlWriter(join(dir, "files.jsonl"), { durable: false });
    rows.writeFile(files, fileRecord(context.file, TEXT).sha256);
    files.close();
    const sketches = new TaskSketchWriter(join(dir, "sketches.bin"));
    const heads = new PendingHeads();
    const declNames: string[] = [];
    const expected: string[] = [];
    mined.holes.forEach((hole, k) => {
      rows.sketch(sketches, hole, k, 0);
      heads.push(k, 1000 + k, hole.kind, 0);
      declNames.push(rows.declName(hole));
      expected.push(JSON.stringify({ ...taskRecord(hole, "test", k, context) }));
    });
    sketches.close();
    // Bounds never split a surrogate pair (holes and windows end at tokens, lines or whole characters), but
    // where a byte offset is unknown (-1) the row is built from the text instead: every other sketch is so
    // marked here, and its row must come out the same.
    const path = join(dir, "sketches.bin");
    const bytes = readFileSync(path);
    const ints = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    for (let at = SKETCH_INTS; at < ints.length; at += 2 * SKETCH_INTS) {
      assert.ok(ints[at + Sketch.StartByte]! > 0);
      ints[at + Sketch.StartByte] = -1;
      ints[at + Sketch.SuffixToByte] = -1;
      marked++;
    }
    writeFileSync(path, bytes);
    const field = Buffer.from(',"split":"test"');
    const out = new JsonlWriter(join(dir, "tasks.jsonl"), { durable: false });
    let k = 0;
    for (const row of sketchedRows(join(dir, "files.jsonl"), join(dir, "sketches.bin"), heads, declNames)) {
      assert.equal(row.decl, k);
      assert.equal(row.middleKey, 1000 + k);
      assert.equal(row.json(field), expected[k], `task ${k} at --context-chars ${contextChars}`);
      row.write(out, field);
      k++;
    }
    out.close();
    assert.equal(k, mined.holes.length);
    assert.equal(
      readFileSync(join(dir, "tasks.jsonl"), "utf8"),
      expected.map((line) => `${line}\n`).join(""),
    );
  }
  assert.ok(marked > 0);
});
