/**
 * Candidates with IO at elaboration time against real Lean with Mathlib, in the sandbox: each attack is a
 * `run_tac` block (core Lean's, with Lean's IO lifted into TacticM) that does its harm and then, only if the harm
 * worked, lets the hole's own proof run. In the sandbox every such write, read of a token or kill fails, so the
 * candidate's verdict is its own failure (never masked, never paid), nothing outside changed, and the next
 * check is proved as before. The policy is switched off here (NO_POLICY) so that the candidates reach Lean and
 * only the sandbox stands in their way. Needs a built lean-env-mathlib and bubblewrap (the hosted workflow's
 * Mathlib job); skipped with the reason printed elsewhere, failing where FIM_REAL_LEAN_MATHLIB=1.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { which } from "../../lean-bridge/server/launch";
import { LineIndex } from "../../lean-bridge/text/positions";
import { isMasked } from "../../lean-bridge/verify/verdict";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { NO_POLICY } from "../hacks/kernelGate.cases";
import { MATHLIB_EXAMPLE, announce, mathlibGate, mathlibProjectBuilt, realLeanTest } from "./gate";
import { leanPool } from "./pools";

const baseGate = mathlibGate(which("lake"), process.env, () => mathlibProjectBuilt(MATHLIB_EXAMPLE));
const gate =
  baseGate.kind === "run" && !which("bwrap")
    ? process.env.FIM_REAL_LEAN_MATHLIB === "1"
      ? ({
          kind: "missing",
          reason: "bubblewrap (bwrap) is not installed: apt-get install bubblewrap",
        } as const)
      : ({ kind: "skip", reason: "bubblewrap (bwrap) is not installed" } as const)
    : baseGate;
announce("test/real-lean/sandbox.test.ts", gate);

const FILE = `import Mathlib.Tactic.Ring

theorem attack_target (p : Prop) (h : ¬¬p) : p := by
  by_contra hn
  exact h hn
`;
const PROOF = "by_contra hn\nexact h hn";
const TOKEN_VARIABLE = "FIM_SANDBOX_TEST_TOKEN";
const POISON = join(MATHLIB_EXAMPLE, ".lake", "build", "lib", "lean", "FimMathlib", "FimSandboxPoison.olean");

function hole() {
  const start = FILE.indexOf("by_contra");
  return new LineIndex(FILE).rangeAt(start, FILE.length - 1);
}

realLeanTest(
  "real Lean + Mathlib in the sandbox: IO at elaboration time writes, reads and kills nothing, earns nothing, masks nothing",
  gate,
  async () => {
    process.env[TOKEN_VARIABLE] = "secret-token";
    // The verifier's stand-in: a process outside the sandbox the candidate tries to kill.
    const target = spawn("sleep", ["600"], { stdio: "ignore" });
    const pool = await leanPool({ root: MATHLIB_EXAMPLE, build: false, policy: NO_POLICY, sandbox: true });
    try {
      const task = { file: "FimMathlib/SandboxAttack.lean", text: FILE, hole: hole() };
      const attacks: [string, string][] = [
        ["write an import", `run_tac do IO.FS.writeFile "${POISON}" "cheat"`],
        [
          "read a token from the environment",
          `run_tac do let some _ ← IO.getEnv "${TOKEN_VARIABLE}" | throwError "no token here"`,
        ],
        [
          "kill the verifier",
          `run_tac do let r ← IO.Process.output { cmd := "kill", args := #["-9", "${target.pid}"] }; if r.exitCode != 0 then throwError "kill failed"`,
        ],
      ];
      for (const [name, attack] of attacks) {
        const v = await pool.verify(task, `${attack}\n${PROOF}`);
        assert.equal(v.kind, "failed", `${name}: ${JSON.stringify(v)}`);
        assert.equal(isMasked(v), false, name);
        assert.equal(rewardOf(v).reward, 0, name);
        // The next check is unaffected.
        assert.equal((await pool.verify(task, PROOF)).kind, "proved", `after ${name}`);
      }
      assert.equal(existsSync(POISON), false, "no import was written");
      assert.equal(target.exitCode, null, "the verifier's stand-in lives");
      assert.equal(target.signalCode, null);
    } finally {
      target.kill("SIGKILL");
      delete process.env[TOKEN_VARIABLE];
      await pool.stop();
    }
  },
);
