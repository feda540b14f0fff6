/**
 * The kernel gate against Lean (test/hacks/kernelGate.test.ts runs the same cases through the test doubles):
 * the replay program runs on this toolchain (its self-test), the controls are proved and confirmed by the
 * kernel replay, and every attack earns nothing. The one the issue describes, a declaration added under
 * `debug.skipKernelTC` that `#print axioms` does not show, must be what the gate refutes: Lean's server proves
 * it. Skipped, with the reason printed, where `lake` is not on PATH (failing instead where FIM_REAL_LEAN=1,
 * see gate.ts); the hosted workflow .github/workflows/real-lean.yml runs it on each toolchain of its matrix.
 */
import assert from "node:assert/strict";
import { buildLaunch } from "../../lean-bridge/server/launch";
import { LeanKernelGate } from "../../lean-bridge/verify/leanKernelGate";
import { DEFAULT_POLICY } from "../../lean-bridge/verify/policy";
import { isKernelGateFailure, isMasked } from "../../lean-bridge/verify/verdict";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { EXAMPLE } from "../helpers";
import { GATE_FILE, gateCases } from "../hacks/kernelGate.cases";
import { announce, processCoreGate, realLeanTest } from "./gate";
import { leanPool } from "./pools";

const gate = processCoreGate();
announce("test/real-lean/kernelGate.test.ts", gate);

const LIMITS = { memoryMb: 4096, cpuSeconds: 0, sandbox: false };

realLeanTest(
  "real Lean: the replay program runs on this toolchain and replays a theorem of its own",
  gate,
  async () => {
    assert.equal(buildLaunch({ kind: "lake" }, EXAMPLE).kind, "ok");
    const backend = new LeanKernelGate({ projectRoot: EXAMPLE, limits: LIMITS });
    const r = await backend.run(
      {
        documentText: "namespace N\n\ntheorem t (a : Nat) : a + 0 = a := by\n  simp\n\nend N\n",
        declaration: ["N", "t"],
        mayBePrivate: false,
        headerEndLine: -1,
        declarationLine: 2,
      },
      300_000,
    );
    assert.equal(r.kind, "replayed", JSON.stringify(r));
    if (r.kind === "replayed") {
      assert.equal(r.declaration, "N.t");
      assert.ok(r.replayed >= 1);
      assert.ok(
        r.axioms.every((a) => !a.declaredInDocument),
        JSON.stringify(r.axioms),
      );
    }
  },
);

realLeanTest(
  "real Lean: kernel-unchecked declarations and document axioms earn nothing; the gate refutes what the server proves",
  gate,
  async () => {
    const cases = gateCases().filter((c) => !c.modelledDivergence);
    const pools = new Map<typeof DEFAULT_POLICY, Awaited<ReturnType<typeof leanPool>>>();
    try {
      for (const c of cases) {
        const policy = c.policy ?? DEFAULT_POLICY;
        let pool = pools.get(policy);
        if (!pool) {
          pool = await leanPool({
            policy,
            kernelGate: () => ({
              backend: new LeanKernelGate({ projectRoot: EXAMPLE, limits: LIMITS }),
              mode: { kind: "all" },
              timeoutMs: 300_000,
              concurrency: 1,
            }),
          });
          pools.set(policy, pool);
        }
        const v = await pool.verify(
          { file: "FimExamples/Gate.lean", text: GATE_FILE, hole: c.hole },
          c.candidate,
        );
        if (c.proved) {
          assert.equal(v.kind, "proved", `${c.name}: ${JSON.stringify(v)}`);
          if (v.kind === "proved") assert.equal(v.confirmedBy, "kernel-replay", c.name);
          continue;
        }
        assert.notEqual(v.kind, "proved", `${c.name}: ${JSON.stringify(v)}`);
        assert.equal(isMasked(v), false, `${c.name}: never masked`);
        assert.equal(rewardOf(v, "partial").reward, 0, c.name);
        // What `#print axioms` cannot show (a theorem the kernel never saw) only the gate can refute.
        if (c.candidate.includes("unchecked") || c.candidate.includes("cheat4"))
          assert.ok(isKernelGateFailure(v), `${c.name}: the gate must refute it: ${JSON.stringify(v)}`);
      }
    } finally {
      for (const pool of pools.values()) await pool.stop();
    }
  },
);
