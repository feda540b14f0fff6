/**
 * The baselines on the real-Lean workspace (lean-env-prelude/), judged by the embedded Lean: a fixed portfolio of
 * tactics closes well under half of the test split's held-out tasks, and it is no empty check (it proves the
 * closed evaluations a portfolio must prove). Prints the figures. Off CI a machine without the embedded Lean skips,
 * saying why; where CI=true that is a failing test.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { exportDataset } from "../../lean-bridge/dataset/exporter";
import { HOLE_KINDS } from "../../lean-bridge/holes/mine";
import { REAL_LEAN_SPLIT_FRACTIONS, formatPortfolioReport, portfolioBaselines } from "../../bench/portfolio";
import { toolSkip } from "../toolSkip";
import { REPO } from "../helpers";
import { findEmbeddedLean } from "./preludeLean";

const lean = findEmbeddedLean();
const skip = toolSkip("the real-Lean baselines", lean.kind === "missing" && lean.reason);

test(
  "the fixed portfolio closes well under half of the real-Lean workspace's held-out tasks",
  { skip },
  async () => {
    if (lean.kind !== "found") return;
    process.env.FIM_EMBEDDED_LEAN = lean.path;
    const workspace = join(REPO, "lean-env-prelude");
    const out = join(mkdtempSync(join(tmpdir(), "fim-portfolio-")), "ds");
    try {
      const exported = await exportDataset({
        workspace,
        out,
        kinds: [...HOLE_KINDS],
        seed: 0,
        maxFileBytes: 4 << 20,
        formats: ["native"],
        splitFractions: REAL_LEAN_SPLIT_FRACTIONS,
      });
      assert.equal(exported.kind, "ok");
      // Three single tactics, not the bench's ten (`node --import tsx bench/baselines.ts --workspace lean-env-prelude` prints those): the test checks the
      // portfolio's properties, and each tactic left out saves a validation sweep of real checks.
      const report = await portfolioBaselines(out, workspace, { singleTactics: ["rfl", "simp", "simp [*]"] });
      process.stdout.write(formatPortfolioReport(report));
      const p = report.portfolio;
      const proved = p.instances.proved + p.families.proved;
      assert.ok(report.testTasks >= 150, `${report.testTasks} held-out test tasks`);
      assert.ok(proved < 0.35 * report.testTasks, `portfolio ${proved}/${report.testTasks}`);
      assert.ok(report.bestTactic.instances.proved <= p.instances.proved + p.families.proved);
      // Closed evaluations are what any portfolio proves: zero there would mean the check itself is broken.
      const closed = Object.entries(p.instances.families).filter(([f]) => /EvalDef|ClosedArith/.test(f));
      for (const [f, c] of closed) assert.equal(c.proved, c.tasks, f);
      assert.ok(proved > 0);
    } finally {
      rmSync(dirname(out), { recursive: true, force: true });
    }
  },
);
