/**
 * What `verify-batch` reads. An input line is either a candidate line `{"file","hole","candidate"}` or a
 * dataset task line (tasks.jsonl: `range` is the hole, `middle` the candidate — re-verifying a dataset).
 * With `--candidates`, the input is the dataset's tasks and each candidate line `{"id","candidate"}` is
 * scored against the task with that id. Malformed lines become per-line errors, never a stopped batch.
 */
import { createReadStream, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { Range } from "vscode-languageserver-protocol";
import { TaskIndex } from "../dataset/taskIndex";
import type { VerifyTask } from "../verify/verifier";
import { UsageError } from "./usage";

/** An input line's own fields, kept in the output line beside the verdict. */
export type LineFields = Record<string, unknown>;

export type BatchLine =
  | { kind: "ok"; task: VerifyTask; candidate: string; fields: LineFields }
  | { kind: "error"; message: string; fields: LineFields };

function isPosition(value: unknown): value is { line: number; character: number } {
  const v = value as { line?: unknown; character?: unknown } | null;
  return typeof v === "object" && v !== null && Number.isInteger(v.line) && Number.isInteger(v.character);
}

function isRange(value: unknown): value is Range {
  const v = value as { start?: unknown; end?: unknown } | null;
  return typeof v === "object" && v !== null && isPosition(v.start) && isPosition(v.end);
}

function parseObject(line: string): { kind: "ok"; value: LineFields } | { kind: "error"; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return { kind: "error", message: `not JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { kind: "error", message: "each line must be a JSON object" };
  return { kind: "ok", value: value as LineFields };
}

/** Whether a line is a dataset task (tasks.jsonl) rather than a candidate line. */
function isTaskLine(v: LineFields): boolean {
  return !("hole" in v) && !("candidate" in v) && ("range" in v || "middle" in v);
}

/** One `--input` line: a candidate line, or a dataset task line verified with its own middle. */
export function parseBatchLine(line: string): BatchLine {
  const parsed = parseObject(line);
  if (parsed.kind === "error") return { ...parsed, fields: {} };
  const fields = parsed.value;
  if (typeof fields.file !== "string")
    return { kind: "error", message: 'missing "file" (a path relative to --project)', fields };
  if (isTaskLine(fields)) {
    if (!isRange(fields.range))
      return { kind: "error", message: 'task line with a malformed "range"', fields };
    if (typeof fields.middle !== "string")
      return { kind: "error", message: 'task line without a "middle" (a string)', fields };
    return { kind: "ok", task: { file: fields.file, hole: fields.range }, candidate: fields.middle, fields };
  }
  if (!isRange(fields.hole))
    return {
      kind: "error",
      message: 'missing or malformed "hole": {"start":{"line","character"},"end":{…}}',
      fields,
    };
  if (typeof fields.candidate !== "string")
    return { kind: "error", message: 'missing "candidate" (a string)', fields };
  return { kind: "ok", task: { file: fields.file, hole: fields.hole }, candidate: fields.candidate, fields };
}

/** A dataset folder stands for its tasks.jsonl. */
export function resolveInput(input: string): string {
  if (!existsSync(input)) throw new UsageError(`--input ${input}: no such file or folder`);
  if (!statSync(input).isDirectory()) return input;
  const tasks = join(input, "tasks.jsonl");
  if (!existsSync(tasks))
    throw new UsageError(
      `--input ${input}: a folder must be a dataset written by \`fim-rlvr export\` (no tasks.jsonl in it)`,
    );
  return tasks;
}

/** Non-empty lines of a JSONL file, streamed. */
export async function* jsonLines(path: string): AsyncGenerator<string> {
  for await (const line of createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Infinity }))
    if (line.trim() !== "") yield line;
}

/** Tasks by id, as `--candidates` needs them: file and hole. */
export interface TaskLookup {
  get(id: string): VerifyTask | undefined;
}

function isCandidateTarget(row: unknown): boolean {
  const v = row as LineFields | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.id === "string" &&
    typeof v.file === "string" &&
    isRange(v.range)
  );
}

/**
 * The holes of a dataset's tasks by id (only what a check needs: file and range), indexed, not loaded: each
 * task is read from the file when a candidate names it.
 */
export function tasksById(path: string): TaskLookup {
  const opened = TaskIndex.open(path, isCandidateTarget);
  if (opened.kind === "error")
    throw new UsageError(
      `--input ${path}, ${opened.message}: with --candidates, --input must hold the dataset's tasks ({"id","file","range",…} per line)`,
    );
  const index = opened.index;
  return {
    get(id) {
      const task = index.get(id);
      return task ? { file: task.file, hole: task.range } : undefined;
    },
  };
}

/** One `--candidates` line, `{"id","candidate"}`, matched to its task. */
export function parseCandidateLine(line: string, tasks: TaskLookup): BatchLine {
  const parsed = parseObject(line);
  if (parsed.kind === "error") return { ...parsed, fields: {} };
  const fields = parsed.value;
  if (typeof fields.id !== "string") return { kind: "error", message: 'missing "id" (a task id)', fields };
  if (typeof fields.candidate !== "string")
    return { kind: "error", message: 'missing "candidate" (a string)', fields };
  const task = tasks.get(fields.id);
  if (!task) return { kind: "error", message: `no task with id "${fields.id}" in --input`, fields };
  return { kind: "ok", task, candidate: fields.candidate, fields };
}
