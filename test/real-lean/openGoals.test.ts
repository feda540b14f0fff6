/**
 * `fim-rlvr export --verify` of a workspace's open goals where Lean answers (test/dataset/openGoals.test.ts
 * runs the same against the simulator): a statement whose proof is `sorry` is kept, without a reference and
 * with its goal, when Lean elaborates it with `sorry` as its proof; one Lean cannot elaborate is dropped with
 * Lean's message; a proof with a `sorry` inside gives no task. Runs in a fresh core-only Lake project; skipped,
 * with the reason printed, where `lake` is not on PATH (failing instead where FIM_REAL_LEAN=1, see gate.ts).
 */
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, runCli } from "../helpers";
import { announce, processCoreGate, realLeanTest } from "./gate";

const gate = processCoreGate();
announce("test/real-lean/openGoals.test.ts", gate);

const CLI = join(REPO, "dist", "cli.js");

const OPEN = `theorem open_add (n : Nat) : n + 0 = n := by
  sorry

theorem ill_typed (n : Nat) : n + "x" = n := by
  sorry

theorem proved (n : Nat) : n = n := by
  rfl

theorem partial_proof (p : Prop) (h : p) : p ∧ p := by
  constructor
  · have h2 : p := by sorry
    exact h2
  · exact h
`;

realLeanTest(
  "real Lean: export --verify keeps a statement without a proof that elaborates, without a reference",
  gate,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "fim-real-open-"));
    cpSync(join(REPO, "lean-env", "lean-toolchain"), join(dir, "lean-toolchain"));
    writeFileSync(join(dir, "lakefile.toml"), 'name = "realopen"\n');
    writeFileSync(join(dir, "Open.lean"), OPEN);
    const out = join(dir, "ds");
    const r = await runCli(CLI, ["export", dir, "--out", out, "--verify"], process.env);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /simulator/i, "Lean checked, not the simulator");
    const tasks = readFileSync(join(out, "tasks.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map(
        (l) =>
          JSON.parse(l) as { decl: string; middle: string; reference: false | null; goal: string | null },
      );
    assert.deepEqual(
      tasks.map((t) => [t.decl, t.middle, t.reference]),
      [
        ["open_add", "sorry", false],
        ["proved", "rfl", null],
      ],
    );
    assert.match(tasks[0]!.goal ?? "", /⊢ n \+ 0 = n/);
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
      declarations: { skipped: Record<string, number> };
      verification: {
        statements: { checked: number; elaborate: number };
        droppedByReason: Record<string, number>;
        examples: { reason: string }[];
      };
    };
    assert.equal(report.declarations.skipped["sorry-in-proof"], 1);
    assert.deepEqual(report.verification.statements, { checked: 2, elaborate: 1 });
    assert.equal(report.verification.droppedByReason["statement-does-not-elaborate"], 1);
    assert.match(report.verification.examples[0]?.reason ?? "", /\S/, "Lean's own message is kept");
  },
);
