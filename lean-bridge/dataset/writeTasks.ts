/**
 * Export's last pass: each task gets its declaration's split (splitPlan.ts), tasks.jsonl and the chosen views
 * are streamed out (the rows come from a `TaskSource`: taskRows.ts rebuilds them from their sketches), and
 * held-out tasks say how they are held out: `heldOut` is "instance" (training has other declarations of its
 * family) or "family" (training has none), and `novel` whether its normalised middle (its tokens without
 * comments and layout: the task's middle key) is the middle of no training task. With the `dedup` split a
 * training task whose middle is a validation or test task's is dropped; the other modes keep every task.
 */
import type { StagingDir } from "./atomicDir";
import { HashSet53 } from "./hashSet";
import { FileTextCursor, JsonlWriter } from "./jsonl";
import type { TaskRecord } from "./records";
import type { Split } from "./split";
import type { HeldOut, SplitMode } from "./splitPlan";
import { ContextCursor, fimText, leanGrpo, type FimTokens } from "./views";

export { SPLIT_MODES, DEFAULT_SPLIT_MODE, type SplitMode } from "./splitPlan";

export interface OverlapReport {
  splitMode: SplitMode;
  /** Test tasks, and those whose normalised middle is also a training task's (0 with `dedup`). */
  test: { tasks: number; inTraining: number };
  validation: { tasks: number; inTraining: number };
  /** Training tasks dropped because a held-out task has their middle (`dedup` only). */
  trainingDropped: number;
}

/** Held-out tasks per held-out set and split. */
export type HeldOutCounts = Record<HeldOut, { validation: number; test: number }>;

export interface WrittenTasks {
  byKind: Record<string, number>;
  bySplit: Record<string, number>;
  /** Every kind asked for, with every split (zeros included). */
  byKindAndSplit: Record<string, Record<string, number>>;
  heldOut: HeldOutCounts;
  total: number;
  /** Per split, the tasks without a reference (statements whose proof is `sorry`). */
  withoutReference: Record<string, number>;
  views: string[];
  overlap: OverlapReport;
}

export interface WriteTasksOptions {
  splitMode: SplitMode;
  /** The kinds asked for: each gets a row of byKindAndSplit, zeros included. */
  kinds: readonly string[];
  formats: readonly string[];
  fimTokens?: FimTokens;
  /** Where each file's header ends (for lean-grpo). */
  headerEnds: ReadonlyMap<string, number>;
}

/** A task about to be written to tasks.jsonl: what its split needs, and its row (taskRows.ts). */
export interface SplitRow {
  decl: number;
  middleKey: number;
  kind: string;
  /** False for a statement without a proof (`"reference": false`). */
  reference: boolean;
  /** Writes the row, with `field` (`,"split":…,"novel":…,"heldOut":…`) in its place. */
  write(out: JsonlWriter, field: Buffer): void;
}

/**
 * Where the tasks come from: each task's declaration, middle key, kind and reference, then its rows (both in one
 * order).
 */
export interface TaskSource {
  heads(): Iterable<{ decl: number; middleKey: number; kind: string; reference: boolean }>;
  rows(): Iterable<SplitRow>;
}

/**
 * A row's split field: the split, `novel` and `heldOut` (both `null` on a training task), one buffer per
 * combination, made once.
 */
const SPLIT_FIELDS = new Map<string, Buffer>();

function splitField(split: Split, novel: boolean | undefined, heldOut: HeldOut | undefined): Buffer {
  const key = `${split}:${String(novel)}:${heldOut ?? ""}`;
  let field = SPLIT_FIELDS.get(key);
  if (!field) {
    field = Buffer.from(
      split === "train"
        ? ',"split":"train","novel":null,"heldOut":null'
        : `,"split":"${split}","novel":${novel ? "true" : "false"},"heldOut":${heldOut ? `"${heldOut}"` : "null"}`,
    );
    SPLIT_FIELDS.set(key, field);
  }
  return field;
}

/** Where each declaration's tasks go (splitPlan.ts): by the declaration's index. */
export interface Placement {
  splits: readonly Split[];
  heldOut: readonly (HeldOut | undefined)[];
}

