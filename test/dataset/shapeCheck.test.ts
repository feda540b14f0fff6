/**
 * `export --verify` checks each proved hole again with `sorry` in its place: a hole cut mid-tactic leaves
 * a parse error where `sorry` ends, and is dropped and counted. Run against the simulator, whose parser
 * model reports that error (lean-bridge/simulator/judge.ts); the same check runs against Lean in
 * test/real-lean.
 */
import { test } from "node:test";
import { lex } from "../../lean-bridge/lean/lexer";
import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mineText } from "../../lean-bridge/holes/mine";
import { JsonlWriter, readJsonl } from "../../lean-bridge/dataset/jsonl";
import { CodePointIndex, fileRecord, taskRecord, type TaskRecord } from "../../lean-bridge/dataset/records";
import { NOT_WHOLE, verifyPending } from "../../lean-bridge/dataset/verifyTasks";
import { LineIndex } from "../../lean-bridge/text/positions";
import { inMemory } from "../harness";

const FILE = "Shape.lean";
const TEXT = `theorem by_cases_ok (n : Nat) : n + 0 = n := by
  cases n with
  | zero => rfl
  | succ m => simp
`;

test("a hole cut mid-tactic fails the sorry check and is dropped; whole holes are kept", async () => {
  const ws = mkdtempSync(join(tmpdir(), "fim-shape-"));
  writeFileSync(join(ws, FILE), TEXT);
  const mined = mineText(TEXT);
  const context = {
    file: FILE,
    imports: [],
    scope: [],
    codePoints: new CodePointIndex(TEXT),
    contextChars: 96,
  };
  const whole = mined.holes.map((h) => taskRecord(h, "train", 0, context));
  assert.ok(whole.length >= 3, "the miner finds the proof and the two alternatives' bodies");
  // What the old layout rule cut: `cases n with` alone, as if the alternatives were new tactics.
  const start = TEXT.indexOf("cases n with");
  const end = start + "cases n with".length;
  const index = new LineIndex(TEXT);
  const proof = mined.holes.find((h) => h.kind === "proof")!;
  const tokens = lex(TEXT);
  const cut = taskRecord(
    {
      ...proof,
      kind: "tactic",
      start,
      end,
      range: index.rangeAt(start, end),
      middle: TEXT.slice(start, end),
      declPrefix: TEXT.slice(0, start),
      declSuffix: TEXT.slice(end).trimEnd(),
      declFrom: 0,
      declTo: end + TEXT.slice(end).trimEnd().length,
      firstToken: tokens.starts.indexOf(start),
      lastToken: tokens.ends.indexOf(end),
    },
    "train",
    0,
    context,
  );
  const pending = join(ws, "pending.jsonl");
  const files = join(ws, "files.jsonl");
  const kept = join(ws, "kept.jsonl");
  const pendingOut = new JsonlWriter(pending);
  for (const t of [...whole, cut]) pendingOut.write(t);
  pendingOut.close();
  const filesOut = new JsonlWriter(files);
  filesOut.write(fileRecord(FILE, TEXT));
  filesOut.close();

  const h = await inMemory({ cwd: ws }, { projectRoot: ws });
  try {
    const keptOut = new JsonlWriter(kept);
    const result = await verifyPending(h.pool, pending, files, whole.length + 1, keptOut, {}).finally(() =>
      keptOut.close(),
    );
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
    const keptIds = [...readJsonl<TaskRecord>(kept)].map((t) => t.id);
    assert.deepEqual(
      keptIds,
      whole.map((t) => t.id),
    );
  } finally {
    await h.close();
  }
});
