import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";

test("the README quick start has exactly two command lines, and .ci/run runs the test line", () => {
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const block = /## Quick start\s+```bash\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
  const lines = block.trim().split("\n");
  assert.equal(lines.length, 2);
  const testLine = lines[1]!;
  const ci = readFileSync(join(REPO, ".ci", "run"), "utf8");
  for (const step of testLine.split("&&").map((s) => s.trim()))
    assert.ok(ci.includes(step.split(" ").slice(0, 2).join(" ")), `.ci/run runs ${step}`);
});
