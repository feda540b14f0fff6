/**
 * What export pass 1 keeps of each task: a sketch of 21 whole numbers (84 bytes) in a scratch file, instead
 * of its ~600-byte row. Pass 3 (taskRows.ts) rebuilds the row from the sketch and its file's text in
 * files.jsonl and writes it once, with its split, straight into tasks.jsonl (with `--verify`, pass 2 checks
 * the sketched tasks first and keeps the sketches of those that verify): a Mathlib-sized export then writes
 * ~130 MB of scratch instead of writing and rewriting ~1 GB of rows. Streamed both ways in fixed chunks, so
 * memory stays bounded whatever the number of tasks.
 */
import { closeSync, openSync, readSync, writeSync } from "node:fs";

/** The fields of a sketch, by position. */
export const Sketch = {
  /** The task's file: its line number in files.jsonl (0-based). */
  File: 0,
  /** Its declaration's index (`_decl`: the context row, the split). */
  Decl: 1,
  /** Index into HOLE_KINDS. */
  Kind: 2,
  /** The hole's UTF-16 offsets in the file, and in code points. */
  Start: 3,
  End: 4,
  StartCodePoints: 5,
  EndCodePoints: 6,
  RangeStartLine: 7,
  RangeStartCharacter: 8,
  RangeEndLine: 9,
  RangeEndCharacter: 10,
  Indent: 11,
  /** Where the prefix window starts and the suffix window ends (UTF-16 offsets). */
  PrefixFrom: 12,
  SuffixTo: 13,
  /** The 16 hex digits of the task id, as two 32-bit halves. */
  IdHigh: 14,
  IdLow: 15,
  /**
   * Where PrefixFrom, Start, End and SuffixTo land in the file's text as files.jsonl escapes it (bytes from
   * its opening quote), or -1 between the halves of a surrogate pair (`JsonText.byteAt`).
   */
  PrefixFromByte: 16,
  StartByte: 17,
  EndByte: 18,
  SuffixToByte: 19,
  /** `NO_REFERENCE` for a statement without a proof (`"reference": false`), else 0. */
  Flags: 20,
} as const;

export const SKETCH_INTS = 21;

/** `Sketch.Flags`: the task has no reference (its middle is `sorry`). */
export const NO_REFERENCE = 1;
const CHUNK_SKETCHES = 8192;
const CHUNK_BYTES = CHUNK_SKETCHES * SKETCH_INTS * 4;

/** Two hex digits per byte value. */
const HEX = Array.from({ length: 256 }, (_, b) => b.toString(16).padStart(2, "0"));

/** The 8 hex digits of a 32-bit half of an id. */
function hex32(x: number): string {
  return HEX[(x >>> 24) & 255]! + HEX[(x >>> 16) & 255]! + HEX[(x >>> 8) & 255]! + HEX[x & 255]!;
}

/** A task id's 16 hex digits from the two halves a sketch holds (`holeIdHalves`). */
export function idOfHalves(high: number, low: number): string {
  return hex32(high) + hex32(low);
}

export class TaskSketchWriter {
  private readonly fd: number;
  private readonly buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private readonly ints = new Int32Array(
    this.buffer.buffer,
    this.buffer.byteOffset,
    CHUNK_SKETCHES * SKETCH_INTS,
  );
  private used = 0;
  count = 0;

  constructor(path: string) {
    this.fd = openSync(path, "w");
  }

  /** Room for the next sketch: fill `ints[at, at + SKETCH_INTS)` (by `Sketch`) before the next call. */
  next(): { ints: Int32Array; at: number } {
    if (this.used === CHUNK_SKETCHES) this.flush();
    this.count++;
    return { ints: this.ints, at: this.used++ * SKETCH_INTS };
  }

  private flush(): void {
    const bytes = this.used * SKETCH_INTS * 4;
    let at = 0;
    while (at < bytes) at += writeSync(this.fd, this.buffer, at, bytes - at);
    this.used = 0;
  }

  /** A scratch file, deleted after the export: flushed, not forced to disk. */
  close(): void {
    this.flush();
    closeSync(this.fd);
  }
}

/** The sketches of a file, in order: `[ints, at]`, the sketch at `ints[at, at + SKETCH_INTS)`, valid until the next. */
export function* readSketches(path: string): Generator<readonly [Int32Array, number]> {
  const fd = openSync(path, "r");
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  const ints = new Int32Array(buffer.buffer, buffer.byteOffset, CHUNK_SKETCHES * SKETCH_INTS);
  try {
    for (;;) {
      let filled = 0;
      for (let n = -1; n !== 0 && filled < CHUNK_BYTES; filled += n)
        n = readSync(fd, buffer, filled, CHUNK_BYTES - filled, null);
      const whole = Math.floor(filled / (SKETCH_INTS * 4));
      for (let k = 0; k < whole; k++) yield [ints, k * SKETCH_INTS];
      if (filled < CHUNK_BYTES) return;
    }
  } finally {
    closeSync(fd);
  }
}
