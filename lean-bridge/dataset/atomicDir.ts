/**
 * Writes a whole folder or nothing: files go to a sibling temporary folder, which replaces the target by
 * rename only when complete. An interrupted export leaves the previous dataset exactly as it was.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { writeFileAtomic } from "../util/atomicWrite";

/** Files that mark a folder as one of our datasets (safe to replace). */
const DATASET_MARKERS = ["tasks.jsonl", "report.json"];

export type PrepareResult = { kind: "ok"; staging: StagingDir } | { kind: "error"; message: string };

export class StagingDir {
  private constructor(
    readonly target: string,
    readonly path: string,
  ) {}

  static prepare(target: string): PrepareResult {
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

  write(name: string, data: string): void {
    writeFileAtomic(join(this.path, name), data);
  }

  /** Swaps the staged folder in. The old dataset is removed only after the new one is in place. */
  commit(): void {
    const old = existsSync(this.target) ? `${this.path}.previous` : undefined;
    if (old) renameSync(this.target, old);
    try {
      renameSync(this.path, this.target);
    } catch (error) {
      if (old) renameSync(old, this.target);
      throw error;
    }
    if (old) rmSync(old, { recursive: true, force: true });
  }

  discard(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}
