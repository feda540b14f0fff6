/**
 * `export --verify` checks each proved hole again with `sorry` in its place: a hole cut mid-tactic leaves
 * a parse error where `sorry` ends, and is dropped and counted. Run against the simulator, whose parser
 * model reports that error (lean-bridge/simulator/judge.ts); the same check runs against Lean in
 * test/real-lean.
 */
import { test } from "node:test";
import { lex } from "../../lean-bridge/lean/lexer";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { mineText } from "../../lean-bridge/holes/mine";
import { JsonlWriter } from "../../lean-bridge/dataset/jsonl";
import { PendingHeads } from "../../lean-bridge/dataset/pendingHeads";
import { TaskSketchWriter } from "../../lean-bridge/dataset/taskSketches";
import { NOT_WHOLE, verifySketches } from "../../lean-bridge/dataset/verifyTasks";
import { recordsOf, rowsOf, sketchTasks } from "./sketchedTasks";
import { LineIndex } from "../../lean-bridge/text/positions";
import { inMemory } from "../harness";
import { tempDir } from "../tempDirs";

const FILE = "Shape.lean";
const TEXT = `theorem by_cases_ok (n : Nat) : n + 0 = n := by
  cases n with
  | zero => rfl
  | succ m => simp
`;

test("a hole cut mid-tactic fails the sorry check and is dropped; whole holes are kept", async () => {
  const ws = tempDir("fim-shape-");
  writeFileSync(join(ws, FILE), TEXT);
  const mined = mineText(TEXT);
  assert.ok(mined.holes.length >= 3, "the miner finds the proof and the two alternatives' bodies");
  // What the old layout rule cut: `cases n with` alone, as if the alternatives were new tactics.
  const start = TEXT.indexOf("cases n with");
  const end = start + "cases n with".length;
  const index = new LineIndex(TEXT);
  const proof = mined.holes.find((h) => h.kind === "proof")!;
  const tokens = lex(TEXT);
  const cutHole = {
    ...proof,
    kind: "tactic" as const,
    start,
    end,
    range: index.rangeAt(start, end),
    middle: TEXT.slice(start, end),
    declPrefix: TEXT.slice(proof.declFrom, start),
    declSuffix: TEXT.slice(end, proof.declTo),
    firstToken: tokens.starts.indexOf(start),
    lastToken: tokens.ends.indexOf(end),
  };
  const sketched = sketchTasks(ws, [{ file: FILE, text: TEXT, holes: [...mined.holes, cutHole] }]);
  const records = recordsOf(sketched);
  const whole = records.slice(0, -1);
  const cut = records.at(-1)!;

  const h = await inMemory({ cwd: ws }, { projectRoot: ws });
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
    // Its own middle restores the file, so the cut hole is "proved"; only the sorry check catches it.
    assert.equal(report.checked, whole.length + 1);
    assert.deepEqual(report.shape, { checked: whole.length + 1, notWhole: 1, inconclusive: 0 });
    assert.equal(report.droppedByReason[NOT_WHOLE], 1);
    assert.equal(report.kept, whole.length);
    const example = report.examples.find((e) => e.id === cut.id);
    assert.match(example?.reason ?? "", /with `sorry` in the hole, Lean reports: unexpected token '\|'/);
    const keptIds = rowsOf(ws, sketched, join(ws, "kept.bin"), kept.heads, join(ws, "goals.jsonl")).map(
      (t) => t.id,
    );
    assert.deepEqual(
      keptIds,
      whole.map((t) => t.id),
    );
  } finally {
    await h.close();
  }
});
