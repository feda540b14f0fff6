/**
 * Moving LSP ranges through text edits, so that a hole annotated from a training sample stays on the same
 * text while the user types. Pure: VS Code's change events are passed in as plain `{ range, text }` records.
 * Like a decoration that never grows when typing at its edges: text typed at a hole's start or end stays
 * outside it, and a replacement that overlaps the hole becomes part of it.
 */
import type { Position, Range } from "../../lean-bridge/protocol/trainer";

/** One replacement, its range in the text before the edit (VS Code and LSP incremental changes). */
export interface TextChange {
  range: Range;
  text: string;
}

function compare(a: Position, b: Position): number {
  return a.line - b.line || a.character - b.character;
}

/** Where the end of `text` lands when it is inserted at `at`. */
function endOfInsertion(at: Position, text: string): Position {
  const lines = text.split(/\r\n|\r|\n/);
  if (lines.length === 1) return { line: at.line, character: at.character + text.length };
  return { line: at.line + lines.length - 1, character: lines[lines.length - 1]!.length };
}

/** A position at or after the change's end, moved with the text that follows the change. */
function shiftAfter(p: Position, end: Position, insertedEnd: Position): Position {
  if (p.line === end.line)
    return { line: insertedEnd.line, character: insertedEnd.character + (p.character - end.character) };
  return { line: p.line + (insertedEnd.line - end.line), character: p.character };
}

/** Maps one end of a range through a change (`edge` says which end, for positions the change touches). */
export function shiftPosition(p: Position, change: TextChange, edge: "start" | "end"): Position {
  const { start: cs, end: ce } = change.range;
  const insertedEnd = endOfInsertion(cs, change.text);
  if (compare(p, cs) < 0) return p;
  if (compare(p, ce) > 0) return shiftAfter(p, ce, insertedEnd);
  if (compare(cs, ce) === 0) return edge === "start" ? shiftAfter(p, ce, insertedEnd) : p; // insertion at p
  if (compare(p, cs) === 0) return p;
  if (compare(p, ce) === 0) return insertedEnd;
  return edge === "start" ? cs : insertedEnd; // inside the replaced text
}

/** Maps a range through one change; a range whose text was deleted collapses to a point. */
export function shiftRange(range: Range, change: TextChange): Range {
  const start = shiftPosition(range.start, change, "start");
  const end = shiftPosition(range.end, change, "end");
  return compare(end, start) < 0 ? { start, end: start } : { start, end };
}

/** Applies changes in order, each against the text left by the previous one (VS Code's contract). */
export function shiftRangeThrough(range: Range, changes: readonly TextChange[]): Range {
  let current = range;
  for (const change of changes) current = shiftRange(current, change);
  return current;
}
