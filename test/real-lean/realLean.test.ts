/**
 * The same checks against the real Lean server. They run wherever `lake` is on PATH (the hosted-CI workflow
 * .github/workflows/real-lean.yml installs elan for them and runs them on each toolchain of its matrix) and
 * are skipped, with the reason printed, elsewhere (failing instead where FIM_REAL_LEAN=1, see gate.ts).
 */
import assert from "node:assert/strict";
import { LineIndex } from "../../lean-bridge/text/positions";
import { proofHole, readExample } from "../helpers";
import { workspaceDeclarations } from "../workspaceOracle";
import { announce, processCoreGate, realLeanTest } from "./gate";
import { leanPool } from "./pools";

const gate = processCoreGate();
announce("test/real-lean/realLean.test.ts", gate);

const ARITH = "FimExamples/Arith.lean";

realLeanTest("real Lean: proved, failed, incomplete, and the verifier says Lean", gate, async () => {
  const pool = await leanPool({ slots: 2 });
  try {
    const text = readExample(ARITH);
    const hole = proofHole(text, "add_le_add_3");
    const proved = await pool.verify({ file: ARITH, hole }, "omega");
    assert.equal(proved.kind, "proved", JSON.stringify(proved));
    assert.equal(proved.verifier.kind, "lean");
    assert.match(proved.verifier.label, /^Lean/);
    assert.equal((await pool.verify({ file: ARITH, hole }, "exact Nat.le_refl _")).kind, "failed");
    const lt = proofHole(text, "lt_of_add_2");
    assert.equal(
      (await pool.verify({ file: ARITH, hole: lt }, "have h' : a < b := by omega")).kind,
      "incomplete",
    );
    assert.equal((await pool.verify({ file: ARITH, hole }, "exact sorry")).kind, "rejected");
  } finally {
    await pool.stop();
  }
});

realLeanTest(
  "real Lean: every example theorem's own proof verifies (the workspace and the bridge agree)",
  gate,
  async () => {
    const pool = await leanPool({ slots: 4 });
    try {
      // Every declaration with a proof in its file (the open goals, `sorry`, are test/real-lean/oracle.test.ts's).
      const proved = [...workspaceDeclarations()].filter(([, d]) => !d.open);
      assert.ok(proved.length > 80, `${proved.length} proofs`);
      const verdicts = await pool.verifyMany(
        proved.map(([, d]) => {
          const index = new LineIndex(d.text);
          return {
            task: { file: d.file, hole: d.hole },
            candidate: d.text.slice(index.offsetAt(d.hole.start), index.offsetAt(d.hole.end)),
          };
        }),
      );
      verdicts.forEach((v, k) => assert.equal(v.kind, "proved", `${proved[k]![0]}: ${JSON.stringify(v)}`));
    } finally {
      await pool.stop();
    }
  },
);

realLeanTest(
  "real Lean: `fim-rlvr export --verify` keeps every hole of the example workspace",
  gate,
  async () => {
    const { exportDataset } = await import("../../lean-bridge/dataset/exporter");
    const { exportOptions } = await import("../dataset/exampleExport");
    const { mkdtempSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const pool = await leanPool({ slots: 4 });
    try {
      const out = join(mkdtempSync(join(tmpdir(), "fim-real-export-")), "ds");
      const r = await exportDataset(exportOptions(out, { pool }));
      assert.equal(r.kind, "ok");
      if (r.kind !== "ok") return;
      // Every hole of a proof the files hold is kept; only holes whose middle is an open goal's `sorry` may go.
      const unverified = join(mkdtempSync(join(tmpdir(), "fim-real-export-")), "plain");
      assert.equal((await exportDataset(exportOptions(unverified))).kind, "ok");
      const { tasksOf } = await import("../dataset/exampleExport");
      const kept = new Set(tasksOf(out).map((t) => t.id));
      for (const t of tasksOf(unverified))
        if (t.middle !== "sorry")
          assert.ok(kept.has(t.id), `${t.decl}: ${t.kind} hole ${t.middle} was dropped`);
      assert.match(r.report.verification?.verifier ?? "", /^Lean/);
      // Every kept hole has goals left where it stands (it proves them), so Lean's `done` there shows them.
      assert.equal(r.report.verification?.withGoal, r.report.verification?.kept);
      const { readFileSync } = await import("node:fs");
      const first = JSON.parse(readFileSync(join(out, "tasks.jsonl"), "utf8").split("\n")[0]!) as {
        goal?: string;
      };
      assert.match(first.goal ?? "", /⊢/);
    } finally {
      await pool.stop();
    }
  },
);
