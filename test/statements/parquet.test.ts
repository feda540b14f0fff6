/**
 * `fim-rlvr import` of a Parquet file (test/fixtures/import/statements.parquet, written once by pyarrow from
 * make_parquet.py next to it: miniF2F-style rows, an integer column, three row groups, snappy): every row
 * group is read, rows become the golden Lean files, the duplicate is kept once and the row whose header the
 * project cannot load is dropped with the simulator's message.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { asyncBufferFromFile, parquetMetadataAsync } from "hyparquet";
import { REPO, runCli } from "../helpers";
import { CLI, ENV, lines } from "./statementRun";
import { tempDir } from "../tempDirs";

const FIXTURES = join(REPO, "test", "fixtures", "import");
const PARQUET = join(FIXTURES, "statements.parquet");

test("the Parquet fixture spans several row groups (so the import reads group after group)", async () => {
  const metadata = await parquetMetadataAsync(await asyncBufferFromFile(PARQUET));
  assert.equal(metadata.row_groups.length, 3);
  assert.equal(Number(metadata.num_rows), 5);
});

test("import reads a Parquet statement file into golden Lean files (simulator)", async () => {
  const dir = tempDir("fim-import-pq-");
  cpSync(join(REPO, "lean-env", "lean-toolchain"), join(dir, "lean-toolchain"));
  writeFileSync(join(dir, "lakefile.toml"), 'name = "pq"\n');
  const out = join(dir, "ds");
  const r = await runCli(CLI, ["import", PARQUET, "--project", dir, "--out", out, "--simulator"], ENV);
  assert.equal(r.code, 0, r.stderr);
  const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
    format: string;
    rows: {
      read: number;
      malformed: number;
      duplicates: number;
      kept: number;
      byShape: Record<string, number>;
      dropped: Record<string, number>;
    };
  };
  assert.equal(report.format, "parquet");
  assert.deepEqual(
    {
      read: report.rows.read,
      malformed: report.rows.malformed,
      duplicates: report.rows.duplicates,
      kept: report.rows.kept,
      environment: report.rows.dropped.environment,
    },
    { read: 5, malformed: 0, duplicates: 1, kept: 3, environment: 1 },
  );
  assert.deepEqual(report.rows.byShape, { "formal-statement": 4 });
  const dropped = lines<{ row: number; kind: string; message: string }>(join(out, "dropped.jsonl"));
  assert.deepEqual(
    dropped.map((d) => [d.row, d.kind]),
    [
      [4, "duplicate"],
      [5, "environment"],
    ],
  );
  assert.match(dropped[1]!.message, /NoSuchLibrary/);
  const tasks = lines<{ file: string; kind: string }>(join(out, "tasks.jsonl"));
  assert.deepEqual(tasks.map((t) => t.kind).sort(), ["proof", "proof", "proof"]);
  for (const [row, golden] of [
    ["R000001_pq_add_zero.lean", "parquet_row1.lean"],
    ["R000003_pq_le.lean", "parquet_row3.lean"],
  ] as const) {
    const task = tasks.find((t) => t.file.endsWith(row));
    assert.ok(task, `a task in ${row}`);
    assert.equal(readFileSync(join(dir, task.file), "utf8"), readFileSync(join(FIXTURES, golden), "utf8"));
  }
});
