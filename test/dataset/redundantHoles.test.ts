/**
 * `export --verify` drops holes whose proof Lean completes with `skip` (nothing) in their place: their goals are
 * closed before them, or the rest of the proof closes them anyway, so no candidate's reward there would mean
 * anything (verify/noopProbe.ts). They are counted in report.json's verification section. Run against the
 * simulator, which models a no-op in such a hole as Lean runs it; the same check runs against Lean in
 * test/real-lean.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { mineText } from "../../lean-bridge/holes/mine";
import { JsonlWriter } from "../../lean-bridge/dataset/jsonl";
import { PendingHeads } from "../../lean-bridge/dataset/pendingHeads";
import { TaskSketchWriter } from "../../lean-bridge/dataset/taskSketches";
import { verifySketches } from "../../lean-bridge/dataset/verifyTasks";
import { recordsOf, rowsOf, sketchTasks } from "./sketchedTasks";
import { COMPLETE_WITHOUT_HOLE } from "../../lean-bridge/verify/noopProbe";
import { datasetCard } from "../../lean-bridge/dataset/card";
import { inMemory } from "../harness";
import { tempDir } from "../tempDirs";

const FILE = "Redundant.lean";
const TEXT = `theorem closed_before (a : Nat) : a + 0 = a := by
  simp
  done

theorem closes_anyway (a b : Nat) (h : a + 0 ≤ b) : a ≤ b + 1 := by
  simp at h
  omega
`;

test("holes whose proof is complete without their middle are dropped and counted", async () => {
  const ws = tempDir("fim-redundant-");
  writeFileSync(join(ws, FILE), TEXT);
  const sketched = sketchTasks(ws, [{ file: FILE, text: TEXT, holes: mineText(TEXT).holes }]);
  const tasks = recordsOf(sketched);
  // The simulator knows `omega` alone proves `closes_anyway` only from this oracle (it has no tactics).
  const oracle = { alternatives: { closes_anyway: ["by\n  omega"] } };
  const h = await inMemory({ cwd: ws, oracle }, { projectRoot: ws });
  try {
    const kept = {
      sketches: new TaskSketchWriter(join(ws, "kept.bin")),
      goals: new JsonlWriter(join(ws, "goals.jsonl")),
      heads: new PendingHeads(),
    };
    const result = await verifySketches(
      h.pool,
      sketched.sketchPath,
      sketched.filesPath,
      sketched.heads,
      kept,
      {},
    ).finally(() => {
      kept.sketches.close();
      kept.goals.close();
    });
    assert.equal(result.kind, "ok");
    if (result.kind !== "ok") return;
    const report = result.report;
    const redundant = tasks.filter((t) => t.middle === "done" || t.middle === "simp at h");
    assert.equal(redundant.length, 2, "the miner offers the `done` and the unneeded `simp at h`");
    assert.equal(report.completeWithoutHole, 2, JSON.stringify(report));
    assert.equal(report.droppedByReason[COMPLETE_WITHOUT_HOLE], 2);
    assert.equal(report.dropped, 2);
    assert.equal(report.kept, tasks.length - 2);
    for (const t of redundant)
      assert.match(report.examples.find((e) => e.id === t.id)?.reason ?? "", /complete without it/);
    const keptRows = rowsOf(ws, sketched, join(ws, "kept.bin"), kept.heads, join(ws, "goals.jsonl"));
    const keptIds = new Set(keptRows.map((t) => t.id));
    for (const t of tasks) assert.equal(keptIds.has(t.id), !redundant.includes(t), `${t.middle}`);
    // The dataset card says how many were dropped for it.
    const card = datasetCard({
      ...JSON.parse(JSON.stringify(cardBase)),
      verification: report,
    } as Parameters<typeof datasetCard>[0]);
    assert.match(card, /2 complete without their middle/);
  } finally {
    await h.close();
  }
});

/** The least of an export report the card reads besides `verification`. */
const cardBase = {
  workspaceName: "w",
  workspace: "/w",
  toolchain: null,
  seed: 0,
  contextChars: 96,
  maxMiddleChars: 8192,
  files: { mined: 1, skipped: [] },
  declarations: { withTacticProofs: 2, withoutProofs: 0, skipped: {} },
  holes: {
    kept: {
      total: 4,
      byKind: {},
      bySplit: {},
      shares: {},
      byKindAndSplit: {},
      withoutReference: { total: 0, bySplit: {} },
    },
    duplicatesDropped: 0,
  },
  splitFractions: {},
  views: [],
  split: {
    mode: "dedup",
    families: { total: 1, heldOut: { validation: 0, test: 0 }, heldOutNames: [] },
    kindsWithoutTraining: [],
    heldOut: { instance: { validation: 0, test: 0 }, family: { validation: 0, test: 0 } },
  },
  warnings: [],
  overlap: {
    splitMode: "dedup",
    trainingDropped: 0,
    test: { tasks: 0, inTraining: 0 },
    validation: { tasks: 0, inTraining: 0 },
  },
};
