/**
 * A dataset's tasks by id without holding them: one pass over tasks.jsonl records where each line starts and
 * its id, kind and split; a task is read back from disk (one positioned read) when it is asked for. A
 * million-task dataset thus costs its ids and offsets in memory, not its text. Lines are read as bytes: the
 * head of a line written by `fim-rlvr export` (`{"id":…,"file":…,"kind":…,"split":…`) is read without
 * parsing the rest; any other line is parsed whole, once.
 */
import { closeSync, openSync, readSync } from "node:fs";
import { readLineBytes } from "./jsonl";
import type { TaskRecord } from "./records";

export type TaskIndexOpen = { kind: "ok"; index: TaskIndex } | { kind: "error"; message: string };

/** What the index keeps of a line. */
interface Head {
  id: string;
  /** The file as written in the line (JSON), or as parsed from a line read whole. */
  file: { json: string } | { parsed: string | undefined };
  kind: string;
  split: string;
}

const HEAD =
  /^\{"id":"([0-9A-Za-z_-]+)","file":("[^"\\]*(?:\\.[^"\\]*)*"),"kind":"(\w+)","split":"(\w+)"[,}]/;

/** Bytes of a line decoded to read its head: enough for ids and most paths; a longer head is decoded again. */
const SHORT_HEAD = 256;

/** Which rows count as tasks: every field readers rely on by default; less for a reader that needs less. */
export type TaskCheck = (row: unknown) => boolean;

function headOf(bytes: Buffer, start: number, end: number, accepts: TaskCheck): Head | undefined {
  // The head is short: decode only its first bytes. The id is then read from the bytes themselves, so that
  // the index keeps a string of its own, not a slice holding on to the decoded head.
  let head = HEAD.exec(bytes.toString("utf8", start, Math.min(end, start + SHORT_HEAD)));
  if (!head && end - start > SHORT_HEAD)
    head = HEAD.exec(bytes.toString("utf8", start, Math.min(end, start + 1024)));
  if (head) {
    const idStart = start + 7; // {"id":"
    return {
      id: bytes.toString("latin1", idStart, idStart + head[1]!.length),
      file: { json: head[2]! },
      kind: head[3]!,
      split: head[4]!,
    };
  }
  let row: unknown;
  try {
    row = JSON.parse(bytes.toString("utf8", start, end));
  } catch {
    return undefined;
  }
  if (!accepts(row)) return undefined;
  const t = row as Partial<Record<"id" | "file" | "kind" | "split", unknown>>;
  return {
    id: String(t.id),
    file: { parsed: typeof t.file === "string" ? t.file : undefined },
    kind: typeof t.kind === "string" ? t.kind : "",
    split: typeof t.split === "string" ? t.split : "",
  };
}

/** The fields every reader of a task relies on. */
export function isTask(row: unknown): row is TaskRecord {
  const t = row as Partial<TaskRecord> | null;
  return (
    typeof t === "object" &&
    t !== null &&
    typeof t.id === "string" &&
    typeof t.file === "string" &&
    typeof t.middle === "string" &&
    typeof t.kind === "string" &&
    typeof t.split === "string" &&
    typeof t.range?.start?.line === "number" &&
    typeof t.range?.end?.character === "number"
  );
}

export class TaskIndex {
  /** Byte offset and length of each task's line, by id. */
  private readonly lines = new Map<string, number>();
  private readonly starts: number[] = [];
  private readonly lengths: number[] = [];
  /** Task counts per split and kind. */
  readonly counts = new Map<string, Map<string, number>>();
  /** The tasks' files in file order, each once per run of tasks that name it. */
  private readonly fileRuns: string[] = [];

  /** Open for the index's life: tasks stay readable even if the file is removed (a scratch dataset). */
  private fd: number | undefined;

  private constructor(
    readonly path: string,
    private readonly accepts: TaskCheck,
  ) {}

  /**
   * Indexes tasks.jsonl; an error names the first line that is not a task, or a repeated id. A line in the
   * exporter's layout is checked by its head here and whole when it is read; any other line whole, here.
   */
  static open(path: string, accepts: TaskCheck = isTask): TaskIndexOpen {
    const index = new TaskIndex(path, accepts);
    let offset = 0;
    let line = 0;
    let lastFileJson: string | undefined;
    try {
      for (const [bytes, start, end] of readLineBytes(path)) {
        line++;
        const at = offset;
        offset += end - start + 1;
        if (end === start || (end - start < 8 && bytes.toString("utf8", start, end).trim() === "")) continue;
        const head = headOf(bytes, start, end, accepts);
        if (!head)
          return {
            kind: "error",
            message: `line ${line} is not a task (JSON with id, file, range, kind, split and middle)`,
          };
        if (index.lines.has(head.id))
          return { kind: "error", message: `line ${line} repeats task id ${head.id}` };
        index.lines.set(head.id, index.starts.length);
        index.starts.push(at);
        index.lengths.push(end - start);
        // Consecutive tasks of one file write it alike: parsed once per run.
        if ("json" in head.file) {
          if (head.file.json !== lastFileJson) {
            lastFileJson = head.file.json;
            index.addFile(JSON.parse(head.file.json) as string);
          }
        } else {
          lastFileJson = undefined;
          if (head.file.parsed !== undefined) index.addFile(head.file.parsed);
        }
        const bySplit =
          index.counts.get(head.split) ?? index.counts.set(head.split, new Map()).get(head.split)!;
        bySplit.set(head.kind, (bySplit.get(head.kind) ?? 0) + 1);
      }
    } catch (error) {
      return {
        kind: "error",
        message: `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    try {
      index.fd = openSync(path, "r");
    } catch (error) {
      return {
        kind: "error",
        message: `cannot read ${path}: ${error instanceof Error ? error.message : String(error)}`,
      };
    }
    return { kind: "ok", index };
  }

  /** Closes the file; `get` answers undefined afterwards. */
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  get size(): number {
    return this.starts.length;
  }

  has(id: string): boolean {
    return this.lines.has(id);
  }

  /** The task with this id, read from disk; undefined when the dataset has none (or its line changed). */
  get(id: string): TaskRecord | undefined {
    const k = this.lines.get(id);
    if (k === undefined || this.fd === undefined) return undefined;
    const length = this.lengths[k]!;
    const bytes = Buffer.allocUnsafe(length);
    let got = 0;
    while (got < length) {
      const n = readSync(this.fd, bytes, got, length - got, this.starts[k]! + got);
      if (n === 0) return undefined;
      got += n;
    }
    try {
      const row: unknown = JSON.parse(bytes.toString("utf8"));
      return this.accepts(row) && (row as { id?: unknown }).id === id ? (row as TaskRecord) : undefined;
    } catch {
      return undefined;
    }
  }

  /** Task counts per kind in one split. */
  kindCounts(split: string): Record<string, number> {
    return Object.fromEntries(this.counts.get(split) ?? []);
  }

  private addFile(file: string): void {
    if (this.fileRuns[this.fileRuns.length - 1] !== file) this.fileRuns.push(file);
  }

  /** Every task's file, in file order (to check that files.jsonl holds them all), recorded by `open`. */
  *files(): Generator<string> {
    yield* this.fileRuns;
  }
}
