import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";

test("the README quick start has exactly two command lines, and .ci/run runs the test line exactly", () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const block = /## Quick start\s+```bash\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const lines = block.trim().split("\n");
  assert.equal(lines.length, 2);
  const ci = readFileSync(join(REPO, ".ci", "run"), "utf8").split("\n");
  assert.ok(ci.includes(lines[1]!), `.ci/run runs "${lines[1]}"`);
  // The main job on real Lean: the embedded Lean installed, then training on the real-Lean example workspace
  // (test/train/quickStart.test.ts runs that target).
  assert.equal(
    lines[0],
    "npm ci && npm run setup:lean && npm run build && node dist/cli.js train lean-env-prelude",
  );
});
