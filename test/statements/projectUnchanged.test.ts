/**
 * `fim-rlvr import` stays out of the project's own data (issue 25 item 1): its Lean files go under
 * PROJECT/.fim-rlvr/statements/, so mining the project for `train WORKSPACE` gives the very same tasks before and
 * after an import, and so do export's report.json and card (import.test.ts compares its tasks, contexts and
 * files, and checks that the simulator still proves imported rows); a folder an earlier version's import wrote
 * among the sources is skipped and listed with why.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prepareTarget } from "../../lean-bridge/train/dataset";
import { IMPORT_MARKER } from "../../lean-bridge/util/projectLayout";
import { REPO, runCli } from "../helpers";

const CLI = join(REPO, "dist", "cli.js");
const THEOREMS = join(REPO, "test", "fixtures", "import", "theorems.jsonl");
/** The dataset's files whose bytes depend on nothing but the workspace (report.json also has the time taken). */
const DATA_FILES = ["tasks.jsonl", "files.jsonl", "contexts.jsonl", "README.md"];

/** A copy of the example workspace, without build output or files of ours. */
function workspace(): string {
  const dir = join(mkdtempSync(join(tmpdir(), "fim-unchanged-")), "ws");
  cpSync(join(REPO, "lean-env"), dir, {
    recursive: true,
    filter: (src) => !/[\\/](\.lake|\.fim-rlvr)$/.test(src),
  });
  return dir;
}

function exported(out: string): Record<string, string> {
  const files = Object.fromEntries(DATA_FILES.map((f) => [f, readFileSync(join(out, f), "utf8")]));
  const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as Record<string, unknown>;
  delete report.timeMs;
  return { ...files, "report.json": JSON.stringify(report) };
}

async function exportTo(ws: string, out: string): Promise<Record<string, string>> {
  const r = await runCli(CLI, ["export", ws, "--out", out], process.env);
  assert.equal(r.code, 0, r.stderr);
  return exported(out);
}

/** What `train WORKSPACE` trains on: the workspace mined into RUN_DIR/dataset (train/dataset.ts). */
async function minedForTraining(ws: string): Promise<string> {
  const runDir = mkdtempSync(join(tmpdir(), "fim-unchanged-run-"));
  const prepared = await prepareTarget(ws, runDir, { resume: false, verifier: "simulator" });
  assert.equal(prepared.kind, "ok", prepared.kind === "error" ? prepared.message : "");
  return readFileSync(join(runDir, "dataset", "tasks.jsonl"), "utf8");
}

test("train's mining, and export's report and card, are the same before and after an import into the project", async () => {
  const ws = workspace();
  const scratch = mkdtempSync(join(tmpdir(), "fim-unchanged-out-"));
  const before = await exportTo(ws, join(scratch, "before"));
  const trainBefore = await minedForTraining(ws);

  const imported = await runCli(CLI, ["import", THEOREMS, "--project", ws, "--simulator"], process.env);
  assert.equal(imported.code, 0, imported.stderr);
  assert.ok(existsSync(join(ws, ".fim-rlvr", "statements", "theorems")), imported.stderr);
  const topLevel = readdirSync(ws).filter((f) => !f.startsWith("."));
  assert.ok(!topLevel.includes("FimRlvrImported"), `import wrote among the sources: ${topLevel.join(", ")}`);

  const after = await exportTo(ws, join(scratch, "after"));
  for (const file of Object.keys(before)) assert.equal(after[file], before[file], `${file} changed`);
  assert.equal(await minedForTraining(ws), trainBefore, "train's mined tasks changed");
});

test("a folder an earlier import wrote among the sources is not mined, and the export says so", async () => {
  const ws = workspace();
  const scratch = mkdtempSync(join(tmpdir(), "fim-unchanged-out-"));
  const before = await exportTo(ws, join(scratch, "before"));
  const legacy = join(ws, "FimRlvrImported", "theorems", "H0123456789", "P0000");
  mkdirSync(legacy, { recursive: true });
  writeFileSync(join(ws, "FimRlvrImported", "theorems", IMPORT_MARKER), '{"importedBy":"fim-rlvr import"}\n');
  writeFileSync(
    join(legacy, "R000001_t.lean"),
    "namespace FimRlvrImported.R000001\n\ntheorem t : True := by\n  sorry\n\nend FimRlvrImported.R000001\n",
  );
  const r = await runCli(CLI, ["export", ws, "--out", join(scratch, "after")], process.env);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(join(scratch, "after", "report.json"), "utf8")) as {
    files: { skipped: { file: string; reason: string }[] };
  };
  assert.deepEqual(
    report.files.skipped.map((s) => s.file),
    ["FimRlvrImported/theorems"],
  );
  assert.match(report.files.skipped[0]!.reason, /written by `fim-rlvr import`/);
  assert.match(
    r.stderr,
    /skipped: 1 files \(FimRlvrImported\/theorems: Lean files written by `fim-rlvr import`/,
  );
  const after = exported(join(scratch, "after"));
  for (const file of ["tasks.jsonl", "files.jsonl", "contexts.jsonl"])
    assert.equal(after[file], before[file], `${file} changed`);
});
