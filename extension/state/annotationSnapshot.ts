/**
 * The hole annotations as saved across a window reload: per file, the hash of the text the ranges refer to
 * and the file's hole records (the newest attempts only). A file whose text changed while the editor was
 * closed gets none of its annotations back, since its ranges no longer point at the holes; anything in the saved
 * file that is not what we wrote (a crash mid-write, a hand edit, an older format) is dropped, never thrown.
 */
import { createHash } from "node:crypto";
import type { VerdictKind } from "../../lean-bridge/protocol/trainer";
import { VERDICT_RANK, type Attempt, type HoleRecord } from "./holeStore";

export const SNAPSHOT_VERSION = 1;

/** Attempts kept per hole in the saved file (the hover and "Show all attempts" show the newest). */
export const SAVED_ATTEMPTS = 5;

export interface AnnotationSnapshot {
  version: typeof SNAPSHOT_VERSION;
  files: Record<string, { sha256: string; holes: HoleRecord[] }>;
}

export function textHash(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

/** The snapshot of `records`; files whose text is unknown (`textOf` answers undefined) are left out. */
export function makeSnapshot(
  records: readonly HoleRecord[],
  textOf: (file: string) => string | undefined,
): AnnotationSnapshot {
  const files: AnnotationSnapshot["files"] = {};
  for (const record of records) {
    let entry = files[record.file];
    if (!entry) {
      const text = textOf(record.file);
      if (text === undefined) continue;
      entry = files[record.file] = { sha256: textHash(text), holes: [] };
    }
    entry.holes.push({ ...record, attempts: record.attempts.slice(-SAVED_ATTEMPTS) });
  }
  return { version: SNAPSHOT_VERSION, files };
}

export interface Restored {
  records: HoleRecord[];
  /** Files left out because their text changed (or is gone) since the snapshot. */
  changed: string[];
  /** Entries left out because they were not well-formed. */
  malformed: number;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null;
const isVerdict = (v: unknown): v is VerdictKind => VERDICT_RANK.includes(v as VerdictKind);
const isPosition = (v: unknown) =>
  isObject(v) && Number.isInteger(v.line) && Number.isInteger(v.character) && (v.line as number) >= 0;
const isRange = (v: unknown) => isObject(v) && isPosition(v.start) && isPosition(v.end);

const optionalString = (v: unknown) => v === undefined || typeof v === "string";

function isAttempt(v: unknown): v is Attempt {
  return (
    isObject(v) &&
    typeof v.candidate === "string" &&
    isVerdict(v.verdict) &&
    typeof v.reward === "number" &&
    typeof v.step === "number" &&
    typeof v.algorithm === "string" &&
    Array.isArray(v.diagnostics) &&
    optionalString(v.run) &&
    optionalString(v.verifier) &&
    optionalString(v.model)
  );
}

function isRecord(v: unknown, file: string): v is HoleRecord {
  return (
    isObject(v) &&
    typeof v.taskId === "string" &&
    v.file === file &&
    typeof v.kind === "string" &&
    optionalString(v.decl) &&
    isRange(v.range) &&
    Array.isArray(v.attempts) &&
    v.attempts.length > 0 &&
    v.attempts.every(isAttempt) &&
    typeof v.total === "number" &&
    isVerdict(v.best) &&
    isAttempt(v.latest)
  );
}

/** The records of a parsed snapshot whose files still hold the same text (`textOf` reads them now). */
export function readSnapshot(raw: unknown, textOf: (file: string) => string | undefined): Restored {
  const out: Restored = { records: [], changed: [], malformed: 0 };
  if (!isObject(raw) || raw.version !== SNAPSHOT_VERSION || !isObject(raw.files)) {
    if (raw !== undefined) out.malformed++;
    return out;
  }
  for (const [file, entry] of Object.entries(raw.files)) {
    if (!isObject(entry) || typeof entry.sha256 !== "string" || !Array.isArray(entry.holes)) {
      out.malformed++;
      continue;
    }
    const text = textOf(file);
    if (text === undefined || textHash(text) !== entry.sha256) {
      out.changed.push(file);
      continue;
    }
    for (const hole of entry.holes) {
      if (isRecord(hole, file)) out.records.push(hole);
      else out.malformed++;
    }
  }
  return out;
}
