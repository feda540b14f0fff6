/**
 * JSON Lines on disk, streamed both ways, so an export never holds a whole output file in memory: a
 * buffered writer (flushed every megabyte) and an async line reader.
 */
import { closeSync, fsyncSync, openSync, readSync, writeSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";

const FLUSH_BYTES = 1 << 20;

export class JsonlWriter {
  private readonly fd: number;
  private buffer: string[] = [];
  private buffered = 0;
  lines = 0;

  constructor(readonly path: string) {
    this.fd = openSync(path, "w");
  }

  write(value: unknown): void {
    this.writeLine(JSON.stringify(value));
  }

  /** Writes one line of JSON text already serialised (without its line break). */
  writeLine(json: string): void {
    const line = json + "\n";
    this.buffer.push(line);
    this.buffered += line.length;
    this.lines++;
    if (this.buffered >= FLUSH_BYTES) this.flush();
  }

  private flush(): void {
    if (this.buffer.length) writeSync(this.fd, this.buffer.join(""));
    this.buffer = [];
    this.buffered = 0;
  }

  /** Flushes to disk and closes; the file is complete afterwards. */
  close(): void {
    this.flush();
    fsyncSync(this.fd);
    closeSync(this.fd);
  }
}

const READ_BYTES = 1 << 20;

/**
 * The non-blank lines of a text file, one at a time, read in 1 MB chunks. Synchronous on purpose: Node's
 * readline async iterator queues lines ahead of a slow consumer without bound, which would bring the whole
 * file into memory; here only the current chunk and line are held.
 */
export function* readLines(path: string): Generator<string> {
  const fd = openSync(path, "r");
  const decoder = new StringDecoder("utf8");
  const chunk = Buffer.allocUnsafe(READ_BYTES);
  let rest = "";
  try {
    for (;;) {
      const n = readSync(fd, chunk, 0, READ_BYTES, null);
      const text = rest + (n > 0 ? decoder.write(chunk.subarray(0, n)) : decoder.end());
      const lines = text.split("\n");
      rest = n > 0 ? lines.pop()! : "";
      for (const line of lines) if (line.trim() !== "") yield line;
      if (n === 0) return;
    }
  } finally {
    closeSync(fd);
  }
}

/** The parsed lines of a JSONL file, one at a time (see `readLines`). */
export function* readJsonl<T>(path: string): Generator<T> {
  for (const line of readLines(path)) yield JSON.parse(line) as T;
}

/**
 * Walks files.jsonl alongside records sorted in the same file order, so each file's text is in memory only
 * while its records are processed.
 */
export class FileTextCursor {
  private readonly iterator: Generator<{ file: string; text: string }>;
  private current: { file: string; text: string } | undefined;

  constructor(filesJsonl: string) {
    this.iterator = readJsonl<{ file: string; text: string }>(filesJsonl);
  }

  textOf(file: string): string {
    while (this.current?.file !== file) {
      const next = this.iterator.next();
      if (next.done) throw new Error(`files.jsonl has no text for ${file} (records out of file order)`);
      this.current = next.value;
    }
    return this.current.text;
  }

  close(): void {
    this.iterator.return(undefined);
  }
}
