/**
 * The goal at each hole of a dataset, read through the verifier a run trains with (Lean's `done` in the hole:
 * verify/goalAtHole.ts; the simulator answers from the statement, its model of the goal), written into
 * tasks.jsonl as each task's `goal`, which prompts show above the hole. `fim-rlvr train WORKSPACE` mines without
 * verifying, then asks this of the verifier it has just started, so a run's prompts carry the goal whichever
 * verifier runs (`export --verify` writes goals while verifying). tasks.jsonl is rewritten atomically, in
 * batches of holes (only a batch's rows are in memory), and report.json records what was asked (`goals`), so a
 * resumed run finds the goals there and asks nothing.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { AtomicLineWriter, writeFileAtomic } from "../util/atomicWrite";
import type { Verifier } from "../verify/verifier";
import { readLineBytes, readLines } from "./jsonl";
import type { TaskRecord } from "./records";

/** Whether a line holds only blanks (readLines skips those lines too). */
function isBlank(chunk: Buffer, start: number, end: number): boolean {
  for (let k = start; k < end; k++) if (chunk[k] !== 32 && chunk[k] !== 9 && chunk[k] !== 13) return false;
  return true;
}

/** Holes asked at once: enough to keep every slot busy. */
const BATCH = 256;

export interface GoalsReport {
  verifier: string;
  /** Tasks without a goal before, asked. */
  asked: number;
  /** Of those, the ones the verifier showed a goal for. */
  withGoal: number;
}

export type GoalsResult = { kind: "ok"; report: GoalsReport } | { kind: "cancelled" };

/** The goals report.json already records for a dataset (a resumed run's, or none). */
export function recordedGoals(datasetDir: string): GoalsReport | undefined {
  try {
    const report = JSON.parse(readFileSync(join(datasetDir, "report.json"), "utf8")) as {
      goals?: GoalsReport;
    };
    return report.goals;
  } catch {
    return undefined;
  }
}

/**
 * Adds `goal` to every task of `datasetDir` that has none, from `verifier`; `files` are the dataset's file texts
 * (files.jsonl), which the verifier checks the holes in.
 */
export async function addGoals(
  datasetDir: string,
  verifier: Verifier,
  files: ReadonlyMap<string, string>,
  options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void } = {},
): Promise<GoalsResult> {
  const tasksPath = join(datasetDir, "tasks.jsonl");
  let total = 0;
  for (const [chunk, start, end] of readLineBytes(tasksPath)) if (!isBlank(chunk, start, end)) total++;
  const out = new AtomicLineWriter(tasksPath);
  const report: GoalsReport = { verifier: verifier.identity.label, asked: 0, withGoal: 0 };
  let batch: { line: string; task: TaskRecord | undefined }[] = [];
  let done = 0;
  const flush = async () => {
    const asked = batch.filter((b) => b.task !== undefined);
    const goals = await verifier.goalsAtHoles(
      asked.map(({ task }) => ({ file: task!.file, hole: task!.range, text: files.get(task!.file)! })),
      undefined,
      options.signal,
    );
    let k = 0;
    for (const { line, task } of batch) {
      if (!task) {
        out.line(line);
        continue;
      }
      const goal = goals[k++];
      report.asked++;
      if (goal === undefined) out.line(line);
      else {
        report.withGoal++;
        // The goal in the row's `goal` field (where `export --verify` writes it: rows hold it as `null`
        // until then); a row of an older dataset, without the key, gets it last.
        out.line(JSON.stringify({ ...task, goal }));
      }
    }
    done += batch.length;
    options.onProgress?.(done, total);
    batch = [];
  };
  try {
    for (const line of readLines(tasksPath)) {
      const task = JSON.parse(line) as TaskRecord;
      // A task that has a goal, or whose file the dataset does not hold, is written as it is.
      const ask = (task.goal === null || task.goal === undefined) && files.has(task.file);
      batch.push({ line, task: ask ? task : undefined });
      if (batch.length >= BATCH) await flush();
      if (options.signal?.aborted) {
        out.abort();
        return { kind: "cancelled" };
      }
    }
    if (batch.length) await flush();
    if (options.signal?.aborted) {
      out.abort();
      return { kind: "cancelled" };
    }
    out.commit();
  } catch (error) {
    out.abort();
    throw error;
  }
  recordGoals(datasetDir, report);
  return { kind: "ok", report };
}

/** report.json with `goals` set (a dataset without report.json gets none: nothing else reads it there). */
function recordGoals(datasetDir: string, goals: GoalsReport): void {
  const path = join(datasetDir, "report.json");
  if (!existsSync(path)) return;
  const report = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  writeFileAtomic(path, JSON.stringify({ ...report, goals }, null, 2) + "\n");
}
