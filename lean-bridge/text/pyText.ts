/**
 * Python's str methods where they differ from JavaScript's, so the ports of Python code (the trainer's prompts in
 * models/prompts.ts, promptContext.ts, clean.ts; Kimina's snippet splitting in kimina/positions.ts) split, strip
 * and test characters exactly as the Python does.
 */

/** Python's `str.isspace()` set (Unicode White_Space plus the separators \x1c-\x1f). */
const SPACE_CLASS = "\\s\\x1c-\\x1f\\x85";
const STRIP = new RegExp(`^[${SPACE_CLASS}]+|[${SPACE_CLASS}]+$`, "g");
const RSTRIP = new RegExp(`[${SPACE_CLASS}]+$`);
const IS_SPACE = new RegExp(`^[${SPACE_CLASS}]$`);

/** `s.strip()`. */
export function pyStrip(text: string): string {
  return text.replace(STRIP, "");
}

/** `s.rstrip()`. */
export function pyRstrip(text: string): string {
  return text.replace(RSTRIP, "");
}

/** `c.isspace()` for one character. */
export function pyIsSpace(char: string): boolean {
  return IS_SPACE.test(char);
}

/** The line boundaries of `str.splitlines` (the file, group and record separators are Python line breaks). */
// eslint-disable-next-line no-control-regex
const LINE_BREAK = /\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]/g;

/** `s.splitlines(keepends)`. */
export function pySplitlines(text: string, keepends = false): string[] {
  const lines: string[] = [];
  let start = 0;
  for (const match of text.matchAll(LINE_BREAK)) {
    const end = match.index + match[0].length;
    lines.push(text.slice(start, keepends ? end : match.index));
    start = end;
  }
  if (start < text.length) lines.push(text.slice(start));
  return lines;
}
