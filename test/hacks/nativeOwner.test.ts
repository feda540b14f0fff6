/**
 * `allowNative` accepts only the checked declaration's own native computation. From Lean 4.29 each one is an
 * axiom named after the declaration that ran it (`X._native.native_decide.ax_1_1`, lean4#12217); a candidate
 * that cites a helper of the file proved by `native_decide` inherits the helper's axiom, which names the
 * helper: that computation is not the candidate's, and the proof fails. Through the simulator playing 4.29
 * (its `#print axioms` collects the cited declarations' axioms, as Lean's does); before 4.29 every native
 * computation shows as `Lean.ofReduceBool`, which names no declaration.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { DEFAULT_POLICY } from "../../lean-bridge/verify/policy";
import type { VerifyTask } from "../../lean-bridge/verify/verifier";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { inMemory } from "../harness";
import { proofHole } from "../helpers";

const FILE = `theorem helper : 2 ^ 10 = 1024 := by
  native_decide

theorem own : 2 ^ 10 = 1024 := by
  decide

theorem cites : 2 ^ 10 = 1024 := by
  decide
`;

const ORACLE = {
  alternatives: {
    helper: ["by native_decide"],
    own: ["by decide", "by native_decide"],
    cites: ["by decide", "by exact helper", "by native_decide"],
  },
};

const task = (name: string): VerifyTask => ({ file: "Native.lean", text: FILE, hole: proofHole(FILE, name) });
const policy = { ...DEFAULT_POLICY, allowNative: true };

test("allowNative on Lean 4.29: the checked declaration's own native axiom passes, a cited helper's fails", async () => {
  const toolchain = "leanprover/lean4:v4.29.0";
  const h = await inMemory({ toolchain, oracle: ORACLE }, { toolchain, policy });
  try {
    const own = await h.pool.verify(task("own"), "native_decide");
    assert.equal(own.kind, "proved", JSON.stringify(own));
    assert.deepEqual(own.kind === "proved" ? own.axioms : [], ["own._native.native_decide.ax_1_1"]);
    const cited = await h.pool.verify(task("cites"), "exact helper");
    assert.equal(cited.kind, "failed", JSON.stringify(cited));
    assert.match(
      cited.kind === "failed" ? cited.reason : "",
      /helper\._native\.native_decide\.ax_1_1.*only the checked declaration's own native computation \('cites'\)/,
    );
    assert.equal(rewardOf(cited, "partial").reward, 0);
    // The same hole's own computation is accepted: only the owner decides.
    assert.equal((await h.pool.verify(task("cites"), "native_decide")).kind, "proved");
  } finally {
    await h.close();
  }
});

test("without allowNative the helper's native axiom fails as any native code does", async () => {
  const toolchain = "leanprover/lean4:v4.29.0";
  const h = await inMemory({ toolchain, oracle: ORACLE }, { toolchain });
  try {
    const cited = await h.pool.verify(task("cites"), "exact helper");
    assert.equal(cited.kind, "failed", JSON.stringify(cited));
    assert.match(cited.kind === "failed" ? cited.reason : "", /allowed only with "allowNative": true/);
  } finally {
    await h.close();
  }
});
