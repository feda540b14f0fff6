/**
 * The tasks a service knows by id: a dataset folder (`--dataset DIR`: tasks.jsonl, with the file texts of
 * files.jsonl so ranges match the text they were mined from), or the project mined on start.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportDataset } from "../dataset/exporter";
import { HOLE_KINDS } from "../holes/mine";
import type { VerifyTask } from "../verify/pool";
import { jsonLines, tasksById } from "../cli/batchInput";

import type { TaskTable } from "./items";
export type { TaskTable };

export type TasksLoad = { kind: "ok"; tasks: Map<string, VerifyTask> } | { kind: "error"; message: string };

/** Reads a dataset folder written by `fim-rlvr export`. */
export async function loadServedDataset(dir: string): Promise<TasksLoad> {
  let tasks: Map<string, VerifyTask>;
  try {
    tasks = await tasksById(join(dir, "tasks.jsonl"));
  } catch (error) {
    return { kind: "error", message: `${dir}: ${error instanceof Error ? error.message : String(error)}` };
  }
  const texts = new Map<string, string>();
  try {
    for await (const line of jsonLines(join(dir, "files.jsonl"))) {
      const row = JSON.parse(line) as { file?: unknown; text?: unknown };
      if (typeof row.file === "string" && typeof row.text === "string") texts.set(row.file, row.text);
    }
  } catch {
    // Without files.jsonl the files are read from the project, as verify-batch does.
  }
  for (const task of tasks.values()) {
    const text = texts.get(task.file);
    if (text !== undefined) task.text = text;
  }
  return { kind: "ok", tasks };
}

/** Mines the project into a temporary dataset (all four hole kinds, seed 0, as `export` does) and loads it. */
export async function mineServedTasks(projectRoot: string): Promise<TasksLoad> {
  const scratch = mkdtempSync(join(tmpdir(), "fim-rlvr-serve-"));
  try {
    const out = join(scratch, "dataset");
    const exported = await exportDataset({
      workspace: projectRoot,
      out,
      kinds: [...HOLE_KINDS],
      seed: 0,
      maxFileBytes: 4 * 1024 * 1024,
      formats: ["native"],
    });
    if (exported.kind === "cancelled") return { kind: "error", message: "mining was cancelled" };
    if (exported.kind === "error" || exported.kind === "empty")
      return { kind: "error", message: `mining ${projectRoot}: ${exported.message}` };
    return await loadServedDataset(out);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
