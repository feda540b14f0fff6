/**
 * Export's last pass: each task gets its declaration's split (splitPlan.ts), tasks.jsonl and the chosen views are
 * streamed out (the rows come from a `TaskSource`: sketches rebuilt by taskRows.ts, or pending lines read here),
 * and held-out tasks say how they are held out: `heldOut` is "instance" (training has other declarations of
 * its family) or "family" (training has none), and `novel` whether its normalised middle (its tokens without
 * comments and layout, `_mk` in the pending line) is the middle of no training task. With the `dedup` split a
 * training task whose middle is a validation or test task's is dropped; the other modes keep every task.
 *
 * With verification the pending lines are rewritten as bytes, neither parsed nor decoded: pass 1 wrote them, led by
 * `{"_decl":N,"_mk":K,`, ending in `,"declKind":…,"declStart":…}`, with `"split":"train"` as a placeholder.
 * In JSON text a quote inside a string is always escaped, so the first `,"split":"train"` and `,"kind":"`
 * of a line, and its last `,"declKind":"`, are its own keys. Without verification pass 1's `PendingHeads` say
 * where those are in each line, so they are only checked here (`keptLines`), not searched for.
 */
import type { StagingDir } from "./atomicDir";
import { HashSet53 } from "./hashSet";
import { FileTextCursor, JsonlWriter, readLineBytes } from "./jsonl";
import type { PendingTask } from "./mineWorkspace";
import type { PendingHeads } from "./pendingHeads";
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

const HEAD_DECL = Buffer.from('{"_decl":');
const HEAD_KEY = Buffer.from(',"_mk":');
/** Where a pending line's tail (`PendingTail`) begins: after it come only its own fields. */
const TAIL = Buffer.from(',"declKind":"');
const SPLIT = Buffer.from(',"split":"train"');
const KIND = Buffer.from(',"kind":"');

/**
 * A task about to be written to tasks.jsonl: what its split needs, and its row with the split field put in
 * where pass 1's placeholder is (a pending line, or a row rebuilt from a sketch: taskRows.ts).
 */
export interface SplitRow {
  decl: number;
  middleKey: number;
  kind: string;
  /** Writes the row, with `field` (`,"split":…`) put in. */
  write(out: JsonlWriter, field: Buffer): void;
  /** The row with `field` put in, as text (for the views). */
  json(field: Buffer): string;
}

/** Where the tasks come from: each task's declaration and middle key, then its rows (both in one order). */
export interface TaskSource {
  heads(): Iterable<{ decl: number; middleKey: number; kind: string }>;
  rows(): Iterable<SplitRow>;
}

/** A pending line as bytes: its head read, where its split placeholder and tail are. */
class PendingLine implements SplitRow {
  constructor(
    public decl: number,
    public middleKey: number,
    public bytes: Buffer,
    /** The task's own fields: bytes[bodyStart, tail), the placeholder at `splitAt`. */
    public bodyStart: number,
    public splitAt: number,
    public tail: number,
    public kind: string,
  ) {}

  write(out: JsonlWriter, field: Buffer): void {
    out.writeSpliced(this.bytes, this.bodyStart, this.splitAt, field, this.splitAt + SPLIT.length, this.tail);
  }

  json(field: Buffer): string {
    return (
      "{" +
      this.bytes.toString("utf8", this.bodyStart, this.splitAt) +
      field.toString("latin1") +
      this.bytes.toString("utf8", this.splitAt + SPLIT.length, this.tail) +
      "}"
    );
  }
}

/** The whole number written in `bytes` from `at`, and where it ends. */
function readNumber(bytes: Buffer, at: number, end: number): [number, number] {
  let n = 0;
  let k = at;
  for (; k < end && bytes[k]! >= 48 && bytes[k]! <= 57; k++) n = n * 10 + bytes[k]! - 48;
  return [k > at ? n : -1, k];
}

function startsWith(bytes: Buffer, at: number, prefix: Buffer): boolean {
  if (at < 0 || at + prefix.length > bytes.length) return false;
  for (let k = 0; k < prefix.length; k++) if (bytes[at + k] !== prefix[k]) return false;
  return true;
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
  return new PendingLine(decl, middleKey, bytes, afterKey + 1, splitAt, tail, kind);
}

/** A line that is not laid out as pass 1 writes it (another writer's key order): parsed, and laid out so. */
function layOut(chunk: Buffer, start: number, end: number): PendingLine {
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
  if (!laidOut) throw new Error("a pending task lacks its split or kind (the exporter's own output changed)");
  return laidOut;
}

