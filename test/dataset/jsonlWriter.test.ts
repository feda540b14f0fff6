/**
 * JsonlWriter (lean-bridge/dataset/jsonl.ts): lines laid out in place next to a held text (`holdText`,
 * `room`, `copyHeld`, `endLine`) and lines written in parts (`putUtf8`, `putLatin1`) come out as the same lines written as strings, through flushes, a held text
 * larger than the buffer, a line larger than the buffer, and a new text held mid-file.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { JsonlWriter } from "../../lean-bridge/dataset/jsonl";
import { tempDir } from "../tempDirs";

function textOf(length: number, seed: number): Buffer {
  const bytes = Buffer.alloc(length);
  for (let k = 0; k < length; k++) bytes[k] = 97 + ((k * 7 + seed) % 26);
  return bytes;
}

test("lines copied from a held text are the lines written as strings", () => {
  const dir = tempDir("fim-jsonl-");
  const out = new JsonlWriter(join(dir, "out.jsonl"));
  const expected: string[] = [];
  // 3 MB and 40 bytes of held text; lines of a few bytes to 2.5 MB; a plain line between the two texts.
  for (const [size, seed] of [
    [3 * 1024 * 1024, 1],
    [40, 2],
  ] as const) {
    const text = textOf(size, seed);
    const source = Buffer.concat([Buffer.from("head:"), text, Buffer.from(":tail")]);
    out.holdText(source, 5, 5 + size);
    for (let k = 0; k < 2_000; k++) {
      const from = (k * 7919) % size;
      const to = Math.min(size, from + (k % 500 === 0 ? 2.5 * 1024 * 1024 : k % 300));
      const buffer = out.room(to - from + 16);
      let b = out.end;
      buffer[b++] = 0x5b; // [
      b = out.copyHeld(b, from, to);
      buffer[b++] = 0x5d; // ]
      out.endLine(b);
      expected.push(`[${text.toString("latin1", from, to)}]`);
    }
    out.writeLine('{"plain":"é"}');
    expected.push('{"plain":"é"}');
    // A head encoded here, then bytes already UTF-8 (one character per byte): "é𝔽" is C3 A9 F0 9D 94 BD.
    out.room(64);
    out.putUtf8('{"ä":');
    out.putLatin1('"\u00c3\u00a9\u00f0\u009d\u0094\u00bd"');
    out.putLatin1("}");
    out.endLine(out.end);
    expected.push('{"ä":"é𝔽"}');
  }
  out.close();
  assert.equal(out.lines, expected.length);
  assert.equal(readFileSync(join(dir, "out.jsonl"), "utf8"), expected.map((l) => `${l}\n`).join(""));
});
