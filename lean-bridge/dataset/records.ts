/** The rows of tasks.jsonl and files.jsonl: the dataset's contract (see README.md, "Dataset format"). */
import { createHash } from "node:crypto";
import type { Range } from "../protocol/lsp";
import type { HoleKind, MinedHole } from "../holes/mine";
import { holeId, splitOf, type Split } from "./split";

export interface FileRecord {
  file: string;
  sha256: string;
  text: string;
}

export interface TaskRecord {
  /** Stable hash of (file, declaration, kind, offsets, middle). */
  id: string;
  file: string;
  /** Fully qualified name; "" for anonymous declarations (`example`). */
  decl: string;
  declKind: string;
  kind: HoleKind;
  /** LSP range of the hole in the file (0-based lines, UTF-16 characters). */
  range: Range;
  middle: string;
  /** Column of the hole: continuation lines of a candidate align here. */
  indent: number;
  imports: string[];
  split: Split;
  /** The declaration header up to `:=` (e.g. "theorem foo (n : Nat) : n + 0 = n"). */
  statement: string;
  /** The declaration's text before the hole (statement, `:= by`, earlier steps). */
  prefix: string;
  /** The declaration's text after the hole. */
  suffix: string;
  /** Where the declaration starts in the file: the file text before it is its context. */
  declStart: Range["start"];
  /** `variable` commands in scope. */
  variables: string[];
  /** Offsets of the hole in the file text (UTF-16), for tools that slice strings. */
  offsets: { start: number; end: number };
}

export function fileRecord(file: string, text: string): FileRecord {
  return { file, sha256: createHash("sha256").update(text, "utf8").digest("hex"), text };
}

export function taskRecord(file: string, imports: string[], hole: MinedHole, seed: number): TaskRecord {
  const declKey = hole.decl || `${hole.declKind}@${hole.declStart.line}`;
  return {
    id: holeId(file, declKey, hole.kind, hole.start, hole.end, hole.middle),
    file,
    decl: hole.decl,
    declKind: hole.declKind,
    kind: hole.kind,
    range: hole.range,
    middle: hole.middle,
    indent: hole.indent,
    imports,
    split: splitOf(seed, file, declKey),
    statement: hole.statement,
    prefix: hole.declPrefix,
    suffix: hole.declSuffix,
    declStart: hole.declStart,
    variables: hole.variables,
    offsets: { start: hole.start, end: hole.end },
  };
}
