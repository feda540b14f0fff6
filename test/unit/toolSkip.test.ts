/**
 * toolSkip: a suite whose tool is missing skips off CI, and fails (naming the tool) where CI=true, so a CI
 * run on a machine where `npm run test:setup` broke is never green with suites quietly skipped.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { REPO } from "../helpers";

const FIXTURE = join(REPO, "test", "fixtures", "tool-skip", "needsTool.ts");

function run(ci: boolean) {
  const env = { ...process.env };
  delete env.CI;
  delete env.NODE_TEST_CONTEXT; // the child is a test run of its own, not a subtest of this one
  if (ci) env.CI = "true";
  return spawnSync(process.execPath, ["--import", "tsx", "--test", FIXTURE], {
    cwd: REPO,
    env,
    encoding: "utf8",
  });
}

test("a missing tool skips the suite, saying why, off CI", () => {
  const r = run(false);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout + r.stderr, /the widget suite skipped: widget is not installed/);
  assert.match(r.stdout, /# skipped 1/);
});

test("a missing tool fails the run where CI=true, naming the tool and what installs it", () => {
  const r = run(true);
  assert.equal(r.status, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /the widget suite cannot run: widget is not installed.*npm run test:setup/);
  assert.match(r.stdout, /# fail 1/);
});
