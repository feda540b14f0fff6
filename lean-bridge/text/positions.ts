/**
 * LSP positions over JavaScript strings. JS strings are UTF-16, and Lean counts LSP characters in UTF-16
 * code units, so a string index is exactly an LSP offset: no re-encoding is needed, only line bookkeeping.
 */
import type { Position, Range } from "vscode-languageserver-protocol";

export class LineIndex {
  /** Offsets at which each line starts; lineStarts[0] = 0. */
  private readonly lineStarts: number[];

  constructor(readonly text: string) {
    const starts = [0];
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) starts.push(i + 1);
    this.lineStarts = starts;
  }

  get lineCount(): number {
    return this.lineStarts.length;
  }

  lineStart(line: number): number {
    return this.lineStarts[Math.max(0, Math.min(line, this.lineStarts.length - 1))] ?? 0;
  }

  /** The offset of a position, clamped into the text like LSP servers do for out-of-range positions. */
  offsetAt(pos: Position): number {
    if (pos.line >= this.lineStarts.length) return this.text.length;
    const start = this.lineStart(pos.line);
    const next = pos.line + 1 < this.lineStarts.length ? this.lineStart(pos.line + 1) - 1 : this.text.length;
    return Math.min(start + Math.max(0, pos.character), next);
  }

  positionAt(offset: number): Position {
    const o = Math.max(0, Math.min(offset, this.text.length));
    let lo = 0;
    let hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.lineStarts[mid] ?? 0) <= o) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo, character: o - (this.lineStarts[lo] ?? 0) };
  }

  rangeAt(start: number, end: number): Range {
    return { start: this.positionAt(start), end: this.positionAt(end) };
  }

  /** Whether a position names a real place in the text (used to report bad --hole arguments). */
  isValid(pos: Position): boolean {
    if (pos.line < 0 || pos.character < 0 || pos.line >= this.lineStarts.length) return false;
    const start = this.lineStart(pos.line);
    const lineEnd =
      pos.line + 1 < this.lineStarts.length ? this.lineStart(pos.line + 1) - 1 : this.text.length;
    return start + pos.character <= lineEnd;
  }
}

/**
 * The column of an offset as Lean counts it: code points, not UTF-16 units (an astral character such as
 * `𝔸` is one column to Lean's layout rule and two LSP characters).
 */
export function leanColumnOf(text: string, offset: number): number {
  const lineStart = text.lastIndexOf("\n", offset - 1) + 1;
  let column = 0;
  for (let i = lineStart; i < offset; i++) {
    const c = text.charCodeAt(i);
    // A high surrogate followed by a low one is one code point.
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < offset) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
    }
    column++;
  }
  return column;
}

/** Lean reads CRLF as LF; so do we, before any position is computed. */
export function normalizeLineEndings(text: string): string {
  return text.includes("\r") ? text.replace(/\r\n?/g, "\n") : text;
}
