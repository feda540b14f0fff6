/**
 * JSON Lines on disk, streamed both ways, so an export never holds a whole output file in memory: a
 * buffered writer (flushed every megabyte) and a line reader.
 */
import { closeSync, fsyncSync, openSync, readSync, writeSync } from "node:fs";

const FLUSH_BYTES = 1 << 20;

export class JsonlWriter {
  private readonly fd: number;
  /**
   * Lines are encoded straight into this buffer (no joined string), written out when it fills. Its first
   * `held` bytes are not output but a text that lines copy slices of (`holdText`): a slice then moves with
   * `copyWithin` inside one buffer, where a copy between two buffers makes a view object per call.
   */
  private buffer = Buffer.allocUnsafe(FLUSH_BYTES);
  private held = 0;
  /** The end of the output not yet written out, in `buffer` (the output starts at `held`). */
  private used = 0;
  /** Where the line being written (or the last one written) starts in `buffer`. */
  private lineStart = 0;
  lines = 0;

  /**
   * `durable: false` for a scratch file that is deleted after the export: it is not forced to disk on
   * close (a gigabyte of pending tasks would otherwise be written out only to be removed).
   */
  constructor(
    readonly path: string,
    private readonly options: { durable: boolean } = { durable: true },
  ) {
    this.fd = openSync(path, "w");
  }

  write(value: unknown): void {
    this.writeLine(JSON.stringify(value));
  }

  /** Writes one line of JSON text already serialised (without its line break). */
  writeLine(json: string): void {
    // A UTF-16 unit takes at most 3 bytes of UTF-8 (a surrogate pair: 4 for 2 units).
    const most = 3 * json.length + 1;
    this.room(most);
    this.used += this.buffer.write(json, this.used, "utf8");
    this.buffer[this.used++] = 10;
    this.lines++;
  }

  /**
   * Writes one line already encoded: UTF-8 bytes held in a one-byte string, one character per byte (see
   * jsonText.ts). Rows joined from slices of such strings are copied out once, never re-encoded.
   */
  writeLatin1Line(bytes: string): void {
    this.room(bytes.length + 1);
    this.used += this.buffer.write(bytes, this.used, "latin1");
    this.buffer[this.used++] = 10;
    this.lines++;
  }

  /**
   * Keeps `source[start, end)` at the start of the buffer, where `copyHeld` copies slices of it into lines,
   * until the next call (the output written so far is flushed first).
   */
  holdText(source: Uint8Array, start: number, end: number): void {
    this.flush();
    const bytes = end - start;
    if (bytes + FLUSH_BYTES > this.buffer.length) this.buffer = Buffer.allocUnsafe(bytes + FLUSH_BYTES);
    this.buffer.set(source.subarray(start, end), 0);
    this.held = this.used = bytes;
  }

  /**
   * Room for a line of at most `bytes` bytes (its line break included), written by the caller into the
   * returned buffer from `end` on and ended with `endLine`.
   */
  room(bytes: number): Buffer {
    if (this.used + bytes > this.buffer.length) {
      this.flush();
      if (this.held + bytes > this.buffer.length) {
        const bigger = Buffer.allocUnsafe(this.held + bytes);
        bigger.set(this.buffer.subarray(0, this.held), 0);
        this.buffer = bigger;
      }
    }
    this.lineStart = this.used;
    return this.buffer;
  }

  /** Where the next line starts in the buffer `room` returned. */
  get end(): number {
    return this.used;
  }

  /** Writes `text` as UTF-8 where the line being written ends (after `room` made space for it). */
  putUtf8(text: string): void {
    this.used += this.buffer.write(text, this.used, "utf8");
  }

  /** Writes UTF-8 bytes held one character per byte (jsonText.ts) where the line being written ends. */
  putLatin1(bytes: string): void {
    this.used += this.buffer.write(bytes, this.used, "latin1");
  }

  /** Copies the held text's bytes [from, to) into the buffer at `at`; returns where they end. */
  copyHeld(at: number, from: number, to: number): number {
    this.buffer.copyWithin(at, from, to);
    return at + (to - from);
  }

  /** Writes UTF-8 bytes held one character per byte into the buffer at `at`; returns where they end. */
  putLatin1At(at: number, bytes: string): number {
    return at + this.buffer.write(bytes, at, "latin1");
  }

