/**
 * Where the positions in a Kimina Lean Server's answer point, and which snippets its REPL would read as other
 * text than Lean reads.
 *
 * Kimina splits each snippet's imports off (they pick the REPL) and sends its REPL only the rest, so the REPL's
 * positions count from that rest. From project-numina/kimina-lean-server's history:
 * - 1.x (`/verify` only; utils/proof_utils.py `split_proof_header`, server/server.py, before the 2025-07-24
 *   refactor 1777d73): the snippet is `strip()`ped, split with `splitlines()`, its leading lines that start with
 *   `import` are the header, and the REPL gets the rest, re-joined with "\n" and `strip()`ped; a snippet without
 *   imports, or sent with `disable_cache`, goes to a fresh REPL whole, as it is. Positions are never shifted back.
 * - 2.0 (`/api/check`, `/verify` kept; server/split.py `split_snippet`, server/routers/check.py): the header is
 *   the leading lines that are blank or start with `import ` (after `strip()`), the REPL gets the rest of
 *   `code.splitlines()` re-joined with "\n", for fresh REPLs too. Until commit e2cdc1f (PR #56, 2025-10-24,
 *   "Fix Lean snippet diagnostics line offsets") positions stayed relative to that rest; since then
 *   `_apply_header_offset` adds the header's line count back. The server's version string (server/__version__.py,
 *   "2.0.0") is the same on both sides of that commit, so the client asks a probe instead (client.ts).
 *
 * Either way the REPL's text is made of Python's `splitlines()` pieces, and Python breaks lines at characters Lean
 * does not (a lone CR, \v, \f, \x1c–\x1e, \x85, U+2028, U+2029): Lean reads `-- note<U+2028>exact cheat` as one
 * comment, Kimina's REPL reads a comment and then code. Such snippets are never sent (`kiminaLineBreak`).
 */
import { pyIsSpace, pySplitlines } from "../text/pyText";
import type { CheckDocument } from "../verify/checkDocument";
import type { VerdictOutcome } from "../verify/verdict";
import type { KiminaMessage, KiminaPos } from "./protocol";

/** What the REPL's line 1 is: the snippet's first line, or the first line after the imports Kimina split off. */
export type PositionBase = "snippet" | "body";

/** Servers that answer `/api/check` (2.0 on) and those that have only `/verify` (1.x). */
export type KiminaFamily = "2.x" | "1.x";

// eslint-disable-next-line no-control-regex
const PYTHON_ONLY_BREAK = /\r(?!\n)|[\v\f\x1c\x1d\x1e\x85\u2028\u2029]/;

/** Where Python's `splitlines()` breaks `code` where Lean does not (Lean breaks at "\n" only), or -1. */
export function kiminaLineBreak(code: string): number {
  return code.search(PYTHON_ONLY_BREAK);
}

/** The character `kiminaLineBreak` found, named for a message. */
export function describeBreak(code: string, at: number): string {
  const unit = code.charCodeAt(at);
  return `U+${unit.toString(16).toUpperCase().padStart(4, "0")}`;
}

/**
 * The verdict for a check document Kimina would read as other lines than Lean: `rejected` when the break is the
 * candidate's (code hidden from our lexer in a comment or string, run by Kimina's REPL), `environment` when it
 * is in the file's own text (no candidate of that hole can be checked faithfully); undefined when there is none.
 */
export function kiminaRereads(doc: CheckDocument): VerdictOutcome | undefined {
  const at = kiminaLineBreak(doc.text);
  if (at < 0) return undefined;
  const what = describeBreak(doc.text, at);
  const why = `the Kimina Lean Server re-splits a snippet's lines with Python's str.splitlines, which breaks at ${what} where Lean does not, so its REPL would check other text than Lean reads`;
  // A break inside the candidate's span is the candidate's doing.
  const candidates = kiminaLineBreak(doc.text.slice(doc.candidateStart, doc.candidateEnd));
  if (candidates >= 0)
    return {
      kind: "rejected",
      rule: "kimina-line-break",
      reason: `the candidate holds ${what}: ${why}`,
      diagnostics: [],
    };
  return {
    kind: "environment",
    reason: `the file holds ${what} outside the hole: ${why}`,
    action: `Replace the ${what} in the file with a newline or a space, or verify with Lean (drop --verifier kimina:URL)`,
    diagnostics: [],
  };
}