function* pendingLines(path: string): Generator<PendingLine> {
  for (const [chunk, start, end] of readLineBytes(path)) {
    if (end === start) continue;
    yield readPending(chunk, start, end) ?? layOut(chunk, start, end);
  }
}

/**
 * The pending lines pass 1 wrote, read with what it kept of each (`PendingHeads`): where a line's
 * placeholder and tail are is known, and only checked here, not searched for. One object is reused for
 * every line. A line that does not match what was kept is read as any other (`readPending`).
 */
function* keptLines(path: string, heads: PendingHeads): Generator<PendingLine> {
  const line = new PendingLine(0, 0, Buffer.alloc(0), 0, 0, 0, "");
  let k = 0;
  for (const [chunk, start, end] of readLineBytes(path)) {
    if (end === start) continue;
    if (k >= heads.count) {
      yield readPending(chunk, start, end) ?? layOut(chunk, start, end);
      continue;
    }
    const decl = heads.decl(k);
    const tail = end - heads.tailBytes(decl);
    const splitAt = start + heads.splitAt(k);
    const bodyStart =
      start + HEAD_DECL.length + digits(decl) + HEAD_KEY.length + digits(heads.middleKey(k)) + 1;
    if (
      startsWith(chunk, start, HEAD_DECL) &&
      chunk[bodyStart - 1] === 44 && // ","
      startsWith(chunk, splitAt, SPLIT) &&
      splitAt + SPLIT.length <= tail &&
      startsWith(chunk, tail, TAIL)
    ) {
      line.decl = decl;
      line.middleKey = heads.middleKey(k);
      line.bytes = chunk;
      line.bodyStart = bodyStart;
      line.splitAt = splitAt;
      line.tail = tail;
      line.kind = heads.kind(k);
      yield line;
    } else yield readPending(chunk, start, end) ?? layOut(chunk, start, end);
    k++;
  }
}

/** The number of decimal digits of a whole number (as `String(n)` writes it). */
function digits(n: number): number {
  let d = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    d++;
  }
  return d;
}

/**
 * The bytes that take the placeholder's place: the split, and for held-out tasks `novel` and `heldOut`, one
 * buffer per combination, made once.
 */
const SPLIT_FIELDS = new Map<string, Buffer>();

function splitField(split: Split, novel: boolean | undefined, heldOut: HeldOut | undefined): Buffer {
  const key = `${split}:${String(novel)}:${heldOut ?? ""}`;
  let field = SPLIT_FIELDS.get(key);
  if (!field) {
    field = Buffer.from(
      split === "train"
        ? ',"split":"train"'
        : `,"split":"${split}","novel":${novel ? "true" : "false"}${heldOut ? `,"heldOut":"${heldOut}"` : ""}`,
    );
    SPLIT_FIELDS.set(key, field);
  }
  return field;
}

/** The tasks of a pending file (pass 1's, or verification's kept lines), with what pass 1 kept of each. */
export function pendingSource(pendingPath: string, heads: PendingHeads | undefined): TaskSource {
  return {
    *heads() {
      if (!heads) {
        for (const p of pendingLines(pendingPath))
          yield { decl: p.decl, middleKey: p.middleKey, kind: p.kind };
        return;
      }
      for (let k = 0; k < heads.count; k++)
        yield { decl: heads.decl(k), middleKey: heads.middleKey(k), kind: heads.kind(k) };
    },
    rows: () => (heads ? keptLines(pendingPath, heads) : pendingLines(pendingPath)),
  };
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
  // Which middles the held-out splits ask for, then which of those training also has.
  const heldOutMiddles = new HashSet53();
  for (const p of source.heads()) if (splitOf(p.decl) !== "train") heldOutMiddles.add(p.middleKey);
  const seenInTraining = new HashSet53();
  // With `dedup` no held-out middle stays in training; otherwise training keeps them, and `novel` says which.
  if (options.splitMode !== "dedup")
    for (const p of source.heads())
      if (splitOf(p.decl) === "train" && heldOutMiddles.has(p.middleKey)) seenInTraining.add(p.middleKey);

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
        if (options.splitMode === "dedup" && heldOutMiddles.has(p.middleKey)) {
          written.overlap.trainingDropped++;
          continue;
        }
      } else {
        novel = !seenInTraining.has(p.middleKey);
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
      if (texts && contexts) {
        const line = p.json(field);
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
