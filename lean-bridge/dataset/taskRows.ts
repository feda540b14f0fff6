/**
 * Export pass 2 without verification: each task's row rebuilt from its sketch (taskSketches.ts) and its file's
 * text, read back from files.jsonl, and handed to `writeTasks` to be written once, with its split. The row is
 * byte for byte the pending row pass 1 would have written (rowBytes.ts `writePending`) less its head and tail:
 * the same `JsonText` slices, the same field order (test/dataset/rowBytes.test.ts compares them).
 */
import { HOLE_KINDS } from "../holes/mine";
import type { JsonlWriter } from "./jsonl";
import { readLineBytes } from "./jsonl";
import { JsonText } from "./jsonText";
import type { PendingHeads } from "./pendingHeads";
import { Sketch, idOfHalves, readSketches } from "./taskSketches";
import type { SplitRow } from "./writeTasks";

const SHA_KEY = Buffer.from(',"sha256":"');
/** `{"file":` before the name; after the key, 64 hex digits, `"` and `,"text":` before the text. */
const FILE_KEY_BYTES = 8;
const AFTER_SHA_KEY = SHA_KEY.length + 64 + 1 + 8;

/** A files.jsonl row as pass 2 needs it: the file's name and its text, as JSON in UTF-8 bytes. */
class FileOfRows {
  private parsed: JsonText | undefined;

  constructor(
    /** `JSON.stringify(file)`, one character per byte. */
    readonly name: string,
    /** `JSON.stringify(text)`, one character per byte. */
    private readonly json: string,
  ) {}

  /**
   * `JSON.stringify(text.slice(start, end))`: a slice of the row's bytes where pass 1 noted where the bounds
   * land (`fromByte`, `toByte`); a bound inside a surrogate pair (-1) is escaped as `JsonText.quoted` does.
   */
  quoted(start: number, end: number, fromByte: number, toByte: number): string {
    if (fromByte >= 0 && toByte >= 0) return `"${this.json.slice(fromByte, toByte)}"`;
    this.parsed ??= new JsonText(
      JSON.parse(Buffer.from(this.json, "latin1").toString("utf8")) as string,
      this.json,
    );
    return this.parsed.quoted(start, end);
  }
}

/** Reads files.jsonl's rows in order: row `line` (0-based), at most once each, going forward only. */
class FilesCursor {
  private readonly lines: Generator<readonly [Buffer, number, number]>;
  private line = -1;
  private current: FileOfRows | undefined;

  constructor(path: string) {
    this.lines = readLineBytes(path);
  }

  at(line: number): FileOfRows {
    while (this.line < line || !this.current) {
      const next = this.lines.next();
      if (next.done)
        throw new Error(`files.jsonl has no row ${line} (the export's own scratch files disagree)`);
      const [chunk, start, end] = next.value;
      if (end === start) continue;
      this.line++;
      if (this.line < line) continue;
      const shaAt = chunk.indexOf(SHA_KEY, start);
      if (shaAt < 0 || shaAt >= end)
        throw new Error(`files.jsonl row ${line} is not laid out as the exporter writes it`);
      this.current = new FileOfRows(
        chunk.toString("latin1", start + FILE_KEY_BYTES, shaAt),
        chunk.toString("latin1", shaAt + AFTER_SHA_KEY, end - 1),
      );
    }
    return this.current;
  }

  close(): void {
    this.lines.return(undefined);
  }
}

/** The split fields' bytes as one-byte strings (a handful of distinct buffers), each decoded once. */
const fieldText = new WeakMap<Buffer, string>();

function latin1Of(field: Buffer): string {
  let text = fieldText.get(field);
  if (text === undefined) fieldText.set(field, (text = field.toString("latin1")));
  return text;
}

/** One task rebuilt from its sketch; one object reused for every task, valid until the next. */
class SketchedRow implements SplitRow {
  decl = 0;
  middleKey = 0;
  kind = "";
  file: FileOfRows | undefined;
  declName = "";
  /** The sketch: `sketch[at, at + SKETCH_INTS)`. */
  sketch: Int32Array = new Int32Array(0);
  at = 0;

  /**
   * The row with its split field, as UTF-8 bytes in a one-byte string: built only for rows that are written
   * (not for training rows the dedup drops), from slices of the file's JSON.
   */
  private bytes(field: Buffer): string {
    const s = this.sketch;
    const k = this.at;
    const file = this.file!;
    const start = s[k + Sketch.Start]!;
    const end = s[k + Sketch.End]!;
    const startByte = s[k + Sketch.StartByte]!;
    const endByte = s[k + Sketch.EndByte]!;
    const middle = file.quoted(start, end, startByte, endByte);
    const prefix = file.quoted(s[k + Sketch.PrefixFrom]!, start, s[k + Sketch.PrefixFromByte]!, startByte);
    const suffix = file.quoted(end, s[k + Sketch.SuffixTo]!, endByte, s[k + Sketch.SuffixToByte]!);
    return (
      `{"id":"${idOfHalves(s[k + Sketch.IdHigh]!, s[k + Sketch.IdLow]!)}","file":${file.name},"kind":"${this.kind}"` +
      latin1Of(field) +
      `,"decl":${this.declName},"context":${this.decl},` +
      `"range":{"start":{"line":${s[k + Sketch.RangeStartLine]!},"character":${s[k + Sketch.RangeStartCharacter]!}},` +
      `"end":{"line":${s[k + Sketch.RangeEndLine]!},"character":${s[k + Sketch.RangeEndCharacter]!}}},` +
      `"middle":${middle},"indent":${s[k + Sketch.Indent]!},"prefix":${prefix},"suffix":${suffix},` +
      `"offsets":{"start":${start},"end":${end}},"offsetsCodePoints":` +
      `{"start":${s[k + Sketch.StartCodePoints]!},"end":${s[k + Sketch.EndCodePoints]!}}}`
    );
  }

  write(out: JsonlWriter, field: Buffer): void {
    out.writeLatin1Line(this.bytes(field));
  }

  json(field: Buffer): string {
    return Buffer.from(this.bytes(field), "latin1").toString("utf8");
  }
}

/**
 * The task rows of the sketches at `sketchPath`, in order, with the middle keys pass 1 kept (`heads`, in the
 * same order) and each declaration's name as JSON (`declNames`, UTF-8 bytes one character per byte).
 */
export function* sketchedRows(
  filesPath: string,
  sketchPath: string,
  heads: PendingHeads,
  declNames: readonly string[],
): Generator<SplitRow> {
  const files = new FilesCursor(filesPath);
  const row = new SketchedRow();
  let k = 0;
  try {
    for (const [s, at] of readSketches(sketchPath)) {
      row.file = files.at(s[at + Sketch.File]!);
      row.decl = s[at + Sketch.Decl]!;
      row.declName = declNames[row.decl]!;
      row.kind = HOLE_KINDS[s[at + Sketch.Kind]!]!;
      row.middleKey = heads.middleKey(k++);
      row.sketch = s;
      row.at = at;
      yield row;
    }
  } finally {
    files.close();
  }
}
