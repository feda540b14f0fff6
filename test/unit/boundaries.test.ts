import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { REPO } from "../helpers";

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) tsFiles(path, out);
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

test("lean-bridge never imports vscode (the CLI, tests and the trainer host run it without an editor)", () => {
  const offenders = tsFiles(join(REPO, "lean-bridge")).filter((f) =>
    /from\s+["']vscode["']|require\(["']vscode["']\)|import\(["']vscode["']\)/.test(readFileSync(f, "utf8")),
  );
  assert.deepEqual(
    offenders.map((f) => relative(REPO, f)),
    [],
  );
});

test("Lean protocol method names are declared only in lean-bridge/protocol/", () => {
  const methods = /["'](\$\/lean\/\w+|textDocument\/waitForDiagnostics)["']/;
  const outside = tsFiles(join(REPO, "lean-bridge"))
    .filter(
      (f) => !f.includes(join("lean-bridge", "protocol")) && !f.includes(join("lean-bridge", "simulator")),
    )
    .filter((f) => methods.test(readFileSync(f, "utf8")));
  assert.deepEqual(
    outside.map((f) => relative(REPO, f)),
    [],
  );
});
