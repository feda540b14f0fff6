/** `fim-rlvr serve` as users run it (dist/cli.js): it listens, prints where, answers a client, stops on Ctrl-C. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { VerifierClient } from "../../lean-bridge/serve/client";
import { servedAddress, startServe } from "./serveProcess";
import { EXAMPLE, REPO, proofHole, readExample } from "../helpers";

const CLI = join(REPO, "dist", "cli.js");

test(
  "serve listens on loopback, prints its address and token, verifies, and stops on SIGINT",
  { timeout: 60_000 },
  async () => {
    const serve = await startServe([
      "--project",
      EXAMPLE,
      "--simulator",
      "--port",
      "0",
      "--workers",
      "2",
      "--token",
      "cli-test-token",
    ]);
    const { lines, printedAddress: address } = serve;
    try {
      assert.ok(address, `no address printed: ${lines.join("\n")}`);
      assert.match(address, /^127\.0\.0\.1:\d+$/);
      assert.ok(
        lines.some((l) => /simulator .*\(not Lean\)/.test(l)),
        "the verifier is named",
      );
      assert.ok(lines.some((l) => l.includes("must send the --token value in its auth request")));
      assert.ok(!lines.some((l) => l.includes("cli-test-token")), "a given token is not echoed");
      const ARITH = "FimExamples/Arith.lean";
      const hole = proofHole(readExample(ARITH), "add_le_add_3");
      const client = new VerifierClient([servedAddress(address)], { token: "cli-test-token" });
      try {
        const result = await client.verifyBatch([{ file: ARITH, hole, candidate: "omega" }]);
        assert.equal(result.kind, "ok");
        assert.equal(result.kind === "ok" && result.verdicts[0]!.kind, "proved");
        const [report] = await client.stats();
        assert.equal(report!.kind, "ok");
        if (report!.kind === "ok") assert.ok(report!.stats.tasks > 100, "the project was mined for task ids");
      } finally {
        client.close();
      }
      serve.child.kill("SIGINT");
      assert.equal(await serve.exited, 130);
    } finally {
      serve.child.kill("SIGKILL");
    }
  },
);

test("serve refuses bad options with exit 2 and a message that says what to do", () => {
  const run = (args: string[]) =>
    spawnSync(process.execPath, [CLI, "serve", "--project", EXAMPLE, "--simulator", ...args], {
      encoding: "utf8",
      timeout: 30_000,
    });
  const short = run(["--token", "abc"]);
  assert.equal(short.status, 2);
  assert.match(short.stderr, /--token must be at least 8 characters/);
  const noDataset = run(["--dataset", join(REPO, "docs")]);
  assert.equal(noDataset.status, 2);
  assert.match(noDataset.stderr, /not a dataset written by `fim-rlvr export`/);
  const badPort = run(["--port", "70000"]);
  assert.equal(badPort.status, 2);
  assert.match(badPort.stderr, /--port must be at most 65535/);
});
