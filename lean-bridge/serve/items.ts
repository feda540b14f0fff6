/** A request's items as pool tasks, or the reason an item cannot be checked (a bad item never fails its batch). */
import type { Range } from "vscode-languageserver-protocol";
import type { VerifyTask } from "../verify/verifier";
import type { ServiceItem } from "../protocol/trainer";

/** Tasks by id: a Map, or an index that reads each task from its dataset when asked (train/runService.ts). */
export interface TaskTable {
  get(id: string): VerifyTask | undefined;
  readonly size: number;
}

export type ResolvedItem =
  { kind: "ok"; task: VerifyTask; candidate: string } | { kind: "bad"; message: string };

function isPosition(v: unknown): boolean {
  const p = v as { line?: unknown; character?: unknown } | null;
  return typeof p === "object" && p !== null && Number.isInteger(p.line) && Number.isInteger(p.character);
}

function isRange(v: unknown): v is Range {
  const r = v as { start?: unknown; end?: unknown } | null;
  return typeof r === "object" && r !== null && isPosition(r.start) && isPosition(r.end);
}

/** The verdict's taskId for an item: its own id, or where its hole is. */
export function itemLabel(item: unknown): string {
  const v = item as Partial<Record<string, unknown>> | null;
  if (typeof v?.taskId === "string") return v.taskId;
  if (typeof v?.file === "string" && isRange(v.hole))
    return `${v.file}@${v.hole.start.line}:${v.hole.start.character}-${v.hole.end.line}:${v.hole.end.character}`;
  return "";
}

/** One request item as a pool task, or why it cannot be checked (a bad item never fails its batch). */
export function resolveItem(item: unknown, tasks: TaskTable): ResolvedItem {
  const v = item as Partial<ServiceItem & Record<string, unknown>> | null;
  if (typeof v !== "object" || v === null) return { kind: "bad", message: "an item must be an object" };
  if (typeof v.candidate !== "string") return { kind: "bad", message: 'missing "candidate" (a string)' };
  if (typeof v.file === "string") {
    if (!isRange(v.hole))
      return {
        kind: "bad",
        message: 'missing or malformed "hole": {"start":{"line","character"},"end":{…}}',
      };
    return { kind: "ok", task: { file: v.file, hole: v.hole }, candidate: v.candidate };
  }
  if (typeof v.taskId !== "string")
    return {
      kind: "bad",
      message: 'an item needs "taskId" (a task of the served dataset) or "file" and "hole"',
    };
  const task = tasks.get(v.taskId);
  if (!task)
    return {
      kind: "bad",
      message: `unknown task id ${v.taskId}: not in the dataset this service serves (its --dataset, or its --project mined)`,
    };
  return { kind: "ok", task, candidate: v.candidate };
}
