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
import { putBytes, putDecimal, putHex32, putLatin1 } from "./asciiBytes";
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
    /** `JSON.stringify(file)` as UTF-8. */
    readonly name: Buffer,
    /** `JSON.stringify(text)` as UTF-8. */
    readonly json: Buffer,
  ) {}

  /**
   * `JSON.stringify(text.slice(start, end))` where a bound lies inside a surrogate pair (-1 for its byte in
   * the sketch), as `JsonText.quoted` escapes it; other slices are copied from `json` by the bytes pass 1 noted.
   */
  quotedAlone(start: number, end: number): Buffer {
    const json = this.json.toString("latin1");
    this.parsed ??= new JsonText(JSON.parse(this.json.toString("utf8")) as string, json);
    return Buffer.from(this.parsed.quoted(start, end), "latin1");
  }

  /** `quotedAlone`, as a string of one character per byte. */
  quoted(start: number, end: number, fromByte: number, toByte: number): string {
    if (fromByte >= 0 && toByte >= 0) return `"${this.json.toString("latin1", fromByte, toByte)}"`;
    return this.quotedAlone(start, end).toString("latin1");
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
      // Copied: the chunk is reused for the next rows.
      this.current = new FileOfRows(
        Buffer.from(chunk.subarray(start + FILE_KEY_BYTES, shaAt)),
        Buffer.from(chunk.subarray(shaAt + AFTER_SHA_KEY, end - 1)),
      );
    }
    return this.current;
  }

  close(): void {
    this.lines.return(undefined);
  }
}

const ID = Buffer.from('{"id":"');
const FILE = Buffer.from('","file":');
const KIND = Buffer.from(',"kind":"');
const DECL = Buffer.from(',"decl":');
const CONTEXT = Buffer.from(',"context":');
const RANGE = Buffer.from(',"range":{"start":{"line":');
const CHARACTER = Buffer.from(',"character":');
const RANGE_END = Buffer.from('},"end":{"line":');
const MIDDLE = Buffer.from('}},"middle":');
const INDENT = Buffer.from(',"indent":');
const PREFIX = Buffer.from(',"prefix":');
const SUFFIX = Buffer.from(',"suffix":');
const OFFSETS = Buffer.from(',"offsets":{"start":');
const END = Buffer.from(',"end":');
const CODE_POINTS = Buffer.from('},"offsetsCodePoints":{"start":');
const CLOSE = Buffer.from("}}");
/** The bytes of a row besides its names, texts and numbers: the keys above, quotes, and 11 numbers' digits. */
const FIXED_BYTES = 400;

