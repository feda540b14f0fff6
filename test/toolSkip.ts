/**
 * The `skip` option of tests that need a tool `npm run test:setup` installs (code-server and Chromium, the
 * trainer's venv, bubblewrap, transformers.js). Off CI a missing tool skips, saying why. Where CI=true the
 * tool must be there: a missing one becomes a failing test that names it, so a CI run on a machine where
 * the setup broke is red instead of green with suites quietly skipped. Real Lean is the one tool no machine
 * here can install; its tests do not use this.
 */
import { test } from "node:test";
import assert from "node:assert/strict";

export function toolSkip(what: string, reason: string | false | undefined | null): string | false {
  if (!reason) return false;
  if (process.env.CI === "true") {
    test(`${what}: its tools are required where CI=true`, () => {
      assert.fail(
        `${what} cannot run: ${reason}. On CI this is a failure: .ci/run installs it (npm run test:setup).`,
      );
    });
  } else {
    process.stderr.write(`${what} skipped: ${reason}\n`);
  }
  return reason;
}
