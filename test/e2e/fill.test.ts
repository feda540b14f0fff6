/**
 * Fill Hole with Model in a real VS Code's extension host (code-server, test/e2e/suite/fill.suite.ts): an endpoint
 * stub, the simulator, a proved candidate inserted. Skipped, with the reason, where test/e2e/setup.sh has not
 * installed its tools.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { join } from "node:path";
import { build } from "esbuild";
import { REPO } from "../helpers";
import { toolSkip } from "../toolSkip";
import { openWorkbench, skipReason } from "./codeServer";
import { copyExample } from "./workspace";

const skip = toolSkip("VS Code extension-host test of Fill Hole", skipReason());

test(
  "VS Code extension host: Fill Hole with Model inserts a proved candidate",
  { skip, timeout: 420_000 },
  async () => {
    const suite = join(REPO, "out", "e2e", "fill-suite.js");
    await build({
      entryPoints: [join(REPO, "test", "e2e", "suite", "fillIndex.ts")],
      outfile: suite,
      bundle: true,
      platform: "node",
      target: "node20",
      format: "cjs",
      external: ["vscode", "mocha"],
      logLevel: "warning",
    });
    const workbench = await openWorkbench({
      workspace: copyExample({ "files.autoSave": "off" }),
      extensionTests: suite,
    });
    try {
      // A bounded wait for the suite's exit code; the timer is cleared so that a passing run ends at once.
      let timer: NodeJS.Timeout | undefined;
      const code = await Promise.race([
        workbench.testsExited,
        new Promise<string>(
          (resolve) => (timer = setTimeout(() => resolve("no exit code within 360 s"), 360_000)),
        ),
      ]).finally(() => clearTimeout(timer));
      const log = workbench.hostLog.join("\n");
      assert.equal(code, 0, `the Fill Hole suite passed:\n${log}`);
      assert.match(log, /passing/);
      assert.doesNotMatch(log, /failing/);
    } finally {
      await workbench.close();
    }
  },
);
