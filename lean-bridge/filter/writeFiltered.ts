/**
 * Writes the filtered dataset in the layout `export` and `import` write (tasks.jsonl, files.jsonl,
 * contexts.jsonl, report.json, README.md), plus pass_rates.jsonl and the evaluation it rests on (filter/), as a
 * whole folder or nothing (dataset/atomicDir.ts). Tasks are streamed, never all in memory.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { StagingDir } from "../dataset/atomicDir";
import { cardConfigs, importCardConfigs } from "../dataset/cardSchema";
import { JsonlWriter, readJsonl } from "../dataset/jsonl";
import { filterCard, type FilterReport } from "./report";
import type { TaskRate } from "./passRates";

/** The evaluation's own files, kept with the dataset under filter/. */
const EVAL_FILES = ["results.jsonl", "summary.json", "report.html"];

export type WriteResult = { kind: "ok"; out: string } | { kind: "error"; message: string };

function sourceReport(dir: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(readFileSync(join(dir, "report.json"), "utf8"));
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function writeFilteredDataset(options: {
  source: string;
  out: string;
  evalDir: string;
  rates: readonly TaskRate[];
  report: FilterReport;
}): WriteResult {
  const prepared = StagingDir.prepare(options.out);
  if (prepared.kind === "error") return prepared;
  const staging = prepared.staging;
  try {
    const kept = new Set(options.rates.filter((r) => r.kept).map((r) => r.task_id));
    const keptFiles = new Set<string>();
    const tasks = new JsonlWriter(staging.file("tasks.jsonl"));
    try {
      for (const task of readJsonl<{ id: string; file: string }>(join(options.source, "tasks.jsonl"))) {
        if (!kept.has(task.id)) continue;
        tasks.write(task);
        keptFiles.add(task.file);
      }
    } finally {
      tasks.close();
    }
    const files = new JsonlWriter(staging.file("files.jsonl"));
    try {
      for (const row of readJsonl<{ file: string }>(join(options.source, "files.jsonl")))
        if (keptFiles.has(row.file)) files.write(row);
    } finally {
      files.close();
    }
    // Tasks point at their declaration's row by index: the rows are copied whole so every index stays right.
    if (existsSync(join(options.source, "contexts.jsonl")))
      copyFileSync(join(options.source, "contexts.jsonl"), staging.file("contexts.jsonl"));
    const rates = new JsonlWriter(staging.file("pass_rates.jsonl"));
    try {
      for (const rate of options.rates) rates.write(rate);
    } finally {
      rates.close();
    }
    mkdirSync(staging.file("filter"));
    for (const name of EVAL_FILES)
      if (existsSync(join(options.evalDir, name)))
        copyFileSync(join(options.evalDir, name), join(staging.file("filter"), name));
    const report = { ...sourceReport(options.source), filter: options.report };
    staging.write("report.json", JSON.stringify(report, null, 2) + "\n");
    // The rows are the source's: an export's (with contexts.jsonl) or an import's (its context inline).
    const configs = existsSync(join(options.source, "contexts.jsonl"))
      ? cardConfigs([])
      : importCardConfigs();
    staging.write("README.md", filterCard(options.report, options.out, configs));
    staging.commit();
    return { kind: "ok", out: options.out };
  } catch (error) {
    return {
      kind: "error",
      message: `cannot write ${options.out}: ${error instanceof Error ? error.message : String(error)}`,
    };
  } finally {
    staging.discard();
  }
}
