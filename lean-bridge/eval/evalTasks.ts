/**
 * The tasks an evaluation runs on, from a dataset folder: the split and hole kinds asked for, each with the
 * prompt parts the trainer builds its prompt from (trainer/fim_rlvr/tasks/data.py `Task`), and the dataset's identity
 * (its folder name, the workspace it came from, and a SHA-256 of its files) recorded with every result.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { PromptParts } from "../models/backend";
import { promptHeader } from "../models/promptContext";
import { readJsonl } from "../dataset/jsonl";
import type { ContextRecord, TaskRecord } from "../dataset/records";
import type { LoadedDataset } from "../train/dataset";
import type { EvalTask } from "./runEval";

export const SPLITS = ["train", "validation", "test", "all"] as const;
export type SplitChoice = (typeof SPLITS)[number];

/** SHA-256 over the dataset files that decide tasks (tasks.jsonl, files.jsonl, contexts.jsonl when present). */
export function datasetSha256(dir: string): string {
  const hash = createHash("sha256");
  for (const name of ["tasks.jsonl", "files.jsonl", "contexts.jsonl"]) {
    const path = join(dir, name);
    if (!existsSync(path)) continue;
    hash.update(`${name}\0`);
    hash.update(readFileSync(path));
  }
  return hash.digest("hex");
}

export function datasetIdentity(dataset: LoadedDataset): {
  id: string;
  workspace: string | null;
  sha256: string;
} {
  return {
    id: basename(dataset.dir),
    workspace: dataset.workspace ?? null,
    sha256: datasetSha256(dataset.dir),
  };
}

/** The declaration's full text around the hole, from its context row (as the trainer's data.py reads it). */
function partsOf(task: TaskRecord, context: ContextRecord | undefined): PromptParts {
  let prefix = task.prefix;
  let suffix = task.suffix;
  if (context) {
    const start = task.offsets.start - context.offsets.start;
    const end = task.offsets.end - context.offsets.start;
    if (
      start >= 0 &&
      start <= end &&
      end <= context.text.length &&
      context.text.slice(start, end) === task.middle
    ) {
      prefix = context.text.slice(0, start);
      suffix = context.text.slice(end);
    }
  }
  const goal = (task as TaskRecord & { goal?: unknown }).goal;
  return {
    prefix,
    suffix,
    kind: task.kind,
    indent: task.indent ?? 0,
    ...(typeof goal === "string" && goal.trim() ? { goal } : {}),
    ...(context?.statement ? { statement: context.statement } : {}),
    ...(context ? { header: promptHeader(context.imports, context.scope, context.variables) } : {}),
  };
}

/** The rows of contexts.jsonl with these indices (a dataset from before contexts.jsonl has none). */
function contextsOf(dir: string, wanted: ReadonlySet<number>): Map<number, ContextRecord> {
  const rows = new Map<number, ContextRecord>();
  const path = join(dir, "contexts.jsonl");
  if (wanted.size === 0 || !existsSync(path)) return rows;
  let index = 0;
  for (const row of readJsonl<ContextRecord>(path)) {
    const at = typeof row.context === "number" ? row.context : index;
    if (wanted.has(at)) rows.set(at, row);
    index++;
  }
  return rows;
}

/** The selected tasks in file order (tasks.jsonl's), each with the prompt parts the trainer builds. */
export function selectTasks(
  dataset: LoadedDataset,
  split: SplitChoice,
  kinds: readonly string[],
): EvalTask[] {
  const chosen: TaskRecord[] = [];
  for (const task of readJsonl<TaskRecord>(join(dataset.dir, "tasks.jsonl"))) {
    if (split !== "all" && task.split !== split) continue;
    if (!kinds.includes(task.kind)) continue;
    chosen.push(task);
  }
  const contexts = contextsOf(
    dataset.dir,
    new Set(chosen.flatMap((t) => (typeof t.context === "number" ? [t.context] : []))),
  );
  return chosen.map((task) => ({
    id: task.id,
    file: task.file,
    kind: task.kind,
    split: task.split,
    novel: typeof task.novel === "boolean" ? task.novel : null,
    heldOut: heldOutOf(task),
    range: task.range,
    parts: partsOf(task, contexts.get(task.context)),
    middle: task.middle,
  }));
}

/** How a held-out task is held out (tasks.jsonl `heldOut`), or null where the dataset does not say. */
function heldOutOf(task: TaskRecord): "instance" | "family" | null {
  const heldOut = (task as TaskRecord & { heldOut?: unknown }).heldOut;
  return heldOut === "instance" || heldOut === "family" ? heldOut : null;
}

/** Scripted test models answer with a task's own proof: found by the prompt's prefix and suffix. */
export function referenceLookup(tasks: readonly EvalTask[]): (parts: PromptParts) => string | undefined {
  const byParts = new Map<string, string>();
  for (const task of tasks) byParts.set(`${task.parts.prefix}\0${task.parts.suffix}`, task.middle);
  return (parts) => byParts.get(`${parts.prefix}\0${parts.suffix}`);
}
