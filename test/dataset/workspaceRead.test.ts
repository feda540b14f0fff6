/**
 * readSource (lean-bridge/dataset/workspace.ts) hands over the file's bytes with its text only when they are
 * the text's UTF-8 exactly: a leading byte-order mark is dropped from the text, and then no bytes are given
 * (files.jsonl's sha256 and the task ids hash the text's UTF-8).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { readSource } from "../../lean-bridge/dataset/workspace";
import { tempDir } from "../tempDirs";

test("a file's bytes come with its text when they are its UTF-8, and not after a byte-order mark", () => {
  const dir = tempDir("fim-read-");
  const text = "theorem t : ∀ n : ℕ, n = n := by\r\n  intro n; rfl -- 𝔽\n";
  writeFileSync(join(dir, "A.lean"), text);
  writeFileSync(join(dir, "B.lean"), Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]));
  const plain = readSource(dir, join(dir, "A.lean"), 1 << 20);
  const marked = readSource(dir, join(dir, "B.lean"), 1 << 20);
  assert.ok(plain.kind === "ok" && marked.kind === "ok");
  if (plain.kind !== "ok" || marked.kind !== "ok") return;
  assert.equal(plain.source.text, text);
  assert.deepEqual(plain.source.utf8, Buffer.from(text, "utf8"));
  assert.equal(marked.source.text, text);
  assert.equal(marked.source.utf8, undefined);
});
