/** The extension-host entry of the Fill Hole suite (bundled by test/e2e/fill.test.ts). */
import Mocha from "mocha";
import { defineFillSuites } from "./fill.suite";

export function run(): Promise<void> {
  const mocha = new Mocha({ ui: "tdd", color: false, timeout: 60_000, reporter: "spec" });
  mocha.suite.emit(Mocha.Suite.constants.EVENT_FILE_PRE_REQUIRE, globalThis, "fill.suite", mocha);
  defineFillSuites();
  return new Promise((resolve, reject) => {
    mocha.run((failures) =>
      failures > 0 ? reject(new Error(`${failures} extension test(s) failed`)) : resolve(),
    );
  });
}
