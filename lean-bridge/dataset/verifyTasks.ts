/**
 * Export pass 2 (with --verify): checks each task's own middle through the verifier pool (which, for a
 * proved middle, also checks the hole with `skip` in it: a hole Lean proves without its middle is dropped),
 * then, for those Lean proves, the hole itself with `sorry` in its place (pool.checkHoleShape): a hole that is
 * not a whole tactic sequence leaves a parse error there. Only holes that pass both are kept, each with the goal
 * state Lean shows at the hole (`goal`, pool.goalsAtHoles: Lean's `done` in its place) when it shows one.
 * Tasks stream from pass 1's sketches in batches, each read with its file's text; a batch holds the texts of
 * its own files only. The kept tasks' sketches, their goals and their heads go on to pass 3, whose rows
 * taskRows.ts writes.
 */
import { COMPLETE_WITHOUT_HOLE } from "../verify/noopProbe";
import type { Verifier as VerifierPool } from "../verify/verifier";
import type { Range } from "vscode-languageserver-protocol";
import { FileTextCursor, type JsonlWriter } from "./jsonl";
import { PendingHeads } from "./pendingHeads";
import { SKETCH_INTS, Sketch, idOfHalves, readSketches, type TaskSketchWriter } from "./taskSketches";

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

/** A task of pass 1 as the checks need it: its hole, its middle and its file's text, and its sketch. */
interface SketchedTask {
  id: string;
  file: string;
  hole: Range;
  middle: string;
  text: string;
  /** Its index in pass 1's order (`PendingHeads`). */
  index: number;
  /** A copy of its sketch. */
  sketch: Int32Array;
}

/** Where the kept tasks go: their sketches, their goals (one line each: the goal as JSON, or `null`), heads. */
export interface KeptTasks {
  sketches: TaskSketchWriter;
  goals: JsonlWriter;
  heads: PendingHeads;
}

function taskOf(ints: Int32Array, at: number, index: number, texts: FileTextCursor): SketchedTask {
  const { file, text } = texts.recordAt(ints[at + Sketch.File]!);
  const start = ints[at + Sketch.Start]!;
  const end = ints[at + Sketch.End]!;
  return {
    id: idOfHalves(ints[at + Sketch.IdHigh]!, ints[at + Sketch.IdLow]!),
    file,
    hole: {
      start: { line: ints[at + Sketch.RangeStartLine]!, character: ints[at + Sketch.RangeStartCharacter]! },
      end: { line: ints[at + Sketch.RangeEndLine]!, character: ints[at + Sketch.RangeEndCharacter]! },
    },
    middle: text.slice(start, end),
    text,
    index,
    sketch: ints.slice(at, at + SKETCH_INTS),
  };
}

/**
 * Verifies the tasks whose sketches pass 1 wrote to `sketchPath` (with their `heads`, in the same order) and
 * writes those kept to `kept`. `tasksPerDecl`: the kept tasks per declaration index.
 */
export async function verifySketches(
  pool: VerifierPool,
  sketchPath: string,
  filesPath: string,
  heads: PendingHeads,
  kept: KeptTasks,
  options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void },
): Promise<{ kind: "ok"; report: VerificationReport; tasksPerDecl: number[] } | { kind: "cancelled" }> {
  const total = heads.count;
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
  const tasksPerDecl: number[] = [];
  let batch: SketchedTask[] = [];
  const flush = async () => {
    const done = report.checked;
    const verdicts = await pool.verifyMany(
      batch.map((task) => ({
        task: { file: task.file, hole: task.hole, text: task.text },
        candidate: task.middle,
      })),
      (d) => options.onProgress?.(done + d, total),
      options.signal,
    );
    if (options.signal?.aborted) return;
    const proved = batch.filter((_, k) => verdicts[k]!.kind === "proved");
    const shapes = await pool.checkHoleShapes(
      proved.map((task) => ({ file: task.file, hole: task.hole, text: task.text })),
      undefined,
      options.signal,
    );
    if (options.signal?.aborted) return;
    const drop = (task: SketchedTask, kind: string, reason: string) => {
      report.dropped++;
      report.droppedByReason[kind] = (report.droppedByReason[kind] ?? 0) + 1;
      if (report.examples.length < 20) report.examples.push({ id: task.id, kind, reason });
    };
    let p = 0;
    const keptHere: SketchedTask[] = [];
    batch.forEach((task, k) => {
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
      keptHere.push(task);
    });
    const goals = await pool.goalsAtHoles(
      keptHere.map((task) => ({ file: task.file, hole: task.hole, text: task.text })),
      undefined,
      options.signal,
    );
    if (options.signal?.aborted) return;
    keptHere.forEach((task, k) => {
      const goal = goals[k];
      if (goal !== undefined) report.withGoal++;
      const { ints, at } = kept.sketches.next();
      ints.set(task.sketch, at);
      kept.goals.writeLine(goal !== undefined ? JSON.stringify(goal) : "null");
      const decl = heads.decl(task.index);
      kept.heads.push(decl, heads.middleKey(task.index), heads.kind(task.index));
      report.kept++;
      tasksPerDecl[decl] = (tasksPerDecl[decl] ?? 0) + 1;
    });
    batch = [];
  };
  try {
    let index = 0;
    for (const [ints, at] of readSketches(sketchPath)) {
      batch.push(taskOf(ints, at, index++, texts));
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
