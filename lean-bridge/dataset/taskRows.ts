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

/** One task rebuilt from its sketch; one object reused for every task. */
class SketchedRow implements SplitRow {
  decl = 0;
  middleKey = 0;
  kind = "";
  /** The row up to its split field, and after it (UTF-8 bytes, one character per byte). */
  before = "";
  after = "";

  write(out: JsonlWriter, field: Buffer): void {
    out.writeLatin1Line(this.before + field.toString("latin1") + this.after);
  }

  json(field: Buffer): string {
    return Buffer.from(this.before + field.toString("latin1") + this.after, "latin1").toString("utf8");
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
      const file = files.at(s[at + Sketch.File]!);
      const decl = s[at + Sketch.Decl]!;
      const kind = HOLE_KINDS[s[at + Sketch.Kind]!]!;
      const start = s[at + Sketch.Start]!;
      const end = s[at + Sketch.End]!;
      const startByte = s[at + Sketch.StartByte]!;
      const endByte = s[at + Sketch.EndByte]!;
      const middle = file.quoted(start, end, startByte, endByte);
      const prefix = file.quoted(
        s[at + Sketch.PrefixFrom]!,
        start,
        s[at + Sketch.PrefixFromByte]!,
        startByte,
      );
      const suffix = file.quoted(end, s[at + Sketch.SuffixTo]!, endByte, s[at + Sketch.SuffixToByte]!);
      row.decl = decl;
      row.middleKey = heads.middleKey(k++);
      row.kind = kind;
      row.before = `{"id":"${idOfHalves(s[at + Sketch.IdHigh]!, s[at + Sketch.IdLow]!)}","file":${file.name},"kind":"${kind}"`;
      row.after =
        `,"decl":${declNames[decl]!},"context":${decl},` +
        `"range":{"start":{"line":${s[at + Sketch.RangeStartLine]!},"character":${s[at + Sketch.RangeStartCharacter]!}},` +
        `"end":{"line":${s[at + Sketch.RangeEndLine]!},"character":${s[at + Sketch.RangeEndCharacter]!}}},` +
        `"middle":${middle},"indent":${s[at + Sketch.Indent]!},"prefix":${prefix},"suffix":${suffix},` +
        `"offsets":{"start":${start},"end":${end}},"offsetsCodePoints":` +
        `{"start":${s[at + Sketch.StartCodePoints]!},"end":${s[at + Sketch.EndCodePoints]!}}}`;
      yield row;
    }
  } finally {
    files.close();
  }
}
