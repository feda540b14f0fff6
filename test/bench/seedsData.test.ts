/**
 * What bench:seeds reads from a seed's dataset (bench/seedsData.ts), on the real-Lean workspace exported as its runs
 * mine it (60/15/25, the seed's own draw; the exporter alone, no Lean): the held-out tasks, the split's figures, and
 * a prover's scores turned into a per-seed baseline entry.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Ajv2020 from "ajv/dist/2020";
import { exportDataset } from "../../lean-bridge/dataset/exporter";
import { HOLE_KINDS } from "../../lean-bridge/holes/mine";
import { REAL_LEAN_SPLIT_FRACTIONS, type ProverScores } from "../../bench/portfolio";
import { baselineEntry, instanceTaskIds, seedSplit } from "../../bench/seedsData";
import { readRows } from "../../bench/trivialProvers";
import { REPO } from "../helpers";

async function exported(seed: number): Promise<string> {
  const out = join(mkdtempSync(join(tmpdir(), "fim-seeds-data-")), "ds");
  const r = await exportDataset({
    workspace: join(REPO, "lean-env-prelude"),
    out,
    kinds: [...HOLE_KINDS],
    seed,
    maxFileBytes: 4 << 20,
    formats: ["native"],
    splitFractions: REAL_LEAN_SPLIT_FRACTIONS,
  });
  assert.equal(r.kind, "ok", JSON.stringify(r));
  return out;
}

test("each seed's split: ≥150 held-out tasks, ≤3 holes per theorem, no held-out family shape in training", async () => {
  const outs = [await exported(0), await exported(1)];
  try {
    const ids = outs.map((o) => instanceTaskIds(o, { split: "test" }));
    for (const [k, out] of outs.entries()) {
      const s = seedSplit(out, { split: "test" });
      process.stdout.write(`seed ${k}: ${JSON.stringify(s)}\n`);
      assert.ok(s.heldoutTasks >= 150, `${s.heldoutTasks} held-out tasks`);
      assert.ok(s.maxHolesPerTheorem >= 1 && s.maxHolesPerTheorem <= 3, `${s.maxHolesPerTheorem} holes`);
      assert.equal(s.familyShapesInTraining, 0);
      assert.ok(s.heldOutFamilyDeclarations > 0, "the shape check saw no held-out family");
      const rows = readRows<{ id: string; split: string; heldOut: string | null; kind: string }>(
        join(out, "tasks.jsonl"),
      );
      const instances = rows.filter((t) => t.split === "test" && t.heldOut === "instance");
      assert.deepEqual(
        ids[k],
        instances.map((t) => t.id),
      );
      assert.ok(ids[k]!.length < s.heldoutTasks, "held-out families count too");
      // The run's kinds narrow the tasks the same way the trainer's `kinds` does.
      const proofs = instanceTaskIds(out, { split: "test", kinds: ["proof"] });
      assert.deepEqual(
        proofs,
        instances.filter((t) => t.kind === "proof").map((t) => t.id),
      );
      assert.ok(proofs.length > 0 && proofs.length < ids[k]!.length);
    }
    assert.notDeepEqual(ids[0], ids[1], "the held-out draw does not change with the seed");
  } finally {
    for (const o of outs) rmSync(dirname(o), { recursive: true, force: true });
  }
});

test("a prover's scores become a baseline entry shaped like the arms', per family merged over both sets", () => {
  const scores: ProverScores = {
    name: "fixed portfolio",
    candidate: "first | rfl | simp",
    instances: {
      proved: 3,
      tasks: 4,
      families: { "A#W": { proved: 3, tasks: 3 }, "B#W": { proved: 0, tasks: 1 } },
    },
    families: { proved: 1, tasks: 4, families: { "B#W": { proved: 1, tasks: 4 } } },
    proved: ["a", "b", "c", "d"],
  };
  const entry = baselineEntry(2, scores);
  assert.deepEqual(entry, {
    seed: 2,
    candidate: "first | rfl | simp",
    instances: { "pass@1": 0.75, tasks: 4 },
    families: { "pass@1": 0.25, tasks: 4 },
    by_family: { "A#W": { "pass@1": 1, tasks: 3 }, "B#W": { "pass@1": 0.2, tasks: 5 } },
    proved: ["a", "b", "c", "d"],
  });
  // Without its ids, the entry is what the JSON's baselines hold (bench/seeds.schema.json).
  const schema = JSON.parse(readFileSync(join(REPO, "bench", "seeds.schema.json"), "utf8")) as object;
  const validate = new Ajv2020({ strict: true })
    .addSchema(schema)
    .compile({ $ref: "fim-rlvr-seeds/3#/$defs/BaselineRuns" });
  const { seed, candidate, instances, families, by_family } = entry;
  assert.ok(validate([{ seed, candidate, instances, families, by_family }]), JSON.stringify(validate.errors));
  assert.equal(validate([entry]), false, "the ids are not part of the JSON");
});
