/**
 * What a task carries besides its hole, bounded so that a dataset grows with its workspace and not with
 * tasks × declaration size: the declaration's text around the hole cut to a window (at line boundaries), and
 * the scope the declaration is read in (`namespace`, `section`, `open`, `universe`), which a prompt needs
 * beside the imports, the `variable`s and the statement. The full text stays in files.jsonl, found by offsets.
 */
import type { ParsedFile } from "../lean/commands";
import { firstTokenAt } from "../lean/sameCode";
import { isCommentKind, type TokenStream } from "../lean/tokens";
import { hash53, hash53Units } from "./hash53";
import { unitsOf } from "../text/units";

/**
 * Default `--context-chars`: the prefix window; the suffix gets a quarter of it (what follows matters less).
 * Short on purpose: at Mathlib's density (~15,000 holes per MB) every 256 characters of window add about 4×
 * the workspace to tasks.jsonl (docs/BENCHMARKS.md), and the whole declaration is in its context row anyway.
 */
export const DEFAULT_CONTEXT_CHARS = 96;

/** The suffix's window for a prefix window of `contextChars`. */
export function suffixChars(contextChars: number): number {
  return Math.ceil(contextChars / 4);
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}

/**
 * The last `max` characters (UTF-16 units) of the text before a hole, starting at a line start when the window
 * holds a line break (so a cut never leaves half a line), and never between the two halves of an astral
 * character. The result always ends where the hole begins.
 */
export function boundPrefix(before: string, max: number): string {
  return before.slice(prefixStart(before, 0, before.length, max));
}

/** `boundPrefix(text.slice(from, to), max)` as where it starts in `text` (no string is cut). */
export function prefixStart(text: string, from: number, to: number, max: number): number {
  if (to - from <= max) return from;
  let start = to - max;
  const lineBreak = text.indexOf("\n", start - 1);
  if (lineBreak !== -1 && lineBreak < to) start = lineBreak + 1;
  else if (start < to && isLowSurrogate(text.charCodeAt(start))) start++;
  return start;
}

/** The first `max` characters of the text after a hole, ending before a line break when the window holds one. */
export function boundSuffix(after: string, max: number): string {
  return after.slice(0, suffixEnd(after, 0, after.length, max));
}

/** `boundSuffix(text.slice(from, to), max)` as where it ends in `text`. */
export function suffixEnd(text: string, from: number, to: number, max: number): number {
  if (to - from <= max) return to;
  // The last line break in (from, from + max], looked for there only (`lastIndexOf` would walk back further).
  for (let k = from + max; k > from; k--) if (text.charCodeAt(k) === 10) return k;
  let end = from + max;
  if (max > 0 && isLowSurrogate(text.charCodeAt(end))) end--;
  return end;
}

/** `open … in` before a declaration's keyword: the parser keeps it in the declaration's command. */
const OPEN_IN = /(?:^|\n)[ \t]*(open[ \t][^\n]*?[ \t]in)(?=\s)/g;

/**
 * Per command index: the `namespace`, `section`, `open` and `universe` commands in effect there, in file
 * order, as written (whitespace collapsed). `end` closes the innermost scope with what was opened in it; an
 * `open … in` applies to its own command only. Arrays are shared by the commands of one scope state.
 */
export function scopesInEffect(parsed: ParsedFile): string[][] {
  const ts = parsed.tokens;
  const text = ts.text;
  const frames: string[][] = [[]];
  let current: string[] = [];
  return parsed.commands.map((c) => {
    const k = c.keyword;
    // The command as written from its first word: a doc comment before it is not part of the scope.
    const written = () => {
      let first = c.firstToken;
      while (first < c.lastToken && isCommentKind(ts.kinds[first]!)) first++;
      return text.slice(ts.starts[first], c.end).replace(/\s+/g, " ").trim();
    };
    if (c.declaration) {
      const head = text.slice(c.start, c.declaration.keywordStart);
      if (!head.includes("open")) return current;
      const local = [...head.matchAll(OPEN_IN)].map((m) => m[1]!.replace(/\s+/g, " "));
      return local.length ? [...current, ...local] : current;
    }
    if (k === "namespace" || k === "section") frames.push([written()]);
    else if (k === "end" && frames.length > 1) frames.pop();
    else if (k === "universe" || (k === "open" && !/\sin$/.test(written())))
      frames[frames.length - 1]!.push(written());
    else return current;
    current = frames.flat();
    return current;
  });
}

/**
 * A file's code tokens (comments left out) one space apart, as UTF-16 codes, with where each token starts and
 * ends there: the normalised middle (lean/sameCode.ts) of any run of tokens is one slice of it. Built once per token stream, so
 * that the many nested holes of a proof each hash one slice instead of walking their tokens.
 */
interface CodeTokens {
  codes: Uint16Array;
  /** Per token index: where its codes start and end in `codes` (comments: unused). */
  from: Int32Array;
  to: Int32Array;
}

/**
 * The last token stream's, in arrays reused from stream to stream (the exporter asks about one file at a
 * time; fresh zeroed arrays per file cost page faults and garbage collections). Another stream rebuilds them.
 */
let lastCodeTokens: (CodeTokens & { ts: TokenStream }) | undefined;

/** `old` when it holds `n` entries, else a new array half as large again (so that growing is rare). */
function reused<T extends Uint16Array | Int32Array>(
  old: T | undefined,
  n: number,
  make: new (length: number) => T,
): T {
  return old && old.length >= n ? old : new make(Math.max(n, Math.ceil((old?.length ?? 0) * 1.5)));
}

function codeTokenUnits(ts: TokenStream): CodeTokens {
  if (lastCodeTokens?.ts === ts) return lastCodeTokens;
  const { text, starts, ends, kinds, count } = ts;
  const units = unitsOf(text);
  const old = lastCodeTokens;
  const codes = reused(old?.codes, text.length + count, Uint16Array);
  const from = reused(old?.from, count, Int32Array);
  const to = reused(old?.to, count, Int32Array);
  let at = 0;
  for (let i = 0; i < count; i++) {
    if (isCommentKind(kinds[i]!)) continue;
    if (at > 0) codes[at++] = 32;
    from[i] = at;
    for (let k = starts[i]!, stop = ends[i]!; k < stop; k++) codes[at++] = units[k]!;
    to[i] = at;
  }
  lastCodeTokens = { ts, codes, from, to };
  return lastCodeTokens;
}

/** The index of the last token ending at or before `offset`, or -1 (binary search over the token ends). */
function lastTokenBy(ts: TokenStream, offset: number): number {
  let lo = 0;
  let hi = ts.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (ts.ends[mid]! <= offset) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * `hash53(normalisedMiddle(ts, start, end))`: the tokens from the first starting at or after `start` to the
 * last ending at or before `end` (token ends only grow), hashed as one slice of the file's `CodeTokens`.
 */
export function normalisedMiddleKey(ts: TokenStream, start: number, end: number): number {
  return tokensMiddleKey(ts, firstTokenAt(ts, start), lastTokenBy(ts, end));
}

/**
 * `normalisedMiddleKey` of the tokens `first..last` (a mined hole's `firstToken` and `lastToken`: the export
 * knows them, and two binary searches per hole cost more than hashing its middle).
 */
export function tokensMiddleKey(ts: TokenStream, first: number, last: number): number {
  const { kinds } = ts;
  while (first <= last && isCommentKind(kinds[first]!)) first++;
  while (last >= first && isCommentKind(kinds[last]!)) last--;
  if (first > last) return hash53("");
  const { codes, from, to } = codeTokenUnits(ts);
  return hash53Units(codes, from[first]!, to[last]!);
}
