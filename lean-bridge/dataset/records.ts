/**
 * The rows of tasks.jsonl, contexts.jsonl and files.jsonl: the dataset's contract (see README.md,
 * "Datasets"). A task row is the hole and a bounded window around it; what every hole of one declaration
 * shares (its statement, text, imports, scope and variables) is written once, in the declaration's context
 * row. The exporter writes these rows from bytes (rowBytes.ts, taskRows.ts); `JSON.stringify` of the records
 * made here is what those bytes must be, and the tests compare them.
 */
import { createHash } from "node:crypto";
import type { Range } from "vscode-languageserver-protocol";
import type { HoleKind, MinedHole } from "../holes/mine";
import { boundPrefix, boundSuffix, suffixChars } from "./context";
import { holeId, type Split } from "./split";
import type { HeldOut } from "./splitPlan";

export interface FileRecord {
  file: string;
  sha256: string;
  text: string;
}

/** Offsets in a file's text, in UTF-16 code units (`offsets`) and in code points (`offsetsCodePoints`). */
export interface Span {
  start: number;
  end: number;
}

/**
 * A task row. Every row has every field, in this order: a value a task does not have is `null`, never an absent
 * key, so a reader sees one schema per file (🤗 `datasets` infers a file's columns from its rows).
 */
export interface TaskRecord {
  /** Stable hash of (file, declaration, kind, offsets, middle). */
  id: string;
  file: string;
  kind: HoleKind;
  split: Split;
  /**
   * Validation and test tasks: whether the hole's normalised middle (tokens without comments and layout) is
   * the middle of no training task. `null` on training tasks.
   */
  novel: boolean | null;
  /**
   * Validation and test tasks: "instance" when training has other declarations of the task's family, "family"
   * when it has none. `null` on training tasks.
   */
  heldOut: HeldOut | null;
  /** Fully qualified name; "" for anonymous declarations (`example`). */
  decl: string;
  /** The 0-based line of contexts.jsonl that holds this declaration's context. */
  context: number;
  /** LSP range of the hole in the file (0-based lines, UTF-16 characters). */
  range: Range;
  middle: string;
  /** Column of the hole: continuation lines of a candidate align here. */
  indent: number;
  /**
   * The declaration's text just before the hole: all of it when it fits the export's `--context-chars`
   * window, else its last lines that fit. The file text before the hole ends with `prefix`.
   */
  prefix: string;
  /** The declaration's text just after the hole, within a quarter of the window; the file text after the hole starts with it. */
  suffix: string;
  /**
   * Offsets of the hole in the file text in UTF-16 code units (JavaScript, LSP, Java strings). They equal
   * `offsetsCodePoints` unless the file has characters outside the Basic Multilingual Plane (𝔸, emoji).
   */
  offsets: Span;
  /** Offsets of the hole in code points: what Python's and Rust's `chars()` slicing count. */
  offsetsCodePoints: Span;
  /**
   * `export --verify` only: the goal state at the hole as Lean prints it (hypotheses, then `⊢ type`), read with
   * Lean's `done` in the hole (verify/goalAtHole.ts); `null` where Lean showed none, and without `--verify`. A
   * prompt shows it above the hole.
   */
  goal: string | null;
  /**
   * `false` for a statement without a proof (its proof in the workspace is `sorry`: the middle): no reference
   * to imitate, so never an SFT target, rewarded by the verifier alone; `null` on every other task.
   */
  reference: false | null;
}

/** One declaration that has tasks: what a prompt for any of its holes needs besides the hole's window. */
export interface ContextRecord {
  /** This row's index in contexts.jsonl (the `context` of its tasks). */
  context: number;
  file: string;
  decl: string;
  declKind: string;
  declStart: Range["start"];
  /** The declaration in the file text (doc comment and attributes included), as tasks' offsets count. */
  offsets: Span;
  offsetsCodePoints: Span;
  /** The file's `import`s (module names). */
  imports: string[];
  /** `namespace`, `section`, `open` and `universe` commands in effect at the declaration, in file order. */
  scope: string[];
  /** `variable` commands in scope. */
  variables: string[];
  /** The declaration header up to `:=` (e.g. "theorem foo (n : Nat) : n + 0 = n"). */
  statement: string;
  /** The declaration's whole text: a task's full declaration prefix is `text[: hole start − offsets.start]`. */
  text: string;
}

