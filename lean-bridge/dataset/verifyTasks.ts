/**
 * Export pass 2 (with --verify): checks each task's own middle through the verifier pool (which, for a
 * proved middle, also checks the hole with `skip` in it: a hole Lean proves without its middle is dropped),
 * then, for those Lean proves, the hole itself with `sorry` in its place (pool.checkHoleShape): a hole that is
 * not a whole tactic sequence leaves a parse error there. Only holes that pass both are kept, each with the goal
 * state Lean shows at the hole (`goal`, pool.goalsAtHoles: Lean's `done` in its place) when it shows one.
 * A statement without a proof (`"reference": false`: its middle is `sorry`) has no middle to verify: it is kept
 * when Lean elaborates it with `sorry` as its proof (statementCheck.ts, the check `fim-rlvr import` makes).
 * Tasks stream from pass 1's sketches in batches, each read with its file's text; a batch holds the texts of
 * its own files only. The kept tasks' sketches, their goals and their heads go on to pass 3, whose rows
 * taskRows.ts writes.
 */
import { COMPLETE_WITHOUT_HOLE } from "../verify/noopProbe";
import type { Verifier as VerifierPool } from "../verify/verifier";
import type { Range } from "vscode-languageserver-protocol";
import { FileTextCursor, type JsonlWriter } from "./jsonl";
import { PendingHeads } from "./pendingHeads";
import {
  NO_REFERENCE,
  SKETCH_INTS,
  Sketch,
  idOfHalves,
  readSketches,
  type TaskSketchWriter,
} from "./taskSketches";

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
   * Statements without a proof (no reference): checked to elaborate with `sorry` as their proof, and those
   * that do (kept); the others are dropped with the reasons below.
   */
  statements: { checked: number; elaborate: number };
  /**
   * Holes whose proof Lean completes with `skip` (nothing) in their place (verify/noopProbe.ts: their goals are
   * closed before them, or the rest of the proof closes them anyway): no task, so dropped.
   */
  completeWithoutHole: number;
}

/** droppedByReason keys of the shape check. */
export const NOT_WHOLE = "not-whole-tactic-sequence";
export const SHAPE_INCONCLUSIVE = "shape-check-inconclusive";
/** droppedByReason keys of the statement check (statements without a proof). */
export const STATEMENT_DOES_NOT_ELABORATE = "statement-does-not-elaborate";
export const STATEMENT_INCONCLUSIVE = "statement-check-inconclusive";

/** A task of pass 1 as the checks need it: its hole, its middle and its file's text, and its sketch. */
interface SketchedTask {
  id: string;
  file: string;
  hole: Range;
  middle: string;
  text: string;
  /** Its index in pass 1's order (`PendingHeads`). */
  index: number;
  /** False for a statement without a proof. */
  reference: boolean;
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
    reference: (ints[at + Sketch.Flags]! & NO_REFERENCE) === 0,
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
    statements: { checked: 0, elaborate: 0 },
  };
  const tasksPerDecl: number[] = [];
  let batch: SketchedTask[] = [];
  const flush = async () => {
    const done = report.checked;
    const proofs = batch.filter((task) => task.reference);
    const statements = batch.filter((task) => !task.reference);
    const verdicts = await pool.verifyMany(
      proofs.map((task) => ({
        task: { file: task.file, hole: task.hole, text: task.text },
        candidate: task.middle,
      })),
      (d) => options.onProgress?.(done + d, total),
      options.signal,
    );
    if (options.signal?.aborted) return;
    const proved = proofs.filter((_, k) => verdicts[k]!.kind === "proved");
    const shapes = await pool.checkHoleShapes(
      proved.map((task) => ({ file: task.file, hole: task.hole, text: task.text })),
      undefined,
      options.signal,
    );
    if (options.signal?.aborted) return;
    // A statement without a proof has no middle to verify: Lean elaborates it with `sorry` as its proof.
    const checks = statements.length
      ? await pool.checkStatements(
          statements.map((task) => ({ file: task.file, hole: task.hole, text: task.text })),
          (d) => options.onProgress?.(done + proofs.length + d, total),
          options.signal,
        )
      : [];
    if (options.signal?.aborted) return;
    const drop = (task: SketchedTask, kind: string, reason: string) => {
      report.dropped++;
      report.droppedByReason[kind] = (report.droppedByReason[kind] ?? 0) + 1;
      if (report.examples.length < 20) report.examples.push({ id: task.id, kind, reason });
    };
    let p = 0;
    const passed = new Set<SketchedTask>();
    proofs.forEach((task, k) => {
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
      passed.add(task);
    });
    statements.forEach((task, k) => {
      const check = checks[k]!;
      report.checked++;
      report.statements.checked++;
      if (check.kind === "elaborates") {
        report.statements.elaborate++;
        passed.add(task);
      } else if (check.kind === "does-not-elaborate") drop(task, STATEMENT_DOES_NOT_ELABORATE, check.message);
      else if (check.kind === "environment") drop(task, "environment", `${check.message} ${check.action}`);
      else drop(task, STATEMENT_INCONCLUSIVE, check.reason);
    });
    const keptHere = batch.filter((task) => passed.has(task));
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
      kept.heads.push(decl, heads.middleKey(task.index), heads.kind(task.index), task.reference);
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