export function writeTasks(
  staging: StagingDir,
  source: TaskSource,
  placement: Placement,
  options: WriteTasksOptions,
): WrittenTasks {
  const splitOf = (decl: number): Split => placement.splits[decl]!;
  // Which middles the held-out splits ask for, then which of those training also has. A task without a
  // reference has no answer to compare (its middle is `sorry`): it is in neither set, always novel, never dropped.
  const heldOutMiddles = new HashSet53();
  for (const p of source.heads())
    if (p.reference && splitOf(p.decl) !== "train") heldOutMiddles.add(p.middleKey);
  const seenInTraining = new HashSet53();
  // With `dedup` no held-out middle stays in training; otherwise training keeps them, and `novel` says which.
  if (options.splitMode !== "dedup")
    for (const p of source.heads())
      if (p.reference && splitOf(p.decl) === "train" && heldOutMiddles.has(p.middleKey))
        seenInTraining.add(p.middleKey);

  const tasksOut = new JsonlWriter(staging.file("tasks.jsonl"));
  const grpoOut = options.formats.includes("lean-grpo")
    ? new JsonlWriter(staging.file("lean-grpo.jsonl"))
    : undefined;
  const fimOut =
    options.formats.includes("fim-text") && options.fimTokens
      ? new JsonlWriter(staging.file("fim-text.jsonl"))
      : undefined;
  const texts = grpoOut || fimOut ? new FileTextCursor(staging.file("files.jsonl")) : undefined;
  const contexts = grpoOut || fimOut ? new ContextCursor(staging.file("contexts.jsonl")) : undefined;
  const written: WrittenTasks = {
    byKind: {},
    bySplit: { train: 0, validation: 0, test: 0 },
    byKindAndSplit: Object.fromEntries(options.kinds.map((k) => [k, { train: 0, validation: 0, test: 0 }])),
    heldOut: { instance: { validation: 0, test: 0 }, family: { validation: 0, test: 0 } },
    total: 0,
    withoutReference: { train: 0, validation: 0, test: 0 },
    views: [...(grpoOut ? ["lean-grpo.jsonl"] : []), ...(fimOut ? ["fim-text.jsonl"] : [])],
    overlap: {
      splitMode: options.splitMode,
      test: { tasks: 0, inTraining: 0 },
      validation: { tasks: 0, inTraining: 0 },
      trainingDropped: 0,
    },
  };
  try {
    for (const p of source.rows()) {
      const split = splitOf(p.decl);
      let novel: boolean | undefined;
      const heldOut = split === "train" ? undefined : placement.heldOut[p.decl];
      if (split === "train") {
        if (options.splitMode === "dedup" && p.reference && heldOutMiddles.has(p.middleKey)) {
          written.overlap.trainingDropped++;
          continue;
        }
      } else {
        novel = !p.reference || !seenInTraining.has(p.middleKey);
        const counts = written.overlap[split];
        counts.tasks++;
        if (!novel) counts.inTraining++;
        if (heldOut) written.heldOut[heldOut][split]++;
      }
      // The task line: its own fields, with its split (and for held-out tasks how they are held out).
      const field = splitField(split, novel, heldOut);
      p.write(tasksOut, field);
      written.total++;
      written.byKind[p.kind] = (written.byKind[p.kind] ?? 0) + 1;
      written.bySplit[split] = (written.bySplit[split] ?? 0) + 1;
      const row = (written.byKindAndSplit[p.kind] ??= { train: 0, validation: 0, test: 0 });
      row[split] = (row[split] ?? 0) + 1;
      if (!p.reference) written.withoutReference[split] = (written.withoutReference[split] ?? 0) + 1;
      if (texts && contexts) {
        const task = JSON.parse(tasksOut.lastLine()) as TaskRecord;
        const context = contexts.at(task.context);
        if (grpoOut && task.kind === "proof")
          grpoOut.write(
            leanGrpo(task, context, texts.textOf(task.file), options.headerEnds.get(task.file) ?? 0),
          );
        // fim-text is text to imitate: a `sorry` middle is none.
        if (fimOut && p.reference) fimOut.write(fimText(task, context, options.fimTokens!));
      }
    }
  } finally {
    tasksOut.close();
    grpoOut?.close();
    fimOut?.close();
    texts?.close();
    contexts?.close();
  }
  return written;
}
