/**
 * The extension-host test entry (`extensionTestsPath`): bundled by test/e2e/training.test.ts into
 * out/e2e/suite.js, and usable by @vscode/test-electron's runTests on hosted CI (test/e2e/run-electron.mjs).
 */
import Mocha from "mocha";
import { defineSuites } from "./training.suite";

export function run(): Promise<void> {
  const grep = process.env.FIM_E2E_GREP;
  const mocha = new Mocha({
    ui: "tdd",
    color: false,
    timeout: 60_000,
    reporter: "spec",
    ...(grep ? { grep } : {}),
  });
  mocha.suite.emit(Mocha.Suite.constants.EVENT_FILE_PRE_REQUIRE, globalThis, "training.suite", mocha);
  defineSuites();
  return new Promise((resolve, reject) => {
    mocha.run((failures) =>
      failures > 0 ? reject(new Error(`${failures} extension test(s) failed`)) : resolve(),
    );
  });
}
