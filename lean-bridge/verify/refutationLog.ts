/**
 * The project's record of the kernel gate's refutations, PROJECT/.fim-rlvr/refutations.jsonl (docs/POLICY.md):
 * one JSON line per refuted proof. The gate's stage reads it when a verifier starts, so once any proof of the
 * project has been refuted every later one is gated, across restarts too (a policy that found a hack repeats
 * it, and a restart must not hand it a fresh share). Each line is written by one `appendFileSync` of a single
 * line under PIPE_BUF bytes to a file opened for appending, which POSIX writes whole even when two verifiers
 * append at once; a line cut short (a crash mid-write) is skipped on reading, never fatal.
 */
import { appendFileSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** The file, under the project's own folder of the verifier's state. */
export function refutationLogPath(projectRoot: string): string {
  return join(projectRoot, ".fim-rlvr", "refutations.jsonl");
}

/** One refutation as recorded. */
export interface RefutationRecord {
  /** ISO time of the refutation. */
  at: string;
  /** The task file (project-relative) and the checked declaration. */
  file: string;
  declaration: string;
  /** The gate that refuted it ("kernel-replay"). */
  gate: string;
  /** The verdict's reason, cut to keep the line short. */
  reason: string;
}

/** Bytes a line may take: under Linux's PIPE_BUF (4096), so an append is written whole. */
const MAX_LINE_BYTES = 3500;

/** Appends one record. Returns an error message instead of throwing: a log that cannot be written is reported. */
export function appendRefutation(path: string, record: RefutationRecord): string | undefined {
  let line = JSON.stringify(record);
  for (let keep = record.reason.length; Buffer.byteLength(line) > MAX_LINE_BYTES && keep > 0;) {
    keep = Math.floor(keep / 2);
    line = JSON.stringify({ ...record, reason: `${record.reason.slice(0, keep)}…` });
  }
  try {
    mkdirSync(dirname(path), { recursive: true });
    appendFileSync(path, `${line}\n`, { flag: "a" });
    return undefined;
  } catch (error) {
    return `could not record the refutation in ${path}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** How many refutations the file records (0 when it does not exist); lines that do not parse are skipped. */
export function countRefutations(path: string): number {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return 0;
  }
  let count = 0;
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const record = JSON.parse(line) as Partial<RefutationRecord>;
      if (typeof record.declaration === "string" && typeof record.at === "string") count++;
    } catch {
      // A line cut short by a crash: not a record.
    }
  }
  return count;
}
