/**
 * How a candidate's text is placed in a hole: re-indented to the hole's column, with what its trailing comments
 * would do in the file. The check document (checkDocument.ts) and the tactic policy place candidates the same
 * way, so what is checked is what the file will hold.
 */
import { lex } from "../lean/lexer";
import { TokenKind, isCommentKind } from "../lean/tokens";

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

/**
 * The candidate without the comments it ends with. Plain comments mean nothing to a proof, and if our lexer
 * took for a comment text that Lean reads as code, that text never reaches Lean; anything hidden earlier in
 * the candidate is caught by Lean's range of the declaration (leanView.ts), which then ends before our end.
 * A trailing doc comment (`/-- … -/`, `/-! … -/`) is different: Lean reads it as a token, which in the file
 * would end the tactic block and start the next command, so the file would not hold what was checked. Such
 * a candidate is refused (undefined here).
 */
export function withoutTrailingComments(placed: string): string | undefined {
  const ts = lex(placed);
  let last = ts.count - 1;
  while (last >= 0 && isCommentKind(ts.kinds[last] ?? 0)) {
    if (ts.kinds[last] === TokenKind.DocComment) return undefined;
    last--;
  }
  return last === ts.count - 1 ? placed : placed.slice(0, last >= 0 ? (ts.ends[last] ?? 0) : 0);
}

/**
 * The code a candidate's last line comment would swallow in the file: a `--` comment runs to the end of its
 * line, so where the hole ends mid-line (`subst h` in `subst h; rfl`) the rest of that line (`; rfl`, a closing
 * bracket) would be part of the comment. The check document drops trailing comments, so it would read that
 * code and the file would not: the candidate is judged as it will stand in the file, or not at all. Undefined
 * when the candidate does not end with a line comment or only blanks and comments follow the hole on its line.
 */
export function swallowedByLineComment(placed: string, source: string, holeEnd: number): string | undefined {
  // Placed text has no trailing blanks, so a line comment that is its last token runs up to the suffix.
  const ts = lex(placed);
  if (ts.count === 0 || ts.kinds[ts.count - 1] !== TokenKind.LineComment) return undefined;
  const lineEnd = source.indexOf("\n", holeEnd);
  const rest = source.slice(holeEnd, lineEnd === -1 ? source.length : lineEnd);
  const tail = lex(rest);
  for (let i = 0; i < tail.count; i++) if (!isCommentKind(tail.kinds[i] ?? 0)) return rest.trim();
  return undefined;
}
