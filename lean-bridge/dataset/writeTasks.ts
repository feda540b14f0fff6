/**
 * Export's last pass: each task gets its declaration's split, tasks.jsonl and the chosen views are streamed
 * out (the rows come from a `TaskSource`: taskRows.ts rebuilds them from their sketches), and held-out middles
 * are kept apart from training ones. A middle is compared normalised (its tokens without comments and
 * layout: the task's middle key). With the `dedup` split (the default) a training task whose middle is the
 * middle of a validation or test task is dropped, so held-out pass@1 measures what was not seen; with
 * `declaration` every task is kept. Either way each validation and test task says whether its middle is
 * `novel` (in no training task), and the report counts those that are not.
 */
import type { StagingDir } from "./atomicDir";
import { HashSet53 } from "./hashSet";
import { FileTextCursor, JsonlWriter } from "./jsonl";
import type { TaskRecord } from "./records";
import type { Split } from "./split";
import { ContextCursor, fimText, leanGrpo, type FimTokens } from "./views";

/** `dedup`: no training task shares a normalised middle with a held-out task. `declaration`: splits only. */
export type SplitMode = "dedup" | "declaration";

export const SPLIT_MODES: readonly SplitMode[] = ["dedup", "declaration"];

export interface OverlapReport {
  splitMode: SplitMode;
  /** Test tasks, and those whose normalised middle is also a training task's (0 with `dedup`). */
  test: { tasks: number; inTraining: number };
  validation: { tasks: number; inTraining: number };
  /** Training tasks dropped because a held-out task has their middle (`dedup` only). */
  trainingDropped: number;
}

export interface WrittenTasks {
  byKind: Record<string, number>;
  bySplit: Record<string, number>;
  byKindAndSplit: Record<string, Record<string, number>>;
  total: number;
  /** Per split, the tasks without a reference (statements whose proof is `sorry`). */
  withoutReference: Record<string, number>;
  views: string[];
  overlap: OverlapReport;
}

export interface WriteTasksOptions {
  splitMode: SplitMode;
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
  /** Writes the row, with `field` (`,"split":…`) in its place. */
  write(out: JsonlWriter, field: Buffer): void;
}

/** Where the tasks come from: each task's declaration, middle key and reference, then its rows (both in one order). */
export interface TaskSource {
  heads(): Iterable<{ decl: number; middleKey: number; reference: boolean }>;
  rows(): Iterable<SplitRow>;
}

/** Per split, a row's split field: the split, and for held-out tasks `novel`. */
const SPLIT_FIELDS = {
  train: Buffer.from(',"split":"train"'),
  validation: [
    Buffer.from(',"split":"validation","novel":false'),
    Buffer.from(',"split":"validation","novel":true'),
  ],
  test: [Buffer.from(',"split":"test","novel":false'), Buffer.from(',"split":"test","novel":true')],
} as const;

function splitField(split: Split, novel: boolean | undefined): Buffer {
  return split === "train" ? SPLIT_FIELDS.train : SPLIT_FIELDS[split][novel ? 1 : 0];
}

export function writeTasks(
  staging: StagingDir,
  source: TaskSource,
  splitOf: (decl: number) => Split,
  options: WriteTasksOptions,
): WrittenTasks {
  // Which middles the held-out splits ask for, then which of those training also has. A task without a
  // reference has no answer to compare (its middle is `sorry`): it is in neither set, always novel, never dropped.
  const heldOut = new HashSet53();
  for (const p of source.heads()) if (p.reference && splitOf(p.decl) !== "train") heldOut.add(p.middleKey);
  const seenInTraining = new HashSet53();
  if (options.splitMode === "declaration")
    for (const p of source.heads())
      if (p.reference && splitOf(p.decl) === "train" && heldOut.has(p.middleKey))
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
    byKindAndSplit: {},
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
      if (split === "train") {
        if (options.splitMode === "dedup" && p.reference && heldOut.has(p.middleKey)) {
          written.overlap.trainingDropped++;
          continue;
        }
      } else {
        novel = !p.reference || !seenInTraining.has(p.middleKey);
        const counts = written.overlap[split];
        counts.tasks++;
        if (!novel) counts.inTraining++;
      }
      // The task line: its own fields, with its split (and for held-out tasks whether it is novel).
      const field = splitField(split, novel);
      p.write(tasksOut, field);
      written.total++;
      written.byKind[p.kind] = (written.byKind[p.kind] ?? 0) + 1;
      written.bySplit[split] = (written.bySplit[split] ?? 0) + 1;
      const row = (written.byKindAndSplit[p.kind] ??= {});
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
