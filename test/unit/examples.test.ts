import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseFile } from "../../lean-bridge/lean/commands";
import { EXAMPLE } from "../helpers";

test("the example workspace is what lean-env/generate_examples.py writes", () => {
  const out = mkdtempSync(join(tmpdir(), "fim-examples-"));
  const r = spawnSync("python3", [join(EXAMPLE, "generate_examples.py")], {
    env: { ...process.env, FIM_EXAMPLES_OUT: out },
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(
    readFileSync(join(out, "FimExamples.lean"), "utf8"),
    readFileSync(join(EXAMPLE, "FimExamples.lean"), "utf8"),
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
