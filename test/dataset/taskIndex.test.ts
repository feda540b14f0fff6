/**
 * Datasets are read by index, never whole (issue 14): the index keeps ids and line offsets, reads a task back
 * when asked for, refuses what is not a task, and serves tasks after its file is removed (a scratch dataset).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exportDataset } from "../../lean-bridge/dataset/exporter";
import type { TaskRecord } from "../../lean-bridge/dataset/records";
import { TaskIndex } from "../../lean-bridge/dataset/taskIndex";
import { loadDataset } from "../../lean-bridge/train/dataset";
import { exportOptions } from "./exampleExport";
import { tempDir } from "../tempDirs";

async function exported(): Promise<string> {
  const out = join(tempDir("fim-index-"), "ds");
  const r = await exportDataset(exportOptions(out));
  assert.equal(r.kind, "ok");
  return out;
}

test("the index reads each task back exactly as written, and counts kinds per split", async () => {
  const dir = await exported();
  const rows = readFileSync(join(dir, "tasks.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as TaskRecord);
  const opened = TaskIndex.open(join(dir, "tasks.jsonl"));
  assert.equal(opened.kind, "ok");
  if (opened.kind !== "ok") return;
  const index = opened.index;
  assert.equal(index.size, rows.length);
  for (const row of rows) assert.deepEqual(index.get(row.id), row);
  assert.equal(index.get("no-such-id"), undefined);
  const train: Record<string, number> = {};
  for (const r of rows) if (r.split === "train") train[r.kind] = (train[r.kind] ?? 0) + 1;
  assert.deepEqual(index.kindCounts("train"), train);
  assert.deepEqual([...index.files()], [...new Set(rows.map((r) => r.file))]);
});

test("the index holds no task text: reading tasks one by one never keeps them", async () => {
  const dir = await exported();
  const opened = TaskIndex.open(join(dir, "tasks.jsonl"));
  assert.equal(opened.kind, "ok");
  if (opened.kind !== "ok") return;
  const index = opened.index;
  // Its only state is ids, offsets, lengths and counts: no field of the index holds a string of a task's text.
  const held = JSON.stringify(index, (_k, v: unknown) => (v instanceof Map ? [...v] : v));
  const middles = readFileSync(join(dir, "tasks.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => (JSON.parse(l) as TaskRecord).middle)
    .filter((m) => m.length > 20);
  assert.ok(middles.length > 0);
  assert.ok(!middles.some((m) => held.includes(JSON.stringify(m).slice(1, -1))), "no middle in the index");
  assert.ok(!held.includes('"prefix"'), "no row in the index");
});

test("the index keeps serving after its file is removed; bad lines and repeated ids are refused with their line", async () => {
  const dir = await exported();
  const path = join(dir, "tasks.jsonl");
  const first = JSON.parse(readFileSync(path, "utf8").split("\n")[0]!) as TaskRecord;
  const opened = TaskIndex.open(path);
  assert.equal(opened.kind, "ok");
  rmSync(dir, { recursive: true });
  if (opened.kind === "ok") assert.deepEqual(opened.index.get(first.id), first);
  const bad = join(tempDir("fim-index-bad-"), "tasks.jsonl");
  writeFileSync(bad, JSON.stringify(first) + "\n\n{oops\n");
  const refused = TaskIndex.open(bad);
  assert.equal(refused.kind, "error");
  if (refused.kind === "error") assert.match(refused.message, /line 3 is not a task/);
  writeFileSync(bad, JSON.stringify(first) + "\n" + JSON.stringify(first) + "\n");
  const repeated = TaskIndex.open(bad);
  assert.equal(repeated.kind, "error");
  if (repeated.kind === "error") assert.match(repeated.message, /line 2 repeats task id/);
});

test("training's loadDataset indexes the tasks and checks that files.jsonl holds each task's file", async () => {
  const dir = await exported();
  const loaded = loadDataset(dir);
  assert.equal(loaded.kind, "ok");
  if (loaded.kind !== "ok") return;
  const task = loaded.dataset.tasks.get(
    (JSON.parse(readFileSync(join(dir, "tasks.jsonl"), "utf8").split("\n")[0]!) as TaskRecord).id,
  );
  assert.ok(task && loaded.dataset.files.has(task.file));
  const files = readFileSync(join(dir, "files.jsonl"), "utf8").trim().split("\n");
  writeFileSync(join(dir, "files.jsonl"), files.slice(1).join("\n") + "\n");
  const missing = loadDataset(dir);
  assert.equal(missing.kind, "error");
  if (missing.kind === "error") assert.match(missing.message, /which files\.jsonl does not hold/);
});
