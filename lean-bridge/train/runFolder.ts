/**
 * The run folder of `fim-rlvr train`: `runs/<timestamp>` claimed atomically (two runs started in the same second
 * get two folders: the second gets a `-2` suffix), or the `--out` folder given. A folder this process created is
 * removed again when the run fails to start, so failed start-ups leave nothing behind; a folder that existed before
 * (an earlier run, `--resume`) is never removed.
 */
import { mkdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

export interface RunFolder {
  path: string;
  /** Made by this process: removed again by `discardUnstarted`. */
  created: boolean;
  /**
   * The outermost folder this process made for it: the first missing parent of an `--out` whose parents were
   * missing too (`--out new/eval`), so a failed start removes `new/` as well; absent when that is `path` itself.
   */
  outermost?: string;
}

/** UTC, to the second, with characters every file system takes: 2026-11-28T21-35-15. */
export function runTimestamp(now = new Date()): string {
  return now.toISOString().replace(/[:]/g, "-").replace(/\..*$/, "");
}

/** A new folder under `parent`, named by the time; mkdir without `recursive` fails on a name taken, so no two runs share one. */
export function claimRunFolder(parent: string, now = new Date()): RunFolder {
  mkdirSync(parent, { recursive: true });
  const base = join(resolve(parent), runTimestamp(now));
  for (let k = 1; ; k++) {
    const path = k === 1 ? base : `${base}-${k}`;
    try {
      mkdirSync(path);
      return { path, created: true };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
  }
}

/** The folder `--out` names: created (with its parents) when missing, and then this run's to remove (parents too). */
export function givenRunFolder(out: string): RunFolder {
  const path = resolve(out);
  // mkdir's recursive form returns the first folder it made (undefined when the path was there).
  const first = mkdirSync(path, { recursive: true });
  if (first === undefined) return { path, created: false };
  return { path, created: true, ...(resolve(first) !== path ? { outermost: resolve(first) } : {}) };
}

/** After a start-up that failed: the folder goes if this process made it, with whatever the start wrote there. */
export function discardUnstarted(folder: RunFolder): void {
  if (folder.created) rmSync(folder.outermost ?? folder.path, { recursive: true, force: true });
}
