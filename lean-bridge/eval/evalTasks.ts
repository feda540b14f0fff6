/**
 * The tasks an evaluation runs on, from a dataset folder: the split and hole kinds asked for, each with the
 * prompt parts the trainer builds its prompt from (trainer/fim_rlvr/data.py `Task`), and the dataset's identity
 * (its folder name, the workspace it came from, and a SHA-256 of its files) recorded with every result.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { PromptParts } from "../models/backend";
import type { TaskRecord } from "../dataset/records";
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

function partsOf(task: TaskRecord): PromptParts {
  const extra = task as TaskRecord & { goal?: unknown };
  return {
    prefix: task.prefix,
    suffix: task.suffix,
    kind: task.kind,
    indent: task.indent ?? 0,
    ...(typeof extra.goal === "string" && extra.goal.trim() ? { goal: extra.goal } : {}),
    ...(task.statement ? { statement: task.statement } : {}),
  };
}

/** The selected tasks in file order, as the trainer orders them. */
export function selectTasks(
  dataset: LoadedDataset,
  split: SplitChoice,
  kinds: readonly string[],
): EvalTask[] {
  const out: EvalTask[] = [];
  for (const task of dataset.tasks.values()) {
    if (split !== "all" && task.split !== split) continue;
    if (!kinds.includes(task.kind)) continue;
    const novel = (task as TaskRecord & { novel?: unknown }).novel;
    out.push({
      id: task.id,
      file: task.file,
      kind: task.kind,
      split: task.split,
      novel: typeof novel === "boolean" ? novel : null,
      range: task.range,
      parts: partsOf(task),
    });
  }
  return out;
}

/** Scripted test models answer with a task's own proof: found by the prompt's prefix and suffix. */
export function referenceLookup(dataset: LoadedDataset): (parts: PromptParts) => string | undefined {
  const byParts = new Map<string, string>();
  for (const task of dataset.tasks.values()) byParts.set(`${task.prefix}\0${task.suffix}`, task.middle);
  return (parts) => byParts.get(`${parts.prefix}\0${parts.suffix}`);
}
