/**
 * Export pass 2 (with --verify): checks each pending hole's own middle through the verifier pool (which, for a
 * proved middle, also checks the hole with `skip` in it: a hole Lean proves without its middle is dropped), then,
 * for those Lean proves, the hole itself with `sorry` in its place (pool.checkHoleShape): a hole that is
 * not a whole tactic sequence leaves a parse error there. Only holes that pass both are kept, each with the goal
 * state Lean shows at the hole (`goal`, pool.goalsAtHoles: Lean's `done` in its place) when it shows one. Tasks
 * stream from the pending file in batches; a batch holds the texts of its own files only.
 */
import { COMPLETE_WITHOUT_HOLE } from "../verify/noopProbe";
import type { Verifier as VerifierPool } from "../verify/verifier";
import { FileTextCursor, readJsonl, type JsonlWriter } from "./jsonl";
import type { PendingTask } from "./mineWorkspace";
import { declKeyOf } from "./records";
import { declarationKey } from "./split";

/** Enough checks in flight to keep every slot busy, few enough to keep their file texts small. */
const BATCH = 256;

export interface VerificationReport {
  verifier: string;
  checked: number;
  kept: number;
  dropped: number;
  droppedByReason: Record<string, number>;
  examples: { id: string; kind: string; reason: string }[];
  /**
   * The check of each proved hole with `sorry` in its place: `notWhole` holes were not whole tactic
   * sequences to Lean (dropped), `inconclusive` ones got no usable answer (dropped: fail closed).
   */
  shape: { checked: number; notWhole: number; inconclusive: number };
  /** Kept holes written with the goal state Lean showed at them (`goal`). */
  withGoal: number;
  /**
   * Holes whose proof Lean completes with `skip` (nothing) in their place (verify/noopProbe.ts: their goals are
   * closed before them, or the rest of the proof closes them anyway): no task, so dropped.
   */
  completeWithoutHole: number;
}

/** droppedByReason keys of the shape check. */
export const NOT_WHOLE = "not-whole-tactic-sequence";
export const SHAPE_INCONCLUSIVE = "shape-check-inconclusive";

/** The task with its goal among its own fields: before the pending tail, after which pass 3 reads nothing. */
function withGoal(task: PendingTask, goal: string): PendingTask {
  const { declKind, declStart, ...own } = task;
  return { ...own, goal, declKind, declStart };
}

export async function verifyPending(
  pool: VerifierPool,
  pendingPath: string,
  filesPath: string,
  total: number,
  keptOut: JsonlWriter,
  options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void },
): Promise<
  { kind: "ok"; report: VerificationReport; tasksPerDecl: Map<string, number> } | { kind: "cancelled" }
> {
  const texts = new FileTextCursor(filesPath);
  const report: VerificationReport = {
    verifier: pool.identity.label,
    checked: 0,
    kept: 0,
    dropped: 0,
    droppedByReason: {},
    examples: [],
    shape: { checked: 0, notWhole: 0, inconclusive: 0 },
    withGoal: 0,
    completeWithoutHole: 0,
  };
  const tasksPerDecl = new Map<string, number>();
  let batch: { task: PendingTask; text: string }[] = [];
  const flush = async () => {
    const done = report.checked;
    const verdicts = await pool.verifyMany(
      batch.map(({ task, text }) => ({
        task: { file: task.file, hole: task.range, text },
        candidate: task.middle,
      })),
      (d) => options.onProgress?.(done + d, total),
      options.signal,
    );
    if (options.signal?.aborted) return;
    const proved = batch.filter((_, k) => verdicts[k]!.kind === "proved");
    const shapes = await pool.checkHoleShapes(
      proved.map(({ task, text }) => ({ file: task.file, hole: task.range, text })),
      undefined,
      options.signal,
    );
    if (options.signal?.aborted) return;
    const drop = (task: PendingTask, kind: string, reason: string) => {
      report.dropped++;
      report.droppedByReason[kind] = (report.droppedByReason[kind] ?? 0) + 1;
      if (report.examples.length < 20) report.examples.push({ id: task.id, kind, reason });
    };
    let p = 0;
    const kept: PendingTask[] = [];
    batch.forEach(({ task }, k) => {
      const v = verdicts[k]!;
      report.checked++;
      if (v.kind === "rejected" && v.rule === COMPLETE_WITHOUT_HOLE) {
        report.completeWithoutHole++;
        drop(task, COMPLETE_WITHOUT_HOLE, v.reason);
        return;
      }
      if (v.kind !== "proved") {
        drop(task, v.kind, "reason" in v ? `${v.kind}: ${String(v.reason).split("\n")[0]}` : v.kind);
        return;
      }
      const shape = shapes[p++]!;
      report.shape.checked++;
      if (shape.kind === "not-whole") {
        report.shape.notWhole++;
        drop(task, NOT_WHOLE, shape.reason);
        return;
      }
      if (shape.kind === "inconclusive") {
        report.shape.inconclusive++;
        drop(task, SHAPE_INCONCLUSIVE, shape.reason);
        return;
      }
      kept.push(task);
    });
    const textOf = new Map(batch.map(({ task, text }) => [task.file, text]));
    const goals = await pool.goalsAtHoles(
      kept.map((task) => ({ file: task.file, hole: task.range, text: textOf.get(task.file)! })),
      undefined,
      options.signal,
    );
    if (options.signal?.aborted) return;
    kept.forEach((task, k) => {
      const goal = goals[k];
      if (goal !== undefined) report.withGoal++;
      keptOut.write(goal !== undefined ? withGoal(task, goal) : task);
      report.kept++;
      const key = declarationKey(task.file, declKeyOf(task));
      tasksPerDecl.set(key, (tasksPerDecl.get(key) ?? 0) + 1);
    });
    batch = [];
  };
  try {
    for (const task of readJsonl<PendingTask>(pendingPath)) {
      batch.push({ task, text: texts.textOf(task.file) });
      if (batch.length >= BATCH) await flush();
      if (options.signal?.aborted) return { kind: "cancelled" };
    }
    if (batch.length) await flush();
    if (options.signal?.aborted) return { kind: "cancelled" };
    return { kind: "ok", report, tasksPerDecl };
  } finally {
    texts.close();
  }
}
