import { test } from "node:test";
import assert from "node:assert/strict";
import { LineIndex, normalizeLineEndings } from "../../lean-bridge/text/positions";
import { applyChanges, incrementalChange, minimalEdit } from "../../lean-bridge/text/edits";

test("positions count UTF-16 code units, astral characters as two", () => {
  const text = "a𝔸b\nαβ\n";
  const index = new LineIndex(text);
  assert.deepEqual(index.positionAt(text.indexOf("b")), { line: 0, character: 3 });
  assert.equal(index.offsetAt({ line: 1, character: 1 }), text.indexOf("β"));
  assert.equal(index.lineCount, 3);
  assert.equal(index.isValid({ line: 0, character: 4 }), true);
  assert.equal(index.isValid({ line: 0, character: 5 }), false);
  assert.equal(index.isValid({ line: 3, character: 0 }), false);
});

test("out-of-range positions clamp to the line end, like LSP servers", () => {
  const index = new LineIndex("ab\ncd");
  assert.equal(index.offsetAt({ line: 0, character: 99 }), 2);
  assert.equal(index.offsetAt({ line: 9, character: 0 }), 5);
});

test("CRLF and lone CR become LF", () => {
  assert.equal(normalizeLineEndings("a\r\nb\rc\n"), "a\nb\nc\n");
});

test("minimal edit never splits a surrogate pair", () => {
  const edit = minimalEdit("x𝔸y", "x𝔹y");
  assert.ok(edit);
  assert.equal(edit.start, 1);
  assert.equal(edit.end, 3);
  assert.equal(edit.insert, "𝔹");
});

test("incremental changes applied in order reproduce the new text", () => {
  const samples = [
    ["theorem t : True := by\n  trivial\n", "theorem t : True := by\n  exact True.intro\n"],
    ["αβγ\n𝔸\n", "αβγ\n𝔸𝔹\nδ"],
    ["", "new"],
    ["same", "same"],
  ];
  for (const [a, b] of samples) {
    const change = incrementalChange(a!, b!);
    assert.equal(change ? applyChanges(a!, [change]) : a, b);
  }
  // Several changes, each against the result of the previous one.
  const text = applyChanges("abc\ndef\n", [
    { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, text: "X" },
    { range: { start: { line: 1, character: 3 }, end: { line: 1, character: 3 } }, text: "!" },
    { text: "full replacement" },
    { range: { start: { line: 0, character: 4 }, end: { line: 0, character: 16 } }, text: "" },
  ]);
  assert.equal(text, "full");
});
