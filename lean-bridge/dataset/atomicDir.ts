/**
 * Writes a whole folder or nothing: files go to a sibling staging folder, which replaces the target by
 * rename only when complete. An interrupted export leaves the previous dataset exactly as it was.
 *
 * A folder cannot be swapped in one atomic step (Node has no `renameat2(RENAME_EXCHANGE)`), so the swap is
 * journalled: a small journal file beside the target names the staging and previous folders before the
 * first rename. If the process dies between the renames, the next export to that target finds the journal
 * and finishes the swap (the staged dataset was complete before the journal was written), so the target
 * is never left missing. Staging folders of dead processes are removed too.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { writeFileAtomic } from "../util/atomicWrite";

/** Files that mark a folder as one of our datasets (safe to replace). */
const DATASET_MARKERS = ["tasks.jsonl", "report.json"];

export type PrepareResult = { kind: "ok"; staging: StagingDir } | { kind: "error"; message: string };

/** The points of a swap, for tests that simulate a crash at each. */
export type SwapStep = "journal-written" | "old-moved-aside" | "new-moved-in";

interface Journal {
  staging: string;
  previous: string;
}

function journalPath(target: string): string {
  return join(dirname(target), `.${basename(target)}.swap.json`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** Finishes a swap a crash interrupted, and removes staging folders left by dead processes. */
export function recoverInterruptedSwap(target: string): void {
  const journal = journalPath(target);
  if (existsSync(journal)) {
    let entry: Journal | undefined;
    try {
      entry = JSON.parse(readFileSync(journal, "utf8")) as Journal;
    } catch {
      entry = undefined; // A torn journal was never acted on: the renames come after it is complete.
    }
    if (entry) {
      if (existsSync(entry.staging)) {
        if (existsSync(target)) {
          rmSync(entry.previous, { recursive: true, force: true });
          renameSync(target, entry.previous);
        }
        renameSync(entry.staging, target);
      } else if (!existsSync(target) && existsSync(entry.previous)) renameSync(entry.previous, target);
      rmSync(entry.previous, { recursive: true, force: true });
    }
    rmSync(journal, { force: true });
  }
  const parent = dirname(target);
  if (!existsSync(parent)) return;
  const prefix = `.${basename(target)}.`;
  for (const name of readdirSync(parent)) {
    const m = /^(?:staging|previous)-(\d+)-\d+(?:\.previous)?$/.exec(name.slice(prefix.length));
    if (!name.startsWith(prefix) || !m) continue;
    const pid = Number(m[1]);
    if (pid !== process.pid && !isAlive(pid)) rmSync(join(parent, name), { recursive: true, force: true });
  }
}

export class StagingDir {
  private constructor(
    readonly target: string,
    readonly path: string,
  ) {}

  static prepare(target: string): PrepareResult {
    try {
      recoverInterruptedSwap(target);
    } catch (error) {
      return {
        kind: "error",
        message: `an earlier export to ${target} was interrupted and could not be finished: ${(error as Error).message}; check the folders beside it`,
      };
    }
    if (existsSync(target)) {
      if (!statSync(target).isDirectory())
        return { kind: "error", message: `--out ${target} exists and is not a folder` };
      const entries = readdirSync(target);
      if (entries.length > 0 && !DATASET_MARKERS.some((m) => entries.includes(m)))
        return {
          kind: "error",
          message: `--out ${target} exists, is not empty, and is not a dataset written by fim-rlvr; choose another folder or remove it`,
        };
    }
    const parent = dirname(target);
    try {
      mkdirSync(parent, { recursive: true });
      const path = join(parent, `.${basename(target)}.staging-${process.pid}-${Date.now()}`);
      mkdirSync(path);
      return { kind: "ok", staging: new StagingDir(target, path) };
    } catch (error) {
      return { kind: "error", message: `cannot write next to ${target}: ${(error as Error).message}` };
    }
  }

  /** A path inside the staging folder, for files written by streaming. */
  file(name: string): string {
    return join(this.path, name);
  }

  write(name: string, data: string): void {
    writeFileAtomic(join(this.path, name), data);
  }

  remove(name: string): void {
    rmSync(join(this.path, name), { force: true });
  }

  /**
   * Swaps the staged folder in. The old dataset is removed only after the new one is in place; a crash at
   * any point leaves a journal from which the next `prepare` of this target completes the swap.
   */
  commit(afterStep: (step: SwapStep) => void = () => {}): void {
    const journal = journalPath(this.target);
    const previous = `${this.path}.previous`;
    writeFileAtomic(journal, JSON.stringify({ staging: this.path, previous } satisfies Journal));
    afterStep("journal-written");
    const hadOld = existsSync(this.target);
    try {
      if (hadOld) renameSync(this.target, previous);
      afterStep("old-moved-aside");
      renameSync(this.path, this.target);
      afterStep("new-moved-in");
    } catch (error) {
      // A failed rename (not a crash): put the old dataset back now.
      if (hadOld && !existsSync(this.target) && existsSync(previous)) renameSync(previous, this.target);
      rmSync(journal, { force: true });
      throw error;
    }
    rmSync(previous, { recursive: true, force: true });
    rmSync(journal, { force: true });
  }

  discard(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}
