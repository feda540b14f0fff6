/**
 * Writes that never leave a half-written file: data goes to a temporary file beside the target, is
 * flushed to disk, then renamed over the target (rename is atomic within one file system).
 */
import { closeSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { basename, dirname, join } from "node:path";

export function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${Date.now()}.tmp`);
}

export function writeFileAtomic(target: string, data: string | Uint8Array): void {
  const tmp = tempPathFor(target);
  const fd = openSync(tmp, "w");
  try {
    writeSync(fd, typeof data === "string" ? Buffer.from(data, "utf8") : data);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw error;
  }
  closeSync(fd);
  renameSync(tmp, target);
}

/** A line-by-line writer whose output appears at `target` only when `commit()` is called. */
export class AtomicLineWriter {
  private readonly tmp: string;
  private readonly fd: number;
  private closed = false;

  constructor(private readonly target: string) {
    this.tmp = tempPathFor(target);
    this.fd = openSync(this.tmp, "w");
  }

  line(text: string): void {
    writeSync(this.fd, text + "\n");
  }

  commit(): void {
    if (this.closed) return;
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.closed = true;
    renameSync(this.tmp, this.target);
  }

  abort(): void {
    if (this.closed) return;
    closeSync(this.fd);
    this.closed = true;
    rmSync(this.tmp, { force: true });
  }
}
