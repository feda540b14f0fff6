/**
 * Temp folders for node:test files that remove themselves: each folder `tempDir` makes is deleted when the test
 * file's tests have ended (one `after` hook on the file's root, registered when this module is first imported, so
 * a folder made inside one test can still serve a later one). A test suite that leaves its exports, runs and
 * models in the temp folder fills the disk of whoever runs it.
 */
import { after } from "node:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];

after(() => {
  // Retried: a process a test has just killed (code-server, a trainer) may still be writing into its folder.
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
});

/** A new folder `<tmp>/<prefix>XXXXXX`, removed after the file's last test. */
export function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}
