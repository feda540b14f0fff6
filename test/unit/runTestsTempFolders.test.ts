/**
 * scripts/run-tests.mjs checks that a run leaves no fim- folder in the temp folder: on CI (CI=true) a folder left
 * fails the run and is named; a test file that makes its folders with test/tempDirs.ts passes. Each run here has a
 * temp folder of its own (TMPDIR), so what other processes make meanwhile is not counted.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";
import { tempDir } from "../tempDirs";

/** run-tests.mjs on one fixture with CI=true in a temp folder of its own; `left`: the fim- folders left there. */
function runTests(fixture: string): { status: number | null; output: string; left: string[] } {
  const tmp = tempDir("fim-run-tests-");
  // Without the outer runner's NODE_TEST_CONTEXT: the nested runner then reports as a runner of its own.
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "true", TMPDIR: tmp };
  delete env.NODE_TEST_CONTEXT;
  const r = spawnSync(
    process.execPath,
    ["scripts/run-tests.mjs", join("test", "fixtures", "temp-leaks", fixture)],
    {
      cwd: REPO,
      encoding: "utf8",
      timeout: 120_000,
      env,
    },
  );
  const left = readdirSync(tmp).filter((name) => name.startsWith("fim-"));
  return { status: r.status, output: `${r.stdout}${r.stderr}`, left };
}

test("on CI a test file that leaves a fim- folder fails the run, which names the folder", () => {
  const r = runTests("leaks.ts");
  const [folder] = r.left.filter((n) => n.startsWith("fim-leak-fixture-"));
  assert.ok(folder, `the fixture left its folder: ${r.left.join(", ")}`);
  assert.equal(r.status, 1, r.output);
  assert.match(r.output, new RegExp(`temp folders left in .*${folder}`));
  assert.match(
    r.output,
    /summary: node tests passed.*temp folders FAILED \(1 left: make them with test\/tempDirs\.ts/,
  );
});

test("a test file whose folders come from tempDir leaves none, and the run passes", () => {
  const r = runTests("cleans.ts");
  assert.equal(r.status, 0, r.output);
  assert.deepEqual(r.left, []);
  assert.doesNotMatch(r.output, /temp folders left/);
});
