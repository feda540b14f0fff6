/**
 * Export pass 3: each pending task gets its declaration's split, tasks.jsonl and the chosen views are streamed
 * out, and held-out middles are kept apart from training ones. A middle is compared normalised (its tokens
 * without comments and layout, `_mk` in the pending line). With the `dedup` split (the default) a training
 * task whose middle is the middle of a validation or test task is dropped, so held-out pass@1 measures what
 * was not seen; with `declaration` every task is kept. Either way each validation and test task says whether
 * its middle is `novel` (in no training task), and the report counts those that are not.
 *
 * The pending lines are rewritten as bytes, neither parsed nor decoded: pass 1 wrote them, led by
 * `{"_decl":N,"_mk":K,`, ending in `,"declKind":…,"declStart":…}`, with `"split":"train"` as a placeholder.
 * In JSON text a quote inside a string is always escaped, so the first `,"split":"train"` and `,"kind":"`
 * of a line, and its last `,"declKind":"`, are its own keys.
 */
import type { StagingDir } from "./atomicDir";
import { FileTextCursor, JsonlWriter, readLineBytes } from "./jsonl";
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

const HEAD_DECL = Buffer.from('{"_decl":');
const HEAD_KEY = Buffer.from(',"_mk":');
/** Where a pending line's tail (`PendingTail`) begins: after it come only its own fields. */
const TAIL = Buffer.from(',"declKind":"');
const SPLIT = Buffer.from(',"split":"train"');
const KIND = Buffer.from(',"kind":"');

/** A pending line as bytes: its head read, where its split placeholder and tail are. */
interface PendingLine {
  decl: number;
  middleKey: number;
  bytes: Buffer;
  /** The task's own fields: bytes[bodyStart, tail), the placeholder at `splitAt`. */
  bodyStart: number;
  splitAt: number;
  tail: number;
  kind: string;
}

/** The whole number written in `bytes` from `at`, and where it ends. */
function readNumber(bytes: Buffer, at: number, end: number): [number, number] {
  let n = 0;
  let k = at;
  for (; k < end && bytes[k]! >= 48 && bytes[k]! <= 57; k++) n = n * 10 + bytes[k]! - 48;
  return [k > at ? n : -1, k];
}

function startsWith(bytes: Buffer, at: number, prefix: Buffer): boolean {
  return bytes.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}

/** Reads a line as pass 1 writes it, or undefined when it is laid out otherwise. */
function readPending(bytes: Buffer, start: number, end: number): PendingLine | undefined {
  if (!startsWith(bytes, start, HEAD_DECL)) return undefined;
  const [decl, afterDecl] = readNumber(bytes, start + HEAD_DECL.length, end);
  if (decl < 0 || !startsWith(bytes, afterDecl, HEAD_KEY)) return undefined;
  const [middleKey, afterKey] = readNumber(bytes, afterDecl + HEAD_KEY.length, end);
  if (middleKey < 0 || bytes[afterKey] !== 44) return undefined; // ","
  const tail = bytes.lastIndexOf(TAIL, end - 1);
  const splitAt = bytes.indexOf(SPLIT, afterKey);
  const kindAt = bytes.indexOf(KIND, afterKey);
  if (tail < afterKey || splitAt < 0 || splitAt > tail || kindAt < 0 || kindAt > tail) return undefined;
  const kindEnd = bytes.indexOf(34, kindAt + KIND.length); // '"'
  const kind = bytes.toString("latin1", kindAt + KIND.length, kindEnd);
  return { decl, middleKey, bytes, bodyStart: afterKey + 1, splitAt, tail, kind };
}

function* pendingLines(path: string): Generator<PendingLine> {
  for (const [chunk, start, end] of readLineBytes(path)) {
    if (end === start) continue;
    const line = readPending(chunk, start, end);
    if (line) {
      yield line;
      continue;
    }
    // Not as pass 1 writes it (another writer's key order): parse it and lay it out as pass 1 does.
    const task = JSON.parse(chunk.toString("utf8", start, end)) as Partial<PendingTask>;
    const { _decl, _mk, declKind, declStart } = task as PendingTask;
    delete task._decl;
    delete task._mk;
    delete task.declKind;
    delete task.declStart;
    const body = JSON.stringify({ ...task, split: "train" }).slice(1, -1);
    const tail = JSON.stringify({ declKind, declStart }).slice(1);
    const bytes = Buffer.from(`{"_decl":${_decl},"_mk":${_mk},${body},${tail}`);
    const laidOut = readPending(bytes, 0, bytes.length);
    if (!laidOut)
      throw new Error("a pending task lacks its split or kind (the exporter's own output changed)");
    yield laidOut;
  }
}

/** The task line: its own fields, with its split (and for held-out tasks whether it is novel). */
function taskPieces(p: PendingLine, split: Split, novel: boolean | undefined) {
  return [
    "{",
    [p.bytes, p.bodyStart, p.splitAt] as const,
    `,"split":"${split}"${novel === undefined ? "" : `,"novel":${novel}`}`,
    [p.bytes, p.splitAt + SPLIT.length, p.tail] as const,
    "}",
  ];
}

/** Each pending task's declaration index and middle key, in file order (pass 1 keeps them: no re-reading). */
export interface PendingHeads {
  decls: number[];
  middleKeys: number[];
}

function* headsOf(pendingPath: string, splitOf: (decl: number) => Split, heads: PendingHeads | undefined) {
  if (!heads) {
    for (const p of pendingLines(pendingPath)) yield { split: splitOf(p.decl), middleKey: p.middleKey };
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
    for (const p of pendingLines(pendingPath)) {
      const split = splitOf(p.decl);
      let novel: boolean | undefined;
      if (split === "train") {
        if (options.splitMode === "dedup" && heldOut.has(p.middleKey)) {
          written.overlap.trainingDropped++;
          continue;
        }
      } else {
        novel = !seenInTraining.has(p.middleKey);
        const counts = written.overlap[split];
        counts.tasks++;
        if (!novel) counts.inTraining++;
      }
      const pieces = taskPieces(p, split, novel);
      tasksOut.writePieces(pieces);
      written.total++;
      written.byKind[p.kind] = (written.byKind[p.kind] ?? 0) + 1;
      written.bySplit[split] = (written.bySplit[split] ?? 0) + 1;
      const row = (written.byKindAndSplit[p.kind] ??= {});
      row[split] = (row[split] ?? 0) + 1;
      if (texts && contexts) {
        const line = pieces
          .map((x) => (typeof x === "string" ? x : x[0].toString("utf8", x[1], x[2])))
          .join("");
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
