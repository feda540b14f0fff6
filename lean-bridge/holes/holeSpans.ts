/**
 * From a declaration's tactic blocks (tactics.ts) to its holes: which spans are whole tactic sequences, one
 * hole per distinct span (the coarsest kind naming it), and each hole's offsets, positions and text. The
 * miner (mine.ts) runs this for every declaration of every file, so it reads the token arrays directly
 * and allocates nothing per span but the holes themselves.
 */
import type { Declaration } from "../lean/commands";
import { TokenKind, type TokenStream } from "../lean/tokens";
import type { HoleKind, MinedHole } from "./mine";
import type { TacticBlock, TacticStep } from "./tactics";

const PRIORITY: Record<HoleKind, number> = { proof: 0, block: 1, steps: 2, tactic: 3 };

/** A span of steps [from, to) is a whole tactic sequence exactly when each of its steps is. */
export function allWhole(steps: TacticStep[], from: number, to: number): boolean {
  for (let k = from; k < to; k++) if (!steps[k]!.whole) return false;
  return true;
}

/** The `block` span of every nested block and the `tactic` span of every step of a block of several, in reading order. */
export function addBlockSpans(spans: HoleSpans, block: TacticBlock, isTop: boolean): void {
  if (!isTop) spans.add("block", block.first, block.last, allWhole(block.steps, 0, block.steps.length));
  const several = block.steps.length > 1;
  for (const step of block.steps) {
    if (several) spans.add("tactic", step.first, step.last, step.whole);
    for (const nested of step.nested) addBlockSpans(spans, nested, false);
  }
}

/**
 * One declaration's holes as its spans come. The first span over given tokens decides: not whole, it is
 * dropped and counted as malformed (and so is every later span over the same tokens); whole, it is a hole,
 * whose kind a later span over the same tokens may make coarser (`proof` over `block` over `steps` over
 * `tactic`). Spans seen are chained by first token through `heads`, a file-sized table (no string or
 * floating-point keys), never reset: a span of an earlier declaration (commands hold disjoint tokens, but
 * the table does not rely on it) is told apart by its declaration's number.
 */
export class HoleSpans {
  /** Per first token: 1 + the latest span seen starting there (0: none). */
  private readonly heads: Int32Array;
  // Per span seen: its declaration's number, its last token, its hole's index in its declaration
  // (-1: malformed), and 1 + the previous span seen with the same first token (0: none).
  private readonly declNumbers: number[] = [];
  private readonly lasts: number[] = [];
  private readonly holeIndex: number[] = [];
  private readonly sameFirst: number[] = [];
  private malformed = 0;
  private declNumber = 0;
  private holes: MinedHole[] = [];
  private decl: Declaration | undefined;
  private declName = "";
  private declStart: MinedHole["declStart"] = { line: 0, character: 0 };
  private variables: string[] = [];

  constructor(
    readonly ts: TokenStream,
    private readonly text: string,
  ) {
    this.heads = new Int32Array(ts.count);
  }

  /** Starts a declaration; returns the array its holes go to. */
  begin(decl: Declaration, declStart: MinedHole["declStart"], variables: string[]): MinedHole[] {
    this.decl = decl;
    this.declName = decl.fullName ?? "";
    this.declStart = declStart;
    this.variables = variables;
    this.holes = [];
    this.malformed = 0;
    this.declNumber++;
    return this.holes;
  }

  add(kind: HoleKind, first: number, last: number, whole: boolean): void {
    const ts = this.ts;
    const start = ts.starts[first] ?? 0;
    const end = ts.ends[last] ?? start;
    if (end <= start) return;
    const head = this.heads[first] ?? 0;
    let seen = head;
    while (seen !== 0 && (this.lasts[seen - 1] !== last || this.declNumbers[seen - 1] !== this.declNumber))
      seen = this.sameFirst[seen - 1]!;
    if (seen !== 0) {
      const index = this.holeIndex[seen - 1]!;
      if (index < 0) return;
      const prev = this.holes[index]!;
      if (PRIORITY[kind] < PRIORITY[prev.kind]) prev.kind = kind;
      return;
    }
    this.declNumbers.push(this.declNumber);
    this.lasts.push(last);
    this.sameFirst.push(head);
    this.heads[first] = this.lasts.length;
    // Only whole tactic sequences become holes; broken source (unterminated strings, stray brackets) does not.
    if (!whole) {
      this.malformed++;
      this.holeIndex.push(-1);
      return;
    }
    this.holeIndex.push(this.holes.length);
    this.holes.push(this.hole(kind, first, last, start, end));
  }

  /** Ends the declaration; returns how many of its spans were malformed. */
  end(): number {
    return this.malformed;
  }

  private hole(kind: HoleKind, first: number, last: number, start: number, end: number): MinedHole {
    const { ts, text } = this;
    const decl = this.decl!;
    const declPrefix = text.slice(decl.start, start);
    const declSuffix = text.slice(end, decl.end);
    return {
      kind,
      decl: this.declName,
      declKind: decl.keyword,
      start,
      end,
      range: { start: positionOf(ts, first), end: endPositionOf(ts, text, last) },
      indent: ts.cols[first] ?? 0,
      middle: text.slice(start, end),
      declPrefix,
      declSuffix,
      declFrom: start - declPrefix.length,
      declTo: end + declSuffix.length,
      firstToken: first,
      lastToken: last,
      statement: decl.statement,
      declStart: this.declStart,
      variables: this.variables,
    };
  }
}

/** The LSP position where token i starts, read off the token stream (no line search). */
export function positionOf(ts: TokenStream, i: number): MinedHole["declStart"] {
  return { line: ts.lines[i] ?? 0, character: ts.cols[i] ?? 0 };
}

function hasGuillemet(text: string, start: number, end: number): boolean {
  for (let k = start; k < end; k++) if (text.charCodeAt(k) === 0xab) return true;
  return false;
}

/** The LSP position where token i ends; a token spanning lines (a string) is measured from its last newline. */
function endPositionOf(ts: TokenStream, text: string, i: number): MinedHole["declStart"] {
  const start = ts.starts[i] ?? 0;
  const end = ts.ends[i] ?? start;
  const kind = ts.kinds[i];
  // Only strings, chars, comments and «names» can span lines.
  const singleLine =
    kind === TokenKind.Symbol ||
    kind === TokenKind.Number ||
    (kind === TokenKind.Ident && !hasGuillemet(text, start, end));
  if (singleLine) return { line: ts.lines[i] ?? 0, character: (ts.cols[i] ?? 0) + (end - start) };
  const newline = text.lastIndexOf("\n", end - 1);
  if (newline < start) return { line: ts.lines[i] ?? 0, character: (ts.cols[i] ?? 0) + (end - start) };
  let line = ts.lines[i] ?? 0;
  for (let k = text.indexOf("\n", start); k !== -1 && k < end; k = text.indexOf("\n", k + 1)) line++;
  return { line, character: end - newline - 1 };
}
