/**
 * The task-row encoder: the one writer of tasks.jsonl's rows. Each row is rebuilt from its task's sketch
 * (taskSketches.ts, written by pass 1) and its file's text as files.jsonl holds it, laid out in place in the
 * writer's buffer: keys and digits byte by byte, the middle, prefix and suffix copied from the file's JSON.
 * Every row is byte for byte `JSON.stringify(taskRecord(…))`, the contract records.ts defines
 * (test/dataset/rowBytes.test.ts checks it on text with what JSON escapes, astral characters, CRLF and
 * byte-order marks, on every split, with and without a goal or a reference). Every row has the same keys: a
 * value a task lacks is `null`.
 */
import { HOLE_KINDS } from "../holes/mine";
import type { JsonlWriter } from "./jsonl";
import { readLineBytes } from "./jsonl";
import { JsonText } from "./jsonText";
import type { PendingHeads } from "./pendingHeads";
import { NO_REFERENCE, Sketch, readSketches } from "./taskSketches";
import { ascii, putBytes, putDecimal, putHex32 } from "./asciiBytes";
import type { SplitRow } from "./writeTasks";

const SHA_KEY = Buffer.from(',"sha256":"');
/** `{"file":` before the name; after the key, 64 hex digits, `"` and `,"text":` before the text. */
const FILE_KEY_BYTES = 8;
const AFTER_SHA_KEY = SHA_KEY.length + 64 + 1 + 8;

