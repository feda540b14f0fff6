/**
 * The exporter writes its rows from the file's text escaped once (lean-bridge/dataset/rowBytes.ts for
 * files.jsonl and contexts.jsonl, the task-row encoder taskRows.ts for tasks.jsonl) instead of
 * `JSON.stringify` per row: these check that every row is byte for byte `JSON.stringify` of its record as the
 * contract defines it (records.ts: `fileRecord`, `contextRecord`, `taskRecord`, the test oracle), on text with
 * what JSON escapes (quotes, backslashes, control characters, CRLF), astral characters and byte-order marks,
 * at several context windows, on every split, with and without a goal, with and without a reference.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mineText } from "../../lean-bridge/holes/mine";
import { JsonlWriter } from "../../lean-bridge/dataset/jsonl";
import { JsonText, latin1OfUtf8 } from "../../lean-bridge/dataset/jsonText";
import { boundPrefix, boundSuffix, prefixStart, suffixEnd } from "../../lean-bridge/dataset/context";
import { CodePointIndex, contextRecord, fileRecord, taskRecord } from "../../lean-bridge/dataset/records";
import { FileRows } from "../../lean-bridge/dataset/rowBytes";
import { sketchedRows } from "../../lean-bridge/dataset/taskRows";
import { NO_REFERENCE, SKETCH_INTS, Sketch } from "../../lean-bridge/dataset/taskSketches";
import { sketchTasks } from "./sketchedTasks";
import { tempDir } from "../tempDirs";

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

test("files and contexts rows are byte for byte JSON.stringify of their records", () => {
  const mined = mineText(TEXT);
  assert.ok(mined.holes.length >= 8, "the text has holes to write");
  for (const contextChars of [0, 7, 96]) {
    const dir = tempDir("fim-rowbytes-");
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
    mined.holes.forEach((hole, k) => {
      rows.writeContext(out, hole, k);
      expected.push(JSON.stringify(contextRecord(hole, k, context)));
    });
    out.close();
    const written = readFileSync(join(dir, "rows.jsonl"));
    assert.equal(written.toString("utf8"), expected.map((line) => `${line}\n`).join(""));
  }
});

/** Goals as Lean may print them, with what JSON escapes and astral characters; `undefined`: none shown. */
const GOALS = [
  "n : ℕ\n⊢ n + 0 = n",
  undefined,
  'x : 𝔸\nh : "q\\\\" = "q\\\\"\n⊢ x = x\t😀',
  "\u0001\u001f\u007f\u2028 ⊢ True",
  "",
];

/** Split fields, each with the `novel` and `heldOut` a held-out task carries (null on a training task). */
const SPLITS = [
  {
    field: ',"split":"train","novel":null,"heldOut":null',
    split: "train",
    novel: undefined,
    heldOut: undefined,
  },
  {
    field: ',"split":"validation","novel":true,"heldOut":"instance"',
    split: "validation",
    novel: true,
    heldOut: "instance",
  },
  {
    field: ',"split":"test","novel":false,"heldOut":"family"',
    split: "test",
    novel: false,
    heldOut: "family",
  },
] as const;

test("the task-row encoder writes JSON.stringify(taskRecord(…)) for every task, split, goal and reference", () => {
  // The same declarations as LF, as CRLF with a byte-order mark, and as a file of nothing but astral proofs.
  const files = [
    { file: 'Ä "q\\x"/Name.lean', text: TEXT },
    { file: "Plain.lean", text: TEXT.replace(/\r\n/g, "\n") },
    { file: "Bom.lean", text: `\ufeff${TEXT}` },
    {
      file: "𝔸/Astral.lean",
      text: "theorem a : 𝔸 = 𝔸 := by\n  have : 😀 := by\n    exact 😀\n  exact rfl -- 😀\n",
    },
  ].map((f) => ({ ...f, holes: mineText(f.text).holes }));
  let marked = 0;
  let withGoal = 0;
  for (const contextChars of [0, 1, 7, 96, 1000]) {
    const dir = tempDir("fim-taskrows-");
    const sketched = sketchTasks(dir, files, contextChars);
    assert.ok(sketched.tasks.length >= 30, "the files have holes to write");
    // Bounds never split a surrogate pair (holes and windows end at tokens, lines or whole characters), but
    // where a byte offset is unknown (-1) the texts are escaped from the file's text instead of copied: every
    // third sketch is so marked here, and its row must come out the same.
    const bytes = readFileSync(sketched.sketchPath);
    const ints = new Int32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    for (let at = SKETCH_INTS; at < ints.length; at += 3 * SKETCH_INTS) {
      assert.ok(ints[at + Sketch.StartByte]! > 0);
      ints[at + Sketch.StartByte] = -1;
      ints[at + Sketch.SuffixToByte] = -1;
      marked++;
    }
    // Every fourth task a statement without a proof, as pass 1 marks one.
    for (let at = 0; at < ints.length; at += 4 * SKETCH_INTS) ints[at + Sketch.Flags] = NO_REFERENCE;
    writeFileSync(sketched.sketchPath, bytes);
    // Goals as verification writes them: one line per task, the goal as JSON or `null`.
    const goalsPath = join(dir, "goals.jsonl");
    const goals = new JsonlWriter(goalsPath, { durable: false });
    const goalOf = (k: number) => GOALS[k % GOALS.length];
    sketched.tasks.forEach((_, k) => {
      const goal = goalOf(k);
      goals.writeLine(goal === undefined ? "null" : JSON.stringify(goal));
    });
    goals.close();
    for (const goalsFile of [undefined, goalsPath]) {
      const out = new JsonlWriter(join(dir, "tasks.jsonl"), { durable: false });
      const expected: string[] = [];
      let k = 0;
      for (const row of sketchedRows(
        sketched.filesPath,
        sketched.sketchPath,
        sketched.heads,
        sketched.declNames,
        goalsFile,
      )) {
        const { hole, context, decl } = sketched.tasks[k]!;
        assert.equal(row.decl, decl);
        assert.equal(row.middleKey, 1000 + k);
        assert.equal(row.kind, hole.kind);
        const { field, split, novel, heldOut } = SPLITS[k % SPLITS.length]!;
        const goal = goalsFile ? goalOf(k) : undefined;
        if (goal !== undefined) withGoal++;
        const record = taskRecord(hole, split, decl, context, {
          ...(novel !== undefined ? { novel } : {}),
          ...(heldOut !== undefined ? { heldOut } : {}),
          ...(goal !== undefined ? { goal } : {}),
          reference: k % 4 !== 0,
        });
        assert.equal(row.reference, k % 4 !== 0);
        expected.push(JSON.stringify(record));
        row.write(out, Buffer.from(field));
        // What the views read back is the row as written.
        assert.equal(out.lastLine(), expected.at(-1), `task ${k} at --context-chars ${contextChars}`);
        k++;
      }
      out.close();
      assert.equal(k, sketched.tasks.length);
      assert.equal(
        readFileSync(join(dir, "tasks.jsonl"), "utf8"),
        expected.map((line) => `${line}\n`).join(""),
      );
    }
  }
  assert.ok(marked > 0 && withGoal > 0);
});
