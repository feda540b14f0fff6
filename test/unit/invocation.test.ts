/** The command a hint prints to run this CLI again: `fim-rlvr` only where that name on PATH is this program. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { invocation } from "../../lean-bridge/cli/invocation";
import { tempDir } from "../tempDirs";

test("invocation names fim-rlvr only when PATH's fim-rlvr is this script, else node and the script's path", () => {
  const dir = tempDir("fim-invocation-");
  const script = join(dir, "cli.js");
  writeFileSync(script, "");
  const bin = join(dir, "bin");
  const other = join(dir, "other");
  for (const d of [bin, other]) mkdirSync(d, { recursive: true });
  symlinkSync(script, join(bin, "fim-rlvr"));
  writeFileSync(join(other, "fim-rlvr"), "");
  assert.equal(invocation(script, { PATH: bin }), "fim-rlvr");
  const shown = relative(process.cwd(), script);
  const expected = shown.startsWith("..") ? script : shown;
  assert.equal(invocation(script, { PATH: other }), `node ${expected}`, "another fim-rlvr is not this one");
  assert.equal(invocation(script, { PATH: "" }), `node ${expected}`);
  assert.equal(
    invocation(join(dir, "it's.js"), { PATH: "" }).endsWith(`'"'"'s.js'`),
    true,
    "quoted for a shell",
  );
});
