/**
 * Exports scale (issue #6 item 10): a generated workspace whose dataset is larger than the
 * JavaScript heap exports under `--max-old-space-size`, because records stream to disk. (The exporter that
 * held every file and task in memory ran out of heap on this test.)
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { generateCorpusFile, mulberry32 } from "../../bench/corpus";
import { REPO } from "../helpers";
import { tempDir } from "../tempDirs";

const HEAP_MB = 32;
const WORKSPACE_BYTES = 3_000_000;

test(`a ${WORKSPACE_BYTES / 1e6} MB workspace exports with a ${HEAP_MB} MB heap, its dataset larger than that heap`, () => {
  const root = tempDir("fim-scale-");
  const ws = join(root, "ws");
  mkdirSync(ws);
  const rand = mulberry32(42);
  let bytes = 0;
  let files = 0;
  while (bytes < WORKSPACE_BYTES) {
    const text = generateCorpusFile(rand, 400);
    writeFileSync(join(ws, `Gen${files++}.lean`), text);
    bytes += text.length;
  }
  const out = join(root, "ds");
  const r = spawnSync(
    process.execPath,
    [
      `--max-old-space-size=${HEAP_MB}`,
      join(REPO, "dist", "cli.js"),
      "export",
      ws,
      "--out",
      out,
      // Every task kept and long windows: the dataset must outgrow the heap.
      "--split",
      "declaration",
      "--context-chars",
      "4096",
    ],
    { encoding: "utf8", timeout: 240_000 },
  );
  assert.equal(r.status, 0, r.stderr.slice(-2000));
  const written = ["tasks.jsonl", "contexts.jsonl", "files.jsonl"].reduce(
    (sum, name) => sum + statSync(join(out, name)).size,
    0,
  );
  assert.ok(written > HEAP_MB * 1024 * 1024, `the dataset (${written} bytes) is larger than the heap`);
  const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
    files: { mined: number };
    holes: { kept: { total: number } };
  };
  assert.equal(report.files.mined, files);
  assert.ok(report.holes.kept.total > 20_000);
});
