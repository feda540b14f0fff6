/**
 * The hole "Fill Hole with Model" fills, from the editor's selection: a `sorry` at (or on the line of) the cursor,
 * a selected tactic block, or — with the cursor elsewhere in a tactic proof — the proof from the cursor's line to
 * its end. With it come the prompt parts the trainer would build for that hole (the declaration's text around it,
 * its statement, the hole's column). Pure over the document's text: no `vscode` here.
 */
import type { Range } from "vscode-languageserver-protocol";
import type { HoleKind } from "../holes/mine";
import { parseFile, type Declaration, type ParsedFile } from "../lean/commands";
import { scopesInEffect } from "../dataset/context";
import { variablesInScope } from "../holes/mine";
import { promptHeader } from "../models/promptContext";
import { tokenText } from "../lean/tokens";
import type { PromptParts } from "../models/backend";
import { LineIndex } from "../text/positions";

export type HoleMode = "sorry" | "selection" | "rest-of-proof";

export interface EditorHole {
  mode: HoleMode;
  range: Range;
  /** Offsets of the hole in the text. */
  start: number;
  end: number;
  /** The text the hole holds now (`sorry`, the selected tactics, the rest of the proof; "" on a blank line). */
  original: string;
  /** The declaration's name (or keyword, when anonymous), for messages. */
  declaration: string;
  /** Where the hole's declaration ends: the text Lean checks for this hole ends there. */
  declarationEnd: number;
  parts: PromptParts;
}

export type HoleAtResult = { kind: "ok"; hole: EditorHole } | { kind: "none"; message: string };

const NOT_IN_PROOF =
  "Put the cursor on a `sorry`, select tactics, or place the cursor inside a tactic proof (after `by`).";

function declarationAt(decls: readonly Declaration[], offset: number): Declaration | undefined {
  return decls.find((d) => d.start <= offset && offset <= d.end);
}

function isSpace(text: string, k: number): boolean {
  return text[k] === " " || text[k] === "\t" || text[k] === "\n" || text[k] === "\r";
}

function kindOf(text: string, start: number, end: number, decl: Declaration): HoleKind {
  const bodyStart = decl.byStart! + 2;
  let first = bodyStart;
  while (first < decl.byEnd! && isSpace(text, first)) first++;
  if (start <= first && end >= decl.byEnd!) return "proof";
  return text.slice(start, end).includes("\n") ? "steps" : "tactic";
}

/** The hole for the editor's selection (an empty one is the cursor), or why there is none. */
export function holeAt(text: string, selection: Range): HoleAtResult {
  const index = new LineIndex(text);
  const parsed = parseFile(text);
  const decls = parsed.commands.flatMap((c) => (c.declaration ? [c.declaration] : []));
  let start = index.offsetAt(selection.start);
  let end = index.offsetAt(selection.end);
  const decl = declarationAt(decls, start);
  if (!decl) return { kind: "none", message: `The cursor is not inside a declaration. ${NOT_IN_PROOF}` };
  const name = decl.name ?? decl.keyword;
  // A tactic proof may be followed by a `where` clause; the hole is in the proof (checkDocument.ts agrees).
  if (
    (decl.bodyKind !== "tactic" && decl.bodyKind !== "where") ||
    decl.byStart === undefined ||
    decl.byEnd === undefined
  )
    return { kind: "none", message: `'${name}' has no tactic proof. ${NOT_IN_PROOF}` };
  const bodyStart = decl.byStart + 2;
  let mode: HoleMode;
  if (end > start) {
    // A selection: its text without the blanks around it.
    while (start < end && isSpace(text, start)) start++;
    while (end > start && isSpace(text, end - 1)) end--;
    mode = "selection";
  } else {
    const sorry = sorryNear(parsed.tokens, index, start, bodyStart, decl.byEnd);
    if (sorry) {
      [start, end] = sorry;
      mode = "sorry";
    } else {
      const line = index.positionAt(start).line;
      const lineStart = index.lineStart(line);
      let first = Math.max(lineStart, bodyStart);
      while (first < text.length && (text[first] === " " || text[first] === "\t")) first++;
      const blank = text[first] === "\n" || first >= text.length;
      // On a blank line the new tactics start at the cursor (or the line above's column); else at the line's first.
      start = blank ? Math.max(start, lineStart + indentBefore(text, index, line)) : first;
      end = Math.max(start, decl.byEnd);
      mode = "rest-of-proof";
    }
  }
  if (start < bodyStart || end > decl.byEnd)
    return {
      kind: "none",
      message: `The selection is not inside the tactic proof of '${name}'. ${NOT_IN_PROOF}`,
    };
  const range = index.rangeAt(start, end);
  return {
    kind: "ok",
    hole: {
      mode,
      range,
      start,
      end,
      original: text.slice(start, end),
      declaration: name,
      declarationEnd: decl.end,
      parts: {
        prefix: text.slice(decl.start, start),
        suffix: text.slice(end, decl.end),
        kind: kindOf(text, start, end, decl),
        indent: range.start.character,
        statement: decl.statement,
        header: headerAt(parsed, decl),
      },
    },
  };
}

/** The file's header at a declaration, as training prompts carry it: imports, scope commands, variables. */
function headerAt(parsed: ParsedFile, decl: Declaration): string {
  const command = parsed.commands.findIndex((c) => c.declaration === decl);
  return promptHeader(
    parsed.imports,
    scopesInEffect(parsed)[command] ?? [],
    variablesInScope(parsed)[command] ?? [],
  );
}

/** The column of the nearest non-blank line above (plus 2 after a line ending in `by`). */
function indentBefore(text: string, index: LineIndex, line: number): number {
  for (let l = line - 1; l >= 0; l--) {
    const from = index.lineStart(l);
    const to = index.lineStart(l + 1) - 1;
    const content = text.slice(from, to);
    if (!content.trim()) continue;
    const column = content.length - content.trimStart().length;
    return /\bby\s*$/.test(content) ? column + 2 : column;
  }
  return 2;
}

/** A `sorry` token under the cursor, else the first on the cursor's line, within the proof. */
function sorryNear(
  tokens: ReturnType<typeof parseFile>["tokens"],
  index: LineIndex,
  offset: number,
  from: number,
  to: number,
): [number, number] | undefined {
  const line = index.positionAt(offset).line;
  let onLine: [number, number] | undefined;
  for (let i = 0; i < tokens.starts.length; i++) {
    const s = tokens.starts[i]!;
    const e = tokens.ends[i]!;
    if (s < from || e > to || tokenText(tokens, i) !== "sorry") continue;
    if (s <= offset && offset <= e) return [s, e];
    if (!onLine && index.positionAt(s).line === line) onLine = [s, e];
  }
  return onLine;
}

/** The document's text with the hole replaced by `candidate` (the diff preview's right side). */
export function withCandidate(
  text: string,
  hole: Pick<EditorHole, "start" | "end">,
  candidate: string,
): string {
  return text.slice(0, hole.start) + candidate + text.slice(hole.end);
}
