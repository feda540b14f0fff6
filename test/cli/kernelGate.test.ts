/**
 * `--kernel-gate` on the built CLI: the verdict names what confirmed a proof, the modes parse with a message
 * that says what is accepted, and commands whose proofs are results refuse anything but `all`. Against the
 * simulator, whose model of the gate runs in the CLI's process (lean-bridge/simulator/kernelReplay.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { EXAMPLE, REPO, proofHole, readExample } from "../helpers";

const CLI = join(REPO, "dist", "cli.js");

function run(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const ARITH = "FimExamples/Arith.lean";
const hole = (() => {
  const h = proofHole(readExample(ARITH), "add_le_add_4");
  return `${h.start.line}:${h.start.character}-${h.end.line}:${h.end.character}`;
})();
const verify = (...extra: string[]) =>
  run([
    "verify",
    "--project",
    EXAMPLE,
    "--file",
    ARITH,
    "--hole",
    hole,
    "--candidate",
    "omega",
    "--simulator",
    "--json",
    ...extra,
  ]);

test("a proof says what confirmed it: the kernel gate by default and with all, the server's word with off", () => {
  for (const [extra, confirmedBy] of [
    [[], "kernel-replay"],
    [["--kernel-gate", "all"], "kernel-replay"],
    [["--kernel-gate", "off"], "server"],
  ] as const) {
    const r = verify(...extra);
    assert.equal(r.code, 0, r.stderr);
    const v = JSON.parse(r.stdout) as { kind: string; confirmedBy?: string };
    assert.equal(v.kind, "proved", r.stdout);
    assert.equal(v.confirmedBy, confirmedBy, extra.join(" "));
  }
});

test("--kernel-gate values are checked, and eval and export take only all", () => {
  const bad = verify("--kernel-gate", "share:2");
  assert.equal(bad.code, 2, bad.stderr);
  assert.match(bad.stderr, /--kernel-gate share:2: expected all, off, auto, or share:X/);
  // An input that exists: a missing one is refused first, with its own message.
  const evalOff = run([
    "eval",
    EXAMPLE,
    "--model",
    "openai:http://127.0.0.1:9#m",
    "--out",
    join(REPO, ".never"),
    "--simulator",
    "--kernel-gate",
    "off",
  ]);
  assert.equal(evalOff.code, 2, evalOff.stderr);
  assert.match(evalOff.stderr, /--kernel-gate off: this command's proofs are results/);
  const exportOff = run([
    "export",
    EXAMPLE,
    "--out",
    join(REPO, ".never"),
    "--verify",
    "--simulator",
    "--kernel-gate",
    "share:0.5",
  ]);
  assert.equal(exportOff.code, 2, exportOff.stderr);
  assert.match(exportOff.stderr, /--kernel-gate share:0\.5: this command's proofs are results/);
});