/** A short constant written at `at`. */
function put(out: Buffer, at: number, bytes: Buffer): number {
  for (let k = 0; k < bytes.length; k++) out[at++] = bytes[k]!;
  return at;
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

  /** The row, its split field included, written in place into `out`'s buffer (no string per row). */
  write(out: JsonlWriter, field: Buffer): void {
    const { sketch: s, at: k } = this;
    const file = this.file!;
    const json = file.json;
    const start = s[k + Sketch.Start]!;
    const end = s[k + Sketch.End]!;
    const startByte = s[k + Sketch.StartByte]!;
    const endByte = s[k + Sketch.EndByte]!;
    const prefixByte = s[k + Sketch.PrefixFromByte]!;
    const suffixByte = s[k + Sketch.SuffixToByte]!;
    // A bound inside a surrogate pair (never a token's or a line's): that slice is escaped on its own.
    const alone =
      startByte < 0 || endByte < 0 || prefixByte < 0 || suffixByte < 0
        ? [
            file.quotedAlone(s[k + Sketch.PrefixFrom]!, start),
            file.quotedAlone(start, end),
            file.quotedAlone(end, s[k + Sketch.SuffixTo]!),
          ]
        : undefined;
    const textBytes = alone
      ? alone[0]!.length + alone[1]!.length + alone[2]!.length
      : suffixByte - prefixByte + (endByte - startByte) + 6;
    const buffer = out.reserve(
      FIXED_BYTES + file.name.length + this.kind.length + field.length + this.declName.length + textBytes,
    );
    let b = out.end;
    b = put(buffer, b, ID);
    b = putHex32(buffer, b, s[k + Sketch.IdHigh]!);
    b = putHex32(buffer, b, s[k + Sketch.IdLow]!);
    b = put(buffer, b, FILE);
    b = putBytes(buffer, b, file.name, 0, file.name.length);
    b = put(buffer, b, KIND);
    b = putLatin1(buffer, b, this.kind);
    buffer[b++] = 0x22; // "
    b = put(buffer, b, field);
    b = put(buffer, b, DECL);
    b = putLatin1(buffer, b, this.declName);
    b = put(buffer, b, CONTEXT);
    b = putDecimal(buffer, b, this.decl);
    b = put(buffer, b, RANGE);
    b = putDecimal(buffer, b, s[k + Sketch.RangeStartLine]!);
    b = put(buffer, b, CHARACTER);
    b = putDecimal(buffer, b, s[k + Sketch.RangeStartCharacter]!);
    b = put(buffer, b, RANGE_END);
    b = putDecimal(buffer, b, s[k + Sketch.RangeEndLine]!);
    b = put(buffer, b, CHARACTER);
    b = putDecimal(buffer, b, s[k + Sketch.RangeEndCharacter]!);
    b = put(buffer, b, MIDDLE);
    b = alone
      ? putBytes(buffer, b, alone[1]!, 0, alone[1]!.length)
      : quoted(buffer, b, json, startByte, endByte);
    b = put(buffer, b, INDENT);
    b = putDecimal(buffer, b, s[k + Sketch.Indent]!);
    b = put(buffer, b, PREFIX);
    b = alone
      ? putBytes(buffer, b, alone[0]!, 0, alone[0]!.length)
      : quoted(buffer, b, json, prefixByte, startByte);
    b = put(buffer, b, SUFFIX);
    b = alone
      ? putBytes(buffer, b, alone[2]!, 0, alone[2]!.length)
      : quoted(buffer, b, json, endByte, suffixByte);
    b = put(buffer, b, OFFSETS);
    b = putDecimal(buffer, b, start);
    b = put(buffer, b, END);
    b = putDecimal(buffer, b, end);
    b = put(buffer, b, CODE_POINTS);
    b = putDecimal(buffer, b, s[k + Sketch.StartCodePoints]!);
    b = put(buffer, b, END);
    b = putDecimal(buffer, b, s[k + Sketch.EndCodePoints]!);
    b = put(buffer, b, CLOSE);
    out.endLine(b);
  }

  /** The row as `write` writes it, as text (for the views). */
  json(field: Buffer): string {
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
    const row =
      `{"id":"${idOfHalves(s[k + Sketch.IdHigh]!, s[k + Sketch.IdLow]!)}","file":${file.name.toString("latin1")},"kind":"${this.kind}"` +
      field.toString("latin1") +
      `,"decl":${this.declName},"context":${this.decl},` +
      `"range":{"start":{"line":${s[k + Sketch.RangeStartLine]!},"character":${s[k + Sketch.RangeStartCharacter]!}},` +
      `"end":{"line":${s[k + Sketch.RangeEndLine]!},"character":${s[k + Sketch.RangeEndCharacter]!}}},` +
      `"middle":${middle},"indent":${s[k + Sketch.Indent]!},"prefix":${prefix},"suffix":${suffix},` +
      `"offsets":{"start":${start},"end":${end}},"offsetsCodePoints":` +
      `{"start":${s[k + Sketch.StartCodePoints]!},"end":${s[k + Sketch.EndCodePoints]!}}}`;
    return Buffer.from(row, "latin1").toString("utf8");
  }
}

/** `"` + `json[from, to)` + `"` written at `at`. */
function quoted(out: Buffer, at: number, json: Buffer, from: number, to: number): number {
  out[at++] = 0x22;
  at = putBytes(out, at, json, from, to);
  out[at++] = 0x22;
  return at;
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
