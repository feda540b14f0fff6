/** Exporting the example workspace in tests: the options every such export shares, and its task rows read back. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { ExportOptions } from "../../lean-bridge/dataset/exporter";
import type { TaskRecord } from "../../lean-bridge/dataset/records";
import { HOLE_KINDS } from "../../lean-bridge/holes/mine";
import { EXAMPLE } from "../helpers";

/** Every hole kind of EXAMPLE, seed 0, files up to 4 MiB, native rows; `extra` overrides any of it. */
export function exportOptions(out: string, extra: Partial<ExportOptions> = {}): ExportOptions {
  return {
    workspace: EXAMPLE,
    out,
    kinds: [...HOLE_KINDS],
    seed: 0,
    maxFileBytes: 4 << 20,
    formats: ["native"],
    ...extra,
  };
}

/** The rows of a written dataset's tasks.jsonl. */
export function tasksOf(datasetDir: string): TaskRecord[] {
  return readFileSync(join(datasetDir, "tasks.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as TaskRecord);
}
