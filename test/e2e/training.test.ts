/**
 * The extension's mocha suites (test/e2e/suite) inside a real VS Code's extension host: code-server with
 * this repository as the extension under development, on a copy of the example Lean workspace, training
 * with the simulator. Skipped, with the reason, where test/e2e/setup.sh has not installed its tools.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { bundleSuite, copyExample, trainingSettings } from "./workspace";
import { openWorkbench, skipReason, trainerPython } from "./codeServer";
import { toolSkip } from "../toolSkip";

const skip = toolSkip("VS Code extension-host tests", skipReason());

test(
  "VS Code extension host: activation, commands, a short training run, Stop keeps a checkpoint",
  { skip, timeout: 480_000 },
  async () => {
    const suite = await bundleSuite();
    const { python } = trainerPython();
    const workbench = await openWorkbench({
      workspace: copyExample(trainingSettings(python, 3)),
      extensionTests: suite,
    });
    try {
      const code = await Promise.race([
        workbench.testsExited,
        new Promise<string>((resolve) => setTimeout(() => resolve("no exit code within 420 s"), 420_000)),
      ]);
      const log = workbench.hostLog.join("\n");
      assert.equal(code, 0, `the extension-host suites passed:\n${log}`);
      assert.match(log, /passing/, "mocha reported");
      assert.doesNotMatch(log, /failing/);
    } finally {
      await workbench.close();
    }
  },
);
