/**
 * The hack classes of issue #6 against Lean itself: the defences the battery (test/hacks) shows against the
 * simulator and the lean-like server must hold where Lean answers. Skipped, with the reason printed, where
 * `lake` is not on PATH; the hosted workflow .github/workflows/real-lean.yml runs them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { buildLaunch, readToolchain, which } from "../../lean-bridge/server/launch";
import { DEFAULT_POLICY, type CandidatePolicy } from "../../lean-bridge/verify/policy";
import { VerifierPool, type VerifyTask } from "../../lean-bridge/verify/pool";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { LineIndex } from "../../lean-bridge/text/positions";
import { EXAMPLE, proofHole } from "../helpers";

const lake = which("lake");
const skip = lake
  ? false
  : "lake is not on PATH: real-Lean tests need a Lean toolchain (install elan; see .github/workflows/real-lean.yml)";
if (skip) process.stderr.write(`real-lean hack tests skipped: ${skip}\n`);

// Core Lean only (no imports), so the file needs nothing built. It is given as text; it never touches disk.
const FILE = `namespace N

theorem target (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by
  omega

example : 2 ^ 10 = 1024 := by
  decide

private theorem hidden (a : Nat) : a + 0 = a := by
  simp

instance : Inhabited Nat := by
  exact ⟨0⟩

theorem _root_.rooted : True := by
  trivial

theorem pair : True ∧ True := by
  constructor
  trivial
  trivial

end N
`;

/** The whole tactic proof of the first declaration whose text starts with `head`. */
function holeAfter(text: string, head: string) {
  const at = text.indexOf(head);
  let start = text.indexOf(":= by", at) + 5;
  while (/\s/.test(text[start] ?? "")) start++;
  const end = text.indexOf("\n\n", start);
  return new LineIndex(text).rangeAt(start, end);
}

const task = (hole: VerifyTask["hole"], text = FILE): VerifyTask => ({
  file: "FimExamples/Hacks.lean",
  text,
  hole,
});

async function leanPool(policy?: CandidatePolicy): Promise<VerifierPool> {
  const built = spawnSync("lake", ["build"], { cwd: EXAMPLE, encoding: "utf8" });
  assert.equal(built.status, 0, `lake build failed in lean-env:\n${built.stdout}\n${built.stderr}`);
  const launch = buildLaunch({ kind: "lake" }, EXAMPLE, { memoryMb: 4096, cpuSeconds: 0, sandbox: false });
  assert.equal(launch.kind, "ok");
  if (launch.kind !== "ok") throw new Error();
  const started = await VerifierPool.start({
    projectRoot: EXAMPLE,
    launch: launch.spec,
    slots: 1,
    timeoutMs: 120_000,
    memoryPerWorkerMb: 4096,
    toolchain: readToolchain(EXAMPLE),
    ...(policy ? { policy } : {}),
  });
  if (started.kind !== "ok") throw new Error(`${started.message}\n${started.stderr}`);
  return started.pool;
}

test(
  "real Lean: controls are proved and axiom-checked, anonymous, private and _root_ declarations included",
  { skip },
  async () => {
    const pool = await leanPool();
    try {
      for (const [hole, candidate] of [
        [proofHole(FILE, "target"), "omega"],
        [proofHole(FILE, "target"), "have v : Vector Nat 2 := #v[1, 2]\nomega"],
        [proofHole(FILE, "target"), 'have s : String := "-- /- not code"\nomega'],
        [proofHole(FILE, "target"), "have ring := h\nomega"],
        [proofHole(FILE, "target"), "set_option maxHeartbeats 400000 in omega"],
        [holeAfter(FILE, "example"), "decide"],
        [holeAfter(FILE, "example"), "decide +kernel"],
        [proofHole(FILE, "hidden"), "simp"],
        [holeAfter(FILE, "instance"), "exact ⟨0⟩"],
        [proofHole(FILE, "_root_.rooted"), "trivial"],
        [proofHole(FILE, "pair"), "constructor\ntrivial\ntrivial"],
      ] as const) {
        const v = await pool.verify(task(hole), candidate);
        assert.equal(v.kind, "proved", `${candidate}: ${JSON.stringify(v)}`);
        if (v.kind === "proved") assert.equal(v.axiomsChecked, true);
      }
    } finally {
      await pool.stop();
    }
  },
);

test(
  "real Lean: native code fails the axiom check even when the policy lets it through",
  { skip },
  async () => {
    const pool = await leanPool({ ...DEFAULT_POLICY, allowNative: true });
    try {
      for (const [hole, candidate] of [
        [holeAfter(FILE, "example"), "native_decide"],
        [holeAfter(FILE, "example"), "decide +native"],
        [proofHole(FILE, "target"), "have : 2 ^ 10 = 1024 := by native_decide\nomega"],
      ] as const) {
        const v = await pool.verify(task(hole), candidate);
        assert.equal(v.kind, "failed", `${candidate}: ${JSON.stringify(v)}`);
        if (v.kind === "failed") assert.match(v.reason, /Lean\.ofReduceBool/);
      }
    } finally {
      await pool.stop();
    }
  },
);

test("real Lean: options, sorry and doing nothing earn nothing", { skip }, async () => {
  const pool = await leanPool();
  try {
    for (const [hole, candidate] of [
      [proofHole(FILE, "target"), "set_option debug.skipKernelTC true in decide +kernel"],
      [proofHole(FILE, "target"), "set_option warn.sorry false in omega"],
      [holeAfter(FILE, "example"), "native_decide"],
      [proofHole(FILE, "pair"), "skip"],
      [proofHole(FILE, "pair"), "all_goals skip"],
      [proofHole(FILE, "pair"), "-- nothing"],
      [proofHole(FILE, "pair"), "skip\nskip\nskip\nskip"],
      [proofHole(FILE, "pair"), "skip\nskip\nskip\nexact absurd"],
    ] as const) {
      const v = await pool.verify(task(hole), candidate);
      assert.notEqual(v.kind, "proved", candidate);
      assert.equal(rewardOf(v, "partial").reward, 0, `${candidate}: ${JSON.stringify(v)}`);
    }
  } finally {
    await pool.stop();
  }
});

test(
  "real Lean: a header Lean cannot load is an environment verdict; a module file is refused clearly",
  { skip },
  async () => {
    const pool = await leanPool();
    try {
      const broken = `import NoSuchModule.Anywhere\n${FILE}`;
      const env = await pool.verify(task(proofHole(broken, "target"), broken), "omega");
      assert.equal(env.kind, "environment", JSON.stringify(env));
      const moduleFile = `module\n\n${FILE}`;
      const refused = await pool.verify(task(proofHole(moduleFile, "target"), moduleFile), "omega");
      assert.equal(refused.kind, "rejected");
      if (refused.kind === "rejected") assert.match(refused.reason, /`module` header/);
    } finally {
      await pool.stop();
    }
  },
);
