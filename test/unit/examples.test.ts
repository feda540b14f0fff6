import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { parseFile } from "../../lean-bridge/lean/commands";
import { EXAMPLE } from "../helpers";
import { tempDir } from "../tempDirs";

test("the example workspace and its oracle are what lean-env/generate_examples.py writes", () => {
  const out = tempDir("fim-examples-");
  const r = spawnSync("python3", [join(EXAMPLE, "generate_examples.py")], {
    env: { ...process.env, FIM_EXAMPLES_OUT: out },
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  for (const f of ["FimExamples.lean", "fim-oracle.json"])
    assert.equal(readFileSync(join(out, f), "utf8"), readFileSync(join(EXAMPLE, f), "utf8"), f);
  // The same files both ways: nothing committed that the generator no longer writes.
  assert.deepEqual(
    readdirSync(join(EXAMPLE, "FimExamples")).sort(),
    readdirSync(join(out, "FimExamples")).sort(),
  );
  for (const f of readdirSync(join(out, "FimExamples")))
    assert.equal(
      readFileSync(join(out, "FimExamples", f), "utf8"),
      readFileSync(join(EXAMPLE, "FimExamples", f), "utf8"),
      f,
    );
});

test("the example workspace has at least 150 theorems with tactic proofs over several files", () => {
  const files = readdirSync(join(EXAMPLE, "FimExamples"));
  let theorems = 0;
  for (const f of files)
    theorems += parseFile(readFileSync(join(EXAMPLE, "FimExamples", f), "utf8")).commands.filter(
      (c) => c.declaration?.keyword === "theorem" && c.declaration.bodyKind === "tactic",
    ).length;
  assert.ok(files.length >= 5);
  assert.ok(theorems >= 150, `${theorems} theorems`);
});