/**
 * A files.jsonl row as the rows need it: the file's name and its text, as JSON in UTF-8 bytes. The text's
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
   * `JSON.stringify(text.slice(start, end))` as UTF-8 bytes, one character per byte, without its quotes:
   * for a slice whose bound pass 1 found inside a surrogate pair (no byte offset to copy from), escaped as
   * `JsonText.quoted` does.
   */
  escaped(start: number, end: number): string {
    this.parsed ??= new JsonText(
      JSON.parse(Buffer.from(this.json, "latin1").toString("utf8")) as string,
      this.json,
    );
    return this.parsed.quoted(start, end).slice(1, -1);
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
const GOAL = ascii(',"goal":');
const NULL_GOAL = ascii(',"goal":null');
const WITHOUT_REFERENCE = ascii(',"reference":false');
const WITH_REFERENCE = ascii(',"reference":null');
/** A row's bytes besides its names, kind, split field, texts and goal: the keys above and 11 numbers' digits. */
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

/** A task's goal as its row holds it: `JSON.stringify(goal)` as UTF-8, `bytes[start, end)`. */
export interface GoalBytes {
  bytes: Buffer;
  start: number;
  end: number;
}

/** One task rebuilt from its sketch; one object reused for every task, valid until the next. */
class SketchedRow implements SplitRow {
  decl = 0;
  middleKey = 0;
  kind = "";
  kindIndex = 0;
  file: FileOfRows | undefined;
  declName = "";
  /** With `--verify`: the goal Lean showed at the hole, if it showed one. */
  goal: GoalBytes | undefined;
  /** False for a statement without a proof: its middle is `sorry`, no reference to learn from. */
  reference = true;
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
   * Writes the row, `field` (`,"split":…`) in its place, into `out`'s buffer: `taskRecord`'s fields in its
   * order, the texts copied from the file's JSON held at the buffer's start. Built only for rows that are
   * written (not for training rows the dedup drops).
   */
  write(out: JsonlWriter, field: Buffer): void {
    const s = this.sketch;
    const k = this.at;
    const file = this.file!;
    const start = s[k + Sketch.Start]!;
    const end = s[k + Sketch.End]!;
    const prefixByte = s[k + Sketch.PrefixFromByte]!;
    const startByte = s[k + Sketch.StartByte]!;
    const endByte = s[k + Sketch.EndByte]!;
    const suffixByte = s[k + Sketch.SuffixToByte]!;
    // A bound inside a surrogate pair (never a token's or a line's) has no byte offset: the three texts are
    // escaped from the file's text instead of copied from its JSON.
    const copied = prefixByte >= 0 && startByte >= 0 && endByte >= 0 && suffixByte >= 0;
    let escaped: [middle: string, prefix: string, suffix: string] | undefined;
    if (!copied)
      escaped = [
        file.escaped(start, end),
        file.escaped(s[k + Sketch.PrefixFrom]!, start),
        file.escaped(end, s[k + Sketch.SuffixTo]!),
      ];
    else if (this.heldBy !== out || this.heldFile !== file) {
      out.holdText(file.chunk, file.jsonStart, file.jsonEnd);
      this.heldBy = out;
      this.heldFile = file;
    }
    if (this.declBytesOf !== this.decl) {
      this.declBytes = ascii(`,"decl":${this.declName},"context":${this.decl}`);
      this.declBytesOf = this.decl;
    }
    const name = file.fileSegment;
    const goal = this.goal;
    const texts = escaped
      ? escaped[0].length + escaped[1].length + escaped[2].length
      : suffixByte - prefixByte;
    const buffer = out.room(
      FIXED_BYTES +
        name.length +
        this.declBytes.length +
        field.length +
        texts +
        (goal ? GOAL.length + goal.end - goal.start : NULL_GOAL.length) +
        WITHOUT_REFERENCE.length,
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
    b = escaped ? out.putLatin1At(b, escaped[0]) : out.copyHeld(b, startByte, endByte);
    b = putBytes(buffer, b, INDENT);
    b = putDecimal(buffer, b, s[k + Sketch.Indent]!);
    b = putBytes(buffer, b, PREFIX);
    b = escaped ? out.putLatin1At(b, escaped[1]) : out.copyHeld(b, prefixByte, startByte);
    b = putBytes(buffer, b, SUFFIX);
    b = escaped ? out.putLatin1At(b, escaped[2]) : out.copyHeld(b, endByte, suffixByte);
    b = putBytes(buffer, b, OFFSETS);
    b = putDecimal(buffer, b, start);
    b = putBytes(buffer, b, END);
    b = putDecimal(buffer, b, end);
    b = putBytes(buffer, b, CODE_POINTS);
    b = putDecimal(buffer, b, s[k + Sketch.StartCodePoints]!);
    b = putBytes(buffer, b, END);
    b = putDecimal(buffer, b, s[k + Sketch.EndCodePoints]!);
    buffer[b++] = 0x7d; // }
    // Every row has every key: no goal and a task with a reference are `null`.
    if (goal) {
      b = putBytes(buffer, b, GOAL);
      b = out.putSlice(b, goal.bytes, goal.start, goal.end);
    } else b = putBytes(buffer, b, NULL_GOAL);
    b = putBytes(buffer, b, this.reference ? WITH_REFERENCE : WITHOUT_REFERENCE);
    buffer[b++] = 0x7d; // }
    out.endLine(b);
  }
}

/** `null`: a goal line of a task Lean showed no goal for. */
const NO_GOAL = Buffer.from("null");

/**
 * The task rows of the sketches at `sketchPath`, in order, with the middle keys kept for them (`heads`, in
 * the same order) and each declaration's name as JSON (`declNames`, UTF-8 bytes one character per byte);
 * with `--verify`, each task's goal from `goalsPath` (one line per sketch: `JSON.stringify(goal)` or `null`).
 */
export function* sketchedRows(
  filesPath: string,
  sketchPath: string,
  heads: PendingHeads,
  declNames: readonly string[],
  goalsPath?: string,
): Generator<SplitRow> {
  const files = new FilesCursor(filesPath);
  const goals = goalsPath !== undefined ? readLineBytes(goalsPath) : undefined;
  const row = new SketchedRow();
  const goal: GoalBytes = { bytes: NO_GOAL, start: 0, end: 0 };
  let k = 0;
  try {
    for (const [s, at] of readSketches(sketchPath)) {
      row.file = files.at(s[at + Sketch.File]!);
      row.decl = s[at + Sketch.Decl]!;
      row.declName = declNames[row.decl]!;
      row.kindIndex = s[at + Sketch.Kind]!;
      row.kind = HOLE_KINDS[row.kindIndex]!;
      row.middleKey = heads.middleKey(k++);
      row.reference = (s[at + Sketch.Flags]! & NO_REFERENCE) === 0;
      row.sketch = s;
      row.at = at;
      row.goal = undefined;
      if (goals) {
        const line = goals.next();
        if (line.done) throw new Error("the export's goals file has fewer lines than its tasks");
        [goal.bytes, goal.start, goal.end] = line.value;
        if (!isNull(goal)) row.goal = goal;
      }
      yield row;
    }
  } finally {
    files.close();
    goals?.return(undefined);
  }
}

function isNull(goal: GoalBytes): boolean {
  return goal.end - goal.start === 4 && goal.bytes.compare(NO_GOAL, 0, 4, goal.start, goal.end) === 0;
}
