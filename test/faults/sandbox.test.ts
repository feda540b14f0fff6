/** The OS sandbox for Lean's processes, run for real where bubblewrap is installed (test:setup installs it). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { buildLaunch, sandboxTmpDir, sandboxed, which } from "../../lean-bridge/server/launch";
import { VerifierPool } from "../../lean-bridge/verify/pool";
import { EXAMPLE, proofHole, readExample } from "../helpers";
import { toolSkip } from "../toolSkip";
import { tempDir } from "../tempDirs";

const skip = which("bwrap")
  ? false
  : "bubblewrap (bwrap) is not installed: apt-get install bubblewrap, or npm run test:setup";
toolSkip("sandbox tests", skip);

test(
  "inside the sandbox: no network but loopback, a read-only system and /tmp, a writable project and TMPDIR",
  { skip },
  () => {
    const project = tempDir("fim-sandbox-");
    mkdirSync(sandboxTmpDir(project), { recursive: true });
    const script =
      'touch /tmp/fim-rlvr-probe 2>/dev/null && echo tmp-writable; touch "$TMPDIR/probe" && echo tmpdir-writable; ' +
      "tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '; touch /usr/fim-rlvr-probe 2>/dev/null && echo system-writable; touch ./probe && echo project-writable";
    const [program, ...args] = sandboxed(["sh", "-c", script], project);
    const r = spawnSync(program!, args, { cwd: project, encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(r.stdout.trim().split("\n"), ["tmpdir-writable", "lo", "project-writable"]);
  },
);

test("a verifier pool runs its server inside the sandbox and still verifies", { skip }, async () => {
  const project = join(tempDir("fim-sandbox-"), "ws");
  cpSync(EXAMPLE, project, { recursive: true });
  const launch = buildLaunch({ kind: "simulator" }, project, {
    memoryMb: 1024,
    cpuSeconds: 600,
    sandbox: true,
  });
  assert.equal(launch.kind, "ok");
  if (launch.kind !== "ok") return;
  assert.equal(launch.spec.command[0], "bwrap");
  assert.ok(launch.spec.command.includes("--unshare-net"));
  const started = await VerifierPool.start({
    projectRoot: project,
    launch: launch.spec,
    slots: 1,
    timeoutMs: 20_000,
    memoryPerWorkerMb: 1,
  });
  assert.equal(started.kind, "ok", started.kind === "error" ? started.message + started.stderr : "");
  if (started.kind !== "ok") return;
  try {
    const text = readFileSync(join(project, "FimExamples", "Arith.lean"), "utf8");
    assert.equal(text, readExample("FimExamples/Arith.lean"));
    const v = await started.pool.verify(
      { file: "FimExamples/Arith.lean", hole: proofHole(text, "add_le_add_2") },
      "omega",
    );
    assert.equal(v.kind, "proved");
  } finally {
    await started.pool.stop();
  }
});