/**
 * Converts UTF-16 offsets of one file's text to code-point offsets: each astral character (a surrogate
 * pair) counts 2 in UTF-16 and 1 in code points. Built once per file; each lookup is a binary search.
 */
export class CodePointIndex {
  /** UTF-16 offsets of the high surrogates of astral characters, ascending. */
  private readonly pairs: readonly number[];

  /** `pairs`: the high surrogates' offsets when already at hand (`JsonText.pairs`), else found in `text`. */
  constructor(text: string, pairs?: readonly number[]) {
    if (pairs) {
      this.pairs = pairs;
      return;
    }
    const found: number[] = [];
    this.pairs = found;
    for (let k = 0; k < text.length; k++) {
      const c = text.charCodeAt(k);
      if (c >= 0xd800 && c <= 0xdbff && k + 1 < text.length) {
        const d = text.charCodeAt(k + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          found.push(k);
          k++;
        }
      }
    }
  }

  /** The code-point offset of a UTF-16 offset (which never splits a pair: holes start and end at tokens). */
  codePointOffset(utf16: number): number {
    let lo = 0;
    let hi = this.pairs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.pairs[mid]! < utf16) lo = mid + 1;
      else hi = mid;
    }
    return utf16 - lo;
  }
}

/** The declaration a hole belongs to, unique within its file: splits are decided per declaration. */
export function declKeyOf(hole: { decl: string; declKind: string; declStart: Range["start"] }): string {
  return hole.decl || `${hole.declKind}@${hole.declStart.line}`;
}

export function fileRecord(file: string, text: string): FileRecord {
  return { file, sha256: createHash("sha256").update(text, "utf8").digest("hex"), text };
}

/** What task and context rows take from their file besides the hole. */
export interface TaskContext {
  file: string;
  imports: string[];
  scope: string[];
  codePoints: CodePointIndex;
  /** The prefix window (`--context-chars`); the suffix gets a quarter of it. */
  contextChars: number;
}

function span(
  codePoints: CodePointIndex,
  start: number,
  end: number,
): { offsets: Span; offsetsCodePoints: Span } {
  return {
    offsets: { start, end },
    offsetsCodePoints: { start: codePoints.codePointOffset(start), end: codePoints.codePointOffset(end) },
  };
}

/** The context row of the declaration `hole` lies in (built from its first task's hole). */
export function contextRecord(hole: MinedHole, index: number, context: TaskContext): ContextRecord {
  const start = hole.start - hole.declPrefix.length;
  const end = hole.end + hole.declSuffix.length;
  return {
    context: index,
    file: context.file,
    decl: hole.decl,
    declKind: hole.declKind,
    declStart: hole.declStart,
    ...span(context.codePoints, start, end),
    imports: context.imports,
    scope: context.scope,
    variables: hole.variables,
    statement: hole.statement,
    text: hole.declPrefix + hole.middle + hole.declSuffix,
  };
}

/**
 * What a task row holds besides its hole: decided after mining (`novel`, `heldOut`, `reference`) or by Lean
 * (`goal`). Each one left out is `null` in the row.
 */
export interface TaskExtras {
  /** Validation and test tasks: whether no training task has the same normalised middle. */
  novel?: boolean;
  /** Validation and test tasks: how the task is held out. */
  heldOut?: HeldOut;
  goal?: string;
  /** False for a statement without a proof. */
  reference?: boolean;
}

/** A task's row, fields in the order the exporter writes them. */
export function taskRecord(
  hole: MinedHole,
  split: Split,
  contextIndex: number,
  context: TaskContext,
  extras: TaskExtras = {},
): TaskRecord {
  const { file, codePoints, contextChars } = context;
  return {
    id: holeId(file, declKeyOf(hole), hole.kind, hole.start, hole.end, hole.middle),
    file,
    kind: hole.kind,
    split,
    novel: split !== "train" ? (extras.novel ?? null) : null,
    heldOut: split !== "train" ? (extras.heldOut ?? null) : null,
    decl: hole.decl,
    context: contextIndex,
    range: hole.range,
    middle: hole.middle,
    indent: hole.indent,
    prefix: boundPrefix(hole.declPrefix, contextChars),
    suffix: boundSuffix(hole.declSuffix, suffixChars(contextChars)),
    ...span(codePoints, hole.start, hole.end),
    goal: extras.goal ?? null,
    reference: extras.reference === false ? false : null,
  };
}