/** The offsets in `code` where each of Python's `splitlines()` pieces starts. */
function pieceStarts(code: string): number[] {
  const starts: number[] = [];
  let at = 0;
  for (const piece of pySplitlines(code, true)) {
    starts.push(at);
    at += piece.length;
  }
  return starts;
}

/** 2.0's header: the leading pieces that are blank or start with `import ` once stripped (split.py). */
function headerPieces2(code: string): number {
  const lines = pySplitlines(code);
  let i = 0;
  while (i < lines.length && (stripPy(lines[i]!) === "" || stripPy(lines[i]!).startsWith("import "))) i++;
  return i;
}

/** Python's `str.strip()`. */
function stripPy(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && pyIsSpace(text[start]!)) start++;
  while (end > start && pyIsSpace(text[end - 1]!)) end--;
  return text.slice(start, end);
}

/**
 * Where each line of the text the REPL checks starts in `code`, or "whole" when the REPL gets `code` as it is.
 * 1.x with imports: the stripped snippet's leading `import` pieces are the header; the REPL's first line starts
 * at the first non-space character after them, its later lines at the later pieces.
 */
function replLineStarts(code: string, family: KiminaFamily, fresh: boolean): number[] | "whole" {
  if (family === "2.x") return pieceStarts(code).slice(headerPieces2(code));
  if (fresh) return "whole";
  let lead = 0;
  while (lead < code.length && pyIsSpace(code[lead]!)) lead++;
  const stripped = stripPy(code);
  const starts = pieceStarts(stripped).map((s) => s + lead);
  const pieces = pySplitlines(stripped);
  let header = 0;
  while (header < pieces.length && pieces[header]!.startsWith("import")) header++;
  if (header === 0) return "whole";
  let bodyStart = starts[header] ?? code.length;
  while (bodyStart < lead + stripped.length && pyIsSpace(code[bodyStart]!)) bodyStart++;
  return [bodyStart, ...starts.filter((s) => s > bodyStart)];
}

/** The offset `codePoints` code points after `from` in `code`. */
function advance(code: string, from: number, codePoints: number): number {
  let at = from;
  for (let n = 0; n < codePoints && at < code.length; n++) at += code.codePointAt(at)! > 0xffff ? 2 : 1;
  return at;
}

/** An offset in `code` as Lean's position: 1-based line ("\n" only), 0-based column in code points. */
function leanPosition(code: string, offset: number): KiminaPos {
  const lineStart = code.lastIndexOf("\n", offset - 1) + 1;
  const line = code.slice(0, lineStart).split("\n").length;
  return { line, column: [...code.slice(lineStart, offset)].length };
}

/**
 * The messages of a snippet's answer with their positions in the snippet as sent (Lean's own lines), whatever
 * the server counted them from: `base` is what the server's REPL lines count from (the client's probe), for the
 * family and REPL kind (`fresh`) the snippet went to.
 */
export function snippetPositions(
  messages: readonly KiminaMessage[],
  code: string,
  family: KiminaFamily,
  fresh: boolean,
  base: PositionBase,
): KiminaMessage[] {
  const starts = replLineStarts(code, family, fresh);
  if (starts === "whole") return [...messages];
  // 2.0 since PR #56 numbers the REPL's lines after the header's pieces: the pieces of the whole snippet.
  const lines = family === "2.x" && base === "snippet" ? pieceStarts(code) : starts;
  const map = (pos: KiminaPos): KiminaPos => {
    const index = pos.line - 1;
    if (index < 0) return pos;
    if (index >= lines.length) {
      // Past the last line (an error at the end of input): as far past the snippet's end.
      const end = leanPosition(code, code.length);
      return { line: end.line + (index - lines.length) + 1, column: pos.column };
    }
    return leanPosition(code, advance(code, lines[index]!, Math.max(0, pos.column)));
  };
  return messages.map((m) => ({
    ...m,
    pos: map(m.pos),
    ...(m.endPos ? { endPos: map(m.endPos) } : {}),
  }));
}
