/**
 * Poisoned imports through a real verifier pool (the simulator as its server): a candidate whose code writes
 * an `.olean` of the workspace or of a package while it is checked earns nothing and chooses no masked outcome,
 * and no verdict after the change pays, cached proofs included. The writes are the test's own, made while the
 * candidate's check runs, standing in for the candidate's elaboration-time IO (the simulator runs none); the
 * sandbox that stops the write itself is test/faults/sandbox.test.ts's.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildLaunch } from "../../lean-bridge/server/launch";
import { IMPORTS_TAMPERED_RULE } from "../../lean-bridge/verify/importFingerprint";
import { VerifierPool } from "../../lean-bridge/verify/pool";
import { isMasked, type Verdict } from "../../lean-bridge/verify/verdict";
import { ImportFingerprint } from "../../lean-bridge/verify/importFingerprint";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { poolOver } from "../harness";
import { EXAMPLE, proofHole } from "../helpers";
import { leanLike } from "./leanLike";

const OWN = join(".lake", "build", "lib", "lean", "FimExamples", "Arith.olean");
const DEP = join(".lake", "packages", "dep", ".lake", "build", "lib", "lean", "Dep.olean");

async function startPool(): Promise<{ root: string; pool: VerifierPool }> {
  const root = join(mkdtempSync(join(tmpdir(), "fim-tamper-")), "ws");
  cpSync(EXAMPLE, root, { recursive: true });
  for (const file of [OWN, DEP]) {
    mkdirSync(join(root, file, ".."), { recursive: true });
    writeFileSync(join(root, file), "compiled module\n");
  }
  const launch = buildLaunch({ kind: "simulator" }, root, { memoryMb: 1024, cpuSeconds: 0, sandbox: false });
  assert.equal(launch.kind, "ok");
  if (launch.kind !== "ok") throw new Error("unreachable");
  const started = await VerifierPool.start({
    projectRoot: root,
    launch: launch.spec,
    slots: 2,
    timeoutMs: 20_000,
    memoryPerWorkerMb: 1,
  });
  assert.equal(started.kind, "ok", started.kind === "error" ? started.message : "");
  if (started.kind !== "ok") throw new Error("unreachable");
  return { root, pool: started.pool };
}

function hole(root: string, name: string) {
  const text = readFileSync(join(root, "FimExamples", "Arith.lean"), "utf8");
  return { file: "FimExamples/Arith.lean", hole: proofHole(text, name) };
}

function assertTampered(v: Verdict, file: string): void {
  assert.equal(v.kind, "rejected", JSON.stringify(v));
  if (v.kind !== "rejected") return;
  assert.equal(v.rule, IMPORTS_TAMPERED_RULE);
  assert.ok(v.reason.includes(file), v.reason);
  assert.match(v.reason, /What to do: stop this run/);
  assert.equal(isMasked(v), false, "never a masked outcome");
}

test("untouched imports: proofs are paid as before, the fingerprint finds nothing", async () => {
  const { root, pool } = await startPool();
  try {
    for (const name of ["add_le_add_1", "add_le_add_2", "add_le_add_1"])
      assert.equal((await pool.verify(hole(root, name), "omega")).kind, "proved", name);
    assert.equal(pool.stats.tampered, 0);
  } finally {
    await pool.stop();
    rmSync(join(root, ".."), { recursive: true, force: true });
  }
});

for (const [route, file] of [
  ["a package's import", DEP],
  ["the workspace's own module", OWN],
] as const)
  test(`${route} rewritten while a candidate is checked: that proof and every later verdict is rejected, none masked`, async () => {
    const { root, pool } = await startPool();
    try {
      assert.equal((await pool.verify(hole(root, "add_le_add_2"), "omega")).kind, "proved", "before");
      // The candidate's IO: `cheat : False` written into an import while its own check runs.
      const attacked = pool.verify(hole(root, "add_le_add_3"), "omega");
      writeFileSync(join(root, file), "compiled module\naxiom cheat : False\n");
      assertTampered(await attacked, file);
      // Nothing after the change pays: a cached proof, a fresh one, and failures that would be masked or not.
      assertTampered(await pool.verify(hole(root, "add_le_add_2"), "omega"), file);
      assertTampered(await pool.verify(hole(root, "add_le_add_4"), "omega"), file);
      assertTampered(await pool.verify(hole(root, "add_le_add_5"), "skip"), file);
      // Putting the bytes back does not undo it: the run stays stopped.
      writeFileSync(join(root, file), "compiled module\n");
      assertTampered(await pool.verify(hole(root, "add_le_add_6"), "omega"), file);
      assert.equal(pool.stats.tampered, 5);
    } finally {
      await pool.stop();
      rmSync(join(root, ".."), { recursive: true, force: true });
    }
  });

const FILE = `namespace N

theorem target (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by
  omega

theorem pair : True ∧ True := by
  constructor
  trivial
  trivial

end N
`;

test("through the lean-like server: partial credit and proofs after a poisoned import earn nothing, none masked", async () => {
  const root = mkdtempSync(join(tmpdir(), "fim-tamper-like-"));
  mkdirSync(join(root, DEP, ".."), { recursive: true });
  writeFileSync(join(root, DEP), "compiled module\n");
  const lean = await leanLike({ goalsAtHole: 2 });
  const pool = poolOver(lean.server, { projectRoot: root, imports: ImportFingerprint.take(root) });
  const task = (name: string) => ({
    file: "FimExamples/Hacks.lean",
    text: FILE,
    hole: proofHole(FILE, name),
  });
  try {
    assert.equal((await pool.verify(task("pair"), "trivial\ntrivial")).kind, "proved");
    const partial = await pool.verify(task("pair"), "trivial");
    assert.equal(partial.kind, "incomplete", JSON.stringify(partial));
    assert.ok(rewardOf(partial, "partial").reward > 0, "progress earns partial credit before the change");
    // A fresh spelling of the proof (not the cached one), checked while its IO poisons a package's import.
    const attacked = pool.verify(task("pair"), "trivial\n  trivial");
    writeFileSync(join(root, DEP), "compiled module\naxiom cheat : False\n");
    assertTampered(await attacked, DEP);
    const after = await pool.verify(task("pair"), "trivial");
    assertTampered(after, DEP);
    assert.equal(rewardOf(after, "partial").reward, 0, "no partial credit after the change");
    assertTampered(await pool.verify(task("pair"), "trivial\ntrivial"), DEP);
  } finally {
    await lean.close();
    rmSync(root, { recursive: true, force: true });
  }
});
