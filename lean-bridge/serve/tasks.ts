/**
 * The tasks a service knows by id: a dataset folder (`--dataset DIR`: tasks.jsonl, with the file texts of
 * files.jsonl so ranges match the text they were mined from), or the project mined on start.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportDataset } from "../dataset/exporter";
import { HOLE_KINDS } from "../holes/mine";
import { readJsonl } from "../dataset/jsonl";
import type { TaskRecord } from "../dataset/records";
import { TaskIndex } from "../dataset/taskIndex";
import type { TaskTable } from "./items";
export type { TaskTable };

/**
 * A dataset as a service's task table (file texts attached, so ranges match what was mined). Each
 * task is looked up in the dataset's index when a batch names it: nothing is copied up front.
 */
export function taskTable(
  tasks: { get(id: string): TaskRecord | undefined; readonly size: number },
  files: ReadonlyMap<string, string>,
): TaskTable {
  return {
    get size() {
      return tasks.size;
    },
    get(id) {
      const task = tasks.get(id);
      if (!task) return undefined;
      const text = files.get(task.file);
      return { file: task.file, hole: task.range, ...(text !== undefined ? { text } : {}) };
    },
  };
}

export type TasksLoad = { kind: "ok"; tasks: TaskTable } | { kind: "error"; message: string };

/**
 * Reads a dataset folder written by `fim-rlvr export`: its tasks indexed (each read from disk when a request
 * names it), its file texts from files.jsonl.
 */
export async function loadServedDataset(dir: string): Promise<TasksLoad> {
  const opened = TaskIndex.open(join(dir, "tasks.jsonl"));
  if (opened.kind === "error") return { kind: "error", message: `${dir}: tasks.jsonl ${opened.message}` };
  const texts = new Map<string, string>();
  try {
    for (const row of readJsonl<{ file?: unknown; text?: unknown }>(join(dir, "files.jsonl")))
      if (typeof row.file === "string" && typeof row.text === "string") texts.set(row.file, row.text);
  } catch {
    // Without files.jsonl the files are read from the project, as verify-batch does.
  }
  return { kind: "ok", tasks: taskTable(opened.index, texts) };
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
      // A service answers for every hole of the project: none is dropped to keep splits apart.
      splitMode: "declaration",
      formats: ["native"],
    });
    if (exported.kind === "cancelled") return { kind: "error", message: "mining was cancelled" };
    if (exported.kind === "error" || exported.kind === "empty")
      return { kind: "error", message: `mining ${projectRoot}: ${exported.message}` };
    // The index keeps tasks.jsonl open: it reads tasks from it after the scratch folder is removed.
    return await loadServedDataset(out);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
