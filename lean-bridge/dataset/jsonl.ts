/**
 * JSON Lines on disk, streamed both ways, so an export never holds a whole output file in memory: a
 * buffered writer (flushed every megabyte) and an async line reader.
 */
import { closeSync, createReadStream, fsyncSync, openSync, writeSync } from "node:fs";
import { createInterface } from "node:readline";

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
    const line = JSON.stringify(value) + "\n";
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

/** The parsed lines of a JSONL file, one at a time. */
export async function* readJsonl<T>(path: string): AsyncGenerator<T> {
  const lines = createInterface({ input: createReadStream(path, "utf8"), crlfDelay: Infinity });
  for await (const line of lines) if (line !== "") yield JSON.parse(line) as T;
}

/**
 * Walks files.jsonl alongside records sorted in the same file order, so each file's text is in memory only
 * while its records are processed.
 */
export class FileTextCursor {
  private readonly iterator: AsyncGenerator<{ file: string; text: string }>;
  private current: { file: string; text: string } | undefined;

  constructor(filesJsonl: string) {
    this.iterator = readJsonl<{ file: string; text: string }>(filesJsonl);
  }

  async textOf(file: string): Promise<string> {
    while (this.current?.file !== file) {
      const next = await this.iterator.next();
      if (next.done) throw new Error(`files.jsonl has no text for ${file} (records out of file order)`);
      this.current = next.value;
    }
    return this.current.text;
  }

  async close(): Promise<void> {
    await this.iterator.return(undefined);
  }
}
