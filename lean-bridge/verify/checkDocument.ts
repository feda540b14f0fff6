/**
 * Builds the document Lean checks for one candidate: the file up to the end of the hole's declaration
 * (later declarations dropped), with only the hole replaced by the candidate re-indented to the hole's
 * column, followed by `#print axioms` for the declaration. Then re-reads the result to prove that the
 * candidate changed nothing outside the hole: the same statement, the same declaration boundaries.
 */
import type { Range } from "../protocol/lsp";
import { isCommandKeyword, parseFile, type Declaration, type ParsedFile } from "../lean/commands";
import { TokenKind, tokenText } from "../lean/lexer";
import { LineIndex, columnOf } from "../text/positions";

export interface CheckDocument {
  text: string;
  /** The declaration being checked, as it stands in the original file. */
  declaration: Declaration;
  /** Where the declaration starts in `text` (the same offset as in the file). */
  declarationStart: number;
  /** The candidate's span in `text`. */
  candidateStart: number;
  candidateEnd: number;
  /** Columns added to the candidate's lines after the first when it was re-indented. */
  indentShift: number;
  /** The 0-based line of the appended `#print axioms`, or -1 for anonymous declarations. */
  axiomsLine: number;
  /** Everything before the candidate: documents that share it share Lean's snapshots. */
  prefix: string;
}

export type BuildResult =
  | { kind: "ok"; doc: CheckDocument }
  | { kind: "bad-hole"; message: string }
  | { kind: "tampered"; message: string };

export interface HoleLocation {
  start: number;
  end: number;
  declaration: Declaration;
  column: number;
}

/** Resolves an LSP hole range to offsets and its tactic-proof declaration. */
export function locateHole(
  file: ParsedFile,
  index: LineIndex,
  hole: Range,
): { kind: "ok"; hole: HoleLocation } | { kind: "bad-hole"; message: string } {
  const show = (r: Range) => `${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}`;
  for (const pos of [hole.start, hole.end]) {
    if (index.isValid(pos)) continue;
    const where =
      pos.line >= index.lineCount
        ? `the file has ${index.lineCount} lines`
        : `line ${pos.line} is shorter than ${pos.character} UTF-16 units`;
    return {
      kind: "bad-hole",
      message: `the hole ${show(hole)} lies outside the file: ${where} (positions are 0-based, characters in UTF-16)`,
    };
  }
  const start = index.offsetAt(hole.start);
  const end = index.offsetAt(hole.end);
  if (end < start) return { kind: "bad-hole", message: `the hole ${show(hole)} ends before it starts` };
  const declaration = file.commands
    .map((c) => c.declaration)
    .find((d) => d && d.start <= start && end <= d.end);
  if (!declaration)
    return { kind: "bad-hole", message: `the hole ${show(hole)} is not inside a declaration` };
  if (
    declaration.bodyKind !== "tactic" ||
    declaration.byStart === undefined ||
    declaration.byEnd === undefined
  )
    return {
      kind: "bad-hole",
      message: `the hole ${show(hole)} is in '${declaration.name ?? declaration.keyword}', which has no tactic proof`,
    };
  if (start < declaration.byStart + 2 || end > declaration.byEnd)
    return {
      kind: "bad-hole",
      message: `the hole ${show(hole)} is not inside the tactic block of '${declaration.name ?? declaration.keyword}' (after its \`by\`)`,
    };
  return { kind: "ok", hole: { start, end, declaration, column: columnOf(file.tokens.text, start) } };
}

function leadingSpaces(line: string): number {
  let n = 0;
  while (n < line.length && (line[n] === " " || line[n] === "\t")) n++;
  return n;
}

/**
 * Places a candidate at a hole's column. Two layouts are understood: a verbatim middle (first line without
 * indentation, later lines already at or right of the hole's column, as cut from a file), which is kept
 * as is; and a block indented from column 0, which is shifted to the hole's column.
 */
export function reindent(candidate: string, column: number): { text: string; shift: number } {
  const lines = candidate
    .replace(/\r\n?/g, "\n")
    .replace(/^\s*\n/, "")
    .replace(/\s+$/, "")
    .split("\n");
  const first = lines[0] ?? "";
  const rest = lines.slice(1).filter((l) => l.trim() !== "");
  const restMin = rest.length ? Math.min(...rest.map(leadingSpaces)) : 0;
  const firstIndent = leadingSpaces(first);
  if (firstIndent === 0 && rest.length > 0 && restMin >= column && column > 0) {
    return { text: lines.join("\n"), shift: 0 };
  }
  const common = Math.min(firstIndent, rest.length ? restMin : firstIndent);
  const pad = " ".repeat(column);
  const shifted = lines.map((line, k) => {
    const body = line.trim() === "" ? "" : line.slice(common);
    return k === 0 ? body : body === "" ? "" : pad + body;
  });
  return { text: shifted.join("\n"), shift: column - common };
}

export function buildCheckDocument(file: ParsedFile, hole: HoleLocation, candidate: string): BuildResult {
  const source = file.tokens.text;
  const decl = hole.declaration;
  const { text: placed, shift } = reindent(candidate, hole.column);
  const prefix = source.slice(0, hole.start);
  const suffix = source.slice(hole.end, decl.end);
  let text = prefix + placed + suffix + "\n";
  let axiomsLine = -1;
  if (decl.fullName) {
    axiomsLine = new LineIndex(text).lineCount; // The line after the trailing newline's line.
    text += `\n#print axioms ${decl.fullName}\n`;
  }
  const doc: CheckDocument = {
    text,
    declaration: decl,
    declarationStart: decl.start,
    candidateStart: prefix.length,
    candidateEnd: prefix.length + placed.length,
    indentShift: shift,
    axiomsLine,
    prefix,
  };
  const tamper = findTampering(doc, suffix);
  return tamper ? { kind: "tampered", message: tamper } : { kind: "ok", doc };
}

/** Re-reads the check document; the declaration must start, be stated and end exactly as in the file. */
function findTampering(doc: CheckDocument, suffix: string): string | undefined {
  // Everything before the declaration is the file's own text, so only the declaration onwards is read
  // again: the cost of a check does not grow with the number of declarations above it.
  const base = doc.declarationStart;
  const reparsed = parseFile(doc.text.slice(base));
  const candidateStart = doc.candidateStart - base;
  const candidateEnd = doc.candidateEnd - base;
  // Lean starts a new command at a command keyword whatever its column, so none may stand in the candidate.
  const ts = reparsed.tokens;
  for (let i = 0; i < ts.count; i++) {
    const start = ts.starts[i] ?? 0;
    if (start < candidateStart) continue;
    if (start >= candidateEnd) break;
    const word = tokenText(ts, i);
    const hash = word === "#" && ts.kinds[i + 1] === TokenKind.Ident && ts.starts[i + 1] === ts.ends[i];
    if ((ts.kinds[i] === TokenKind.Ident && isCommandKeyword(word)) || hash)
      return `the candidate contains the command \`${hash ? "#" + tokenText(ts, i + 1) : word}\`, which would end the declaration`;
  }
  const decl = reparsed.commands[0]?.declaration;
  if (!decl || reparsed.commands[0]?.start !== 0)
    return "the declaration no longer parses as one declaration";
  if (decl.statement !== doc.declaration.statement) return "the candidate changes the theorem statement";
  if (decl.end !== candidateEnd + suffix.length && !(suffix.trim() === "" && decl.end <= candidateEnd))
    return "the candidate ends the declaration early or continues past it";
  if (decl.bodyKind !== "tactic") return "the candidate turns the tactic proof into something else";
  return undefined;
}