  /** Copies `source[from, to)` into the buffer at `at`; returns where they end. */
  putSlice(at: number, source: Buffer, from: number, to: number): number {
    return at + source.copy(this.buffer, at, from, to);
  }

  /**
   * The last line written, decoded (without its line break): what a reader of the file will parse. Valid
   * until the next line is written.
   */
  lastLine(): string {
    return this.buffer.toString("utf8", this.lineStart, this.used - 1);
  }

  /** Ends the line the caller wrote into the buffer up to `at` (the line break is added here). */
  endLine(at: number): void {
    this.buffer[at] = 10;
    this.used = at + 1;
    this.lines++;
  }

  private flush(): void {
    let at = this.held;
    while (at < this.used) at += writeSync(this.fd, this.buffer, at, this.used - at);
    this.used = this.held;
  }

  /** Flushes to disk and closes; the file is complete afterwards. */
  close(): void {
    this.flush();
    if (this.options.durable) fsyncSync(this.fd);
    closeSync(this.fd);
  }
}

const READ_BYTES = 1 << 20;

/**
 * The lines of a file as bytes, one at a time, read in 1 MB chunks: `[chunk, start, end]`, valid until the
 * next line is asked for. Synchronous on purpose: Node's readline async iterator queues lines ahead of a slow
 * consumer without bound, which would bring the whole file into memory; here only the current chunk is held.
 * Lines are cut at the byte level (a UTF-8 sequence never holds a newline byte).
 */
export function* readLineBytes(path: string): Generator<readonly [Buffer, number, number]> {
  const fd = openSync(path, "r");
  let chunk = Buffer.allocUnsafe(READ_BYTES);
  let held = 0; // Bytes of an unfinished line at the start of `chunk`.
  try {
    for (;;) {
      if (held === chunk.length) {
        // A line longer than the buffer: grow it.
        const bigger = Buffer.allocUnsafe(chunk.length * 2);
        chunk.copy(bigger, 0, 0, held);
        chunk = bigger;
      }
      const n = readSync(fd, chunk, held, chunk.length - held, null);
      const end = held + n;
      let from = 0;
      for (let nl = chunk.indexOf(10, from); nl !== -1 && nl < end; nl = chunk.indexOf(10, from)) {
        yield [chunk, from, nl];
        from = nl + 1;
      }
      if (n === 0) {
        if (from < end) yield [chunk, from, end];
        return;
      }
      chunk.copy(chunk, 0, from, end);
      held = end - from;
    }
  } finally {
    closeSync(fd);
  }
}

/** The non-blank lines of a UTF-8 text file, decoded, one at a time (see `readLineBytes`). */
export function* readLines(path: string): Generator<string> {
  for (const [chunk, start, end] of readLineBytes(path)) {
    const line = chunk.toString("utf8", start, end);
    if (line.trim() !== "") yield line;
  }
}

/** The parsed lines of a JSONL file, one at a time (see `readLines`). */
export function* readJsonl<T>(path: string): Generator<T> {
  for (const line of readLines(path)) yield JSON.parse(line) as T;
}

/**
 * Walks files.jsonl alongside records sorted in the same file order, so each file's text is in memory only
 * while its records are processed. Records name their file by its name (`textOf`) or by its line
 * (`recordAt`: a task's sketch); either way the cursor only goes forward.
 */
export class FileTextCursor {
  private readonly iterator: Generator<{ file: string; text: string }>;
  private current: { file: string; text: string } | undefined;
  /** The line of files.jsonl `current` was read from (blank lines aside). */
  private line = -1;

  constructor(filesJsonl: string) {
    this.iterator = readJsonl<{ file: string; text: string }>(filesJsonl);
  }

  private advance(): boolean {
    const next = this.iterator.next();
    if (next.done) return false;
    this.current = next.value;
    this.line++;
    return true;
  }

  textOf(file: string): string {
    while (this.current?.file !== file)
      if (!this.advance()) throw new Error(`files.jsonl has no text for ${file} (records out of file order)`);
    return this.current.text;
  }

  /** The file record on line `line` (0-based) of files.jsonl. */
  recordAt(line: number): { file: string; text: string } {
    while (this.line < line || !this.current)
      if (!this.advance())
        throw new Error(`files.jsonl has no row ${line} (the export's own scratch files disagree)`);
    if (this.line !== line) throw new Error(`files.jsonl row ${line} asked for after row ${this.line}`);
    return this.current;
  }

  close(): void {
    this.iterator.return(undefined);
  }
}
