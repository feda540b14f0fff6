/**
 * Export pass 3: each pending task gets its declaration's split, tasks.jsonl and the chosen views are streamed
 * out, and held-out middles are kept apart from training ones. A middle is compared normalised (its tokens
 * without comments and layout, `_mk` in the pending line). With the `dedup` split (the default) a training
 * task whose middle is the middle of a validation or test task is dropped, so held-out pass@1 measures what
 * was not seen; with `declaration` every task is kept. Either way each validation and test task says whether
 * its middle is `novel` (in no training task), and the report counts those that are not.
 *
 * The pending lines are rewritten as text, not parsed: pass 1 wrote them, led by `{"_decl":N,"_mk":K,`,
 * ending in `,"declKind":…,"declStart":…}`, with `"split":"train"` as a placeholder. In JSON text a quote inside a string is always escaped, so the first
 * `,"split":"train"` and `,"kind":"` of a line are its own keys.
 */
import type { StagingDir } from "./atomicDir";
import { FileTextCursor, JsonlWriter, readLines } from "./jsonl";
import type { PendingTask } from "./mineWorkspace";
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

const HEAD = /^\{"_decl":(\d+),"_mk":(\d+),/;
/** Where a pending line's tail (`PendingTail`) begins: after it come only its own fields. */
const TAIL = ',"declKind":"';

interface PendingLine {
  split: Split;
  middleKey: number;
  /** The task's JSON without the pending fields and with the placeholder split. */
  body: string;
}

function* pendingLines(path: string, splitOf: (decl: number) => Split): Generator<PendingLine> {
  for (const line of readLines(path)) {
    const head = HEAD.exec(line);
    const tail = head ? line.lastIndexOf(TAIL) : -1;
    if (head && tail > 0) {
      yield {
        split: splitOf(Number(head[1])),
        middleKey: Number(head[2]),
        body: "{" + line.slice(head[0].length, tail) + "}",
      };
      continue;
    }
    // Not as pass 1 writes it (another writer's key order): parse it.
    const task = JSON.parse(line) as Partial<PendingTask>;
    const { _decl, _mk } = task as PendingTask;
    delete task._decl;
    delete task._mk;
    delete task.declKind;
    delete task.declStart;
    yield { split: splitOf(_decl), middleKey: _mk, body: JSON.stringify({ ...task, split: "train" }) };
  }
}

function withSplit(body: string, split: Split, novel: boolean | undefined): string {
  const placeholder = ',"split":"train"';
  const at = body.indexOf(placeholder);
  const value = `,"split":"${split}"${novel === undefined ? "" : `,"novel":${novel}`}`;
  if (at < 0) throw new Error("a pending task has no split placeholder (the exporter's own output changed)");
  return body.slice(0, at) + value + body.slice(at + placeholder.length);
}

function kindOf(body: string): string {
  const at = body.indexOf(',"kind":"');
  return at < 0 ? "?" : body.slice(at + 9, body.indexOf('"', at + 9));
}

/** Each pending task's declaration index and middle key, in file order (pass 1 keeps them: no re-reading). */
export interface PendingHeads {
  decls: number[];
  middleKeys: number[];
}

function* headsOf(pendingPath: string, splitOf: (decl: number) => Split, heads: PendingHeads | undefined) {
  if (!heads) {
    for (const p of pendingLines(pendingPath, splitOf)) yield { split: p.split, middleKey: p.middleKey };
    return;
  }
  for (let k = 0; k < heads.decls.length; k++)
    yield { split: splitOf(heads.decls[k]!), middleKey: heads.middleKeys[k]! };
}

export function writeTasks(
  staging: StagingDir,
  pendingPath: string,
  splitOf: (decl: number) => Split,
  options: WriteTasksOptions,
  heads?: PendingHeads,
): WrittenTasks {
  // Which middles the held-out splits ask for, then which of those training also has.
  const heldOut = new Set<number>();
  for (const p of headsOf(pendingPath, splitOf, heads)) if (p.split !== "train") heldOut.add(p.middleKey);
  const seenInTraining = new Set<number>();
  if (options.splitMode === "declaration")
    for (const p of headsOf(pendingPath, splitOf, heads))
      if (p.split === "train" && heldOut.has(p.middleKey)) seenInTraining.add(p.middleKey);

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
    views: [...(grpoOut ? ["lean-grpo.jsonl"] : []), ...(fimOut ? ["fim-text.jsonl"] : [])],
    overlap: {
      splitMode: options.splitMode,
      test: { tasks: 0, inTraining: 0 },
      validation: { tasks: 0, inTraining: 0 },
      trainingDropped: 0,
    },
  };
  try {
    for (const p of pendingLines(pendingPath, splitOf)) {
      let novel: boolean | undefined;
      if (p.split === "train") {
        if (options.splitMode === "dedup" && heldOut.has(p.middleKey)) {
          written.overlap.trainingDropped++;
          continue;
        }
      } else {
        novel = !seenInTraining.has(p.middleKey);
        const counts = written.overlap[p.split];
        counts.tasks++;
        if (!novel) counts.inTraining++;
      }
      const line = withSplit(p.body, p.split, novel);
      tasksOut.writeLine(line);
      const kind = kindOf(p.body);
      written.total++;
      written.byKind[kind] = (written.byKind[kind] ?? 0) + 1;
      written.bySplit[p.split] = (written.bySplit[p.split] ?? 0) + 1;
      const row = (written.byKindAndSplit[kind] ??= {});
      row[p.split] = (row[p.split] ?? 0) + 1;
      if (texts && contexts) {
        const task = JSON.parse(line) as TaskRecord;
        const context = contexts.at(task.context);
        if (grpoOut && task.kind === "proof")
          grpoOut.write(
            leanGrpo(task, context, texts.textOf(task.file), options.headerEnds.get(task.file) ?? 0),
          );
        if (fimOut) fimOut.write(fimText(task, context, options.fimTokens!));
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
