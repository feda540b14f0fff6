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
import { ascii, putBytes, putDecimal, putHex32 } from "./asciiBytes";
import type { SplitRow } from "./writeTasks";

const SHA_KEY = Buffer.from(',"sha256":"');
/** `{"file":` before the name; after the key, 64 hex digits, `"` and `,"text":` before the text. */
const FILE_KEY_BYTES = 8;
const AFTER_SHA_KEY = SHA_KEY.length + 64 + 1 + 8;

/**
 * A files.jsonl row as pass 2 needs it: the file's name and its text, as JSON in UTF-8 bytes. The text's
 * bytes are those of the reader's chunk, valid while the rows of this file are written (the cursor moves on
 * only for a later file's row).
 */
class FileOfRows {
  private parsed: JsonText | undefined;
  private jsonText: string | undefined;
  /** `","file":` + `JSON.stringify(file)` as UTF-8 + `,"kind":"`: what every row of the file has there. */
  readonly fileSegment: Uint8Array;

  constructor(
    /** `JSON.stringify(file)`, one character per byte. */
    readonly name: string,
    /** `JSON.stringify(text)` as UTF-8: chunk[jsonStart, jsonEnd). */
    readonly chunk: Buffer,
    readonly jsonStart: number,
    readonly jsonEnd: number,
  ) {
    this.fileSegment = ascii(`","file":${name},"kind":"`);
  }

  /** `JSON.stringify(text)`, one character per byte (made only for rows written as text). */
  private get json(): string {
    return (this.jsonText ??= this.chunk.toString("latin1", this.jsonStart, this.jsonEnd));
  }

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
        chunk,
        shaAt + AFTER_SHA_KEY,
        end - 1,
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

const ID = ascii('{"id":"');
const RANGE = ascii(',"range":{"start":{"line":');
const CHARACTER = ascii(',"character":');
const RANGE_END = ascii('},"end":{"line":');
const MIDDLE = ascii('}},"middle":"');
const INDENT = ascii('","indent":');
const PREFIX = ascii(',"prefix":"');
const SUFFIX = ascii('","suffix":"');
const OFFSETS = ascii('","offsets":{"start":');
const END = ascii(',"end":');
const CODE_POINTS = ascii('},"offsetsCodePoints":{"start":');
const CLOSE = ascii("}}");
/** A row's bytes besides its names, kind, split field and texts: the keys above and 11 numbers' digits. */
const FIXED_BYTES = 400;
const KIND_BYTES = HOLE_KINDS.map(ascii);

/**
 * A split field's bytes as a plain Uint8Array: `putBytes` then reads only plain arrays (a Buffer is another
 * class to V8, and a loop reading both kinds runs several times slower).
 */
const plainFields = new WeakMap<Buffer, Uint8Array>();

function plainBytes(field: Buffer): Uint8Array {
  let plain = plainFields.get(field);
  if (plain === undefined) plainFields.set(field, (plain = Uint8Array.from(field)));
  return plain;
}

/** One task rebuilt from its sketch; one object reused for every task, valid until the next. */
class SketchedRow implements SplitRow {
  decl = 0;
  middleKey = 0;
  kind = "";
  kindIndex = 0;
  file: FileOfRows | undefined;
  declName = "";
  /** `,"decl":` + `declName` + `,"context":` + the declaration's index, as bytes, and the declaration. */
  private declBytes: Uint8Array = new Uint8Array(0);
  private declBytesOf = -1;
  /** The writer holding `heldFile`'s text (`JsonlWriter.holdText`). */
  private heldBy: JsonlWriter | undefined;
  private heldFile: FileOfRows | undefined;
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

  /**
   * Writes the row in place into `out`'s buffer: keys and digits byte by byte, the texts copied from the
   * file's JSON held at the buffer's start. The same bytes as `bytes(field)`, without a string per row.
   */
  write(out: JsonlWriter, field: Buffer): void {
    const s = this.sketch;
    const k = this.at;
    const file = this.file!;
    const prefixByte = s[k + Sketch.PrefixFromByte]!;
    const startByte = s[k + Sketch.StartByte]!;
    const endByte = s[k + Sketch.EndByte]!;
    const suffixByte = s[k + Sketch.SuffixToByte]!;
    // A bound inside a surrogate pair (never a token's or a line's): the row is built as text.
    if (prefixByte < 0 || startByte < 0 || endByte < 0 || suffixByte < 0) {
      out.writeLatin1Line(this.bytes(field));
      return;
    }
    if (this.heldBy !== out || this.heldFile !== file) {
      out.holdText(file.chunk, file.jsonStart, file.jsonEnd);
      this.heldBy = out;
      this.heldFile = file;
    }
    if (this.declBytesOf !== this.decl) {
      this.declBytes = ascii(`,"decl":${this.declName},"context":${this.decl}`);
      this.declBytesOf = this.decl;
    }
    const name = file.fileSegment;
    const buffer = out.room(
      FIXED_BYTES + name.length + this.declBytes.length + field.length + (suffixByte - prefixByte),
    );
    let b = out.end;
    b = putBytes(buffer, b, ID);
    b = putHex32(buffer, b, s[k + Sketch.IdHigh]!);
    b = putHex32(buffer, b, s[k + Sketch.IdLow]!);
    b = putBytes(buffer, b, name);
    b = putBytes(buffer, b, KIND_BYTES[this.kindIndex]!);
    buffer[b++] = 0x22; // "
    b = putBytes(buffer, b, plainBytes(field));
    b = putBytes(buffer, b, this.declBytes);
    b = putBytes(buffer, b, RANGE);
    b = putDecimal(buffer, b, s[k + Sketch.RangeStartLine]!);
    b = putBytes(buffer, b, CHARACTER);
    b = putDecimal(buffer, b, s[k + Sketch.RangeStartCharacter]!);
    b = putBytes(buffer, b, RANGE_END);
    b = putDecimal(buffer, b, s[k + Sketch.RangeEndLine]!);
    b = putBytes(buffer, b, CHARACTER);
    b = putDecimal(buffer, b, s[k + Sketch.RangeEndCharacter]!);
    b = putBytes(buffer, b, MIDDLE);
    b = out.copyHeld(b, startByte, endByte);
    b = putBytes(buffer, b, INDENT);
    b = putDecimal(buffer, b, s[k + Sketch.Indent]!);
    b = putBytes(buffer, b, PREFIX);
    b = out.copyHeld(b, prefixByte, startByte);
    b = putBytes(buffer, b, SUFFIX);
    b = out.copyHeld(b, endByte, suffixByte);
    b = putBytes(buffer, b, OFFSETS);
    b = putDecimal(buffer, b, s[k + Sketch.Start]!);
    b = putBytes(buffer, b, END);
    b = putDecimal(buffer, b, s[k + Sketch.End]!);
    b = putBytes(buffer, b, CODE_POINTS);
    b = putDecimal(buffer, b, s[k + Sketch.StartCodePoints]!);
    b = putBytes(buffer, b, END);
    b = putDecimal(buffer, b, s[k + Sketch.EndCodePoints]!);
    b = putBytes(buffer, b, CLOSE);
    out.endLine(b);
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
      row.kindIndex = s[at + Sketch.Kind]!;
      row.kind = HOLE_KINDS[row.kindIndex]!;
      row.middleKey = heads.middleKey(k++);
      row.sketch = s;
      row.at = at;
      yield row;
    }
  } finally {
    files.close();
  }
}
