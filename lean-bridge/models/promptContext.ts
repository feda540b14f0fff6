/**
 * Fitting a hole's prefix to the prompt budget, as the trainer does (trainer/fim_rlvr/tasks/prompt_context.py, whose
 * docstring gives the priorities): the statement always, then the goal comment whole or not at all, then the
 * preamble (imports first, up to a quarter of the budget), then the declaration's text nearest the hole, then
 * earlier lemmas, most recent first. What is kept stays in file order; the result is never longer than the
 * budget. A prompt's prefix starts with the file's header (`promptHeader`).
 */
import { pyIsSpace, pyRstrip, pySplitlines, pyStrip } from "../text/pyText";

/** Tokens in a text (the model's tokenizer, no special tokens added). */
export type Count = (text: string) => number;
/** Each token's [start, end) in a text. */
export type Offsets = (text: string) => [number, number][];

// Python's `\b` after a keyword: the next character is not a word character (Unicode-aware, as in Python).
const WORD_END = "(?![\\p{L}\\p{N}_])";
const PREAMBLE = new RegExp(
  `^(import|open|namespace|section|end|variable|universe|universes|set_option|noncomputable\\s+section|export)${WORD_END}`,
  "u",
);
const DECLARATION = new RegExp(
  "^(@\\[[^\\]]*\\]\\s*)?((private|protected|noncomputable|partial|unsafe|nonrec)\\s+)*" +
    `(theorem|lemma|def|example|instance|abbrev|structure|inductive|class|opaque|axiom)${WORD_END}`,
  "u",
);
const CHUNK_START = /^(@\[|\/-|--)/;

/** A prefix taken apart: `head` items before the declaration, then the statement, then the body. */
export interface PrefixParts {
  /** [isPreamble, text] in file order; each text ends with its line break. Non-preamble items are earlier chunks. */
  head: [boolean, string][];
  /** The hole's declaration from its first line through the line that holds its `:=`. */
  statement: string;
  /** The declaration's text after the statement, up to the hole. */
  body: string;
}

function lineStart(text: string, at: number): number {
  return at <= 0 ? 0 : text.lastIndexOf("\n", at - 1) + 1;
}

function declarationStart(prefix: string, statement: string | undefined): number {
  if (statement) {
    const at = prefix.lastIndexOf(pyStrip(statement));
    if (at >= 0) return lineStart(prefix, at);
  }
  let start = 0;
  let offset = 0;
  for (const line of pySplitlines(prefix, true)) {
    if (DECLARATION.test(line)) start = offset;
    offset += line.length;
  }
  return start;
}

function statementEnd(declaration: string, statement: string | undefined): number {
  let searchFrom = 0;
  const stripped = statement ? pyStrip(statement) : "";
  if (statement && declaration.includes(stripped))
    searchFrom = declaration.indexOf(stripped) + stripped.length;
  const assign = declaration.indexOf(":=", searchFrom);
  const anchor = assign >= 0 ? assign : searchFrom;
  const newline = declaration.indexOf("\n", anchor);
  return newline < 0 ? declaration.length : newline + 1;
}

function attaches(line: string): boolean {
  const text = pyStrip(line);
  return text.startsWith("@[") || (text.startsWith("open ") && text.endsWith(" in")) || text.endsWith("-/");
}

function headItems(head: string): [boolean, string][] {
  const items: [boolean, string][] = [];
  const chunk: string[] = [];
  let previousBlank = true;
  const close = (): void => {
    if (chunk.length > 0) {
      items.push([false, chunk.join("")]);
      chunk.length = 0;
    }
  };
  for (const line of pySplitlines(head, true)) {
    const stripped = line.replace(/\n+$/, "");
    if (PREAMBLE.test(stripped) && !pyRstrip(stripped).endsWith(" in")) {
      close();
      items.push([true, line]);
      previousBlank = false;
      continue;
    }
    const atColumn0 = stripped.length > 0 && !pyIsSpace(stripped[0]!);
    const starts = atColumn0 && (previousBlank || DECLARATION.test(stripped) || CHUNK_START.test(stripped));
    // An attribute, a doc comment or `open X in` directly above a declaration stays with it.
    if (starts && !(chunk.length > 0 && DECLARATION.test(stripped) && attaches(chunk[chunk.length - 1]!)))
      close();
    chunk.push(line);
    previousBlank = !pyStrip(stripped);
  }
  close();
  return items;
}

/** Takes a prefix apart into its head items, the statement and the body. */
export function splitPrefix(prefix: string, statement?: string): PrefixParts {
  const start = declarationStart(prefix, statement);
  const declaration = prefix.slice(start);
  const end = statementEnd(declaration, statement);
  return {
    head: headItems(prefix.slice(0, start)),
    statement: declaration.slice(0, end),
    body: declaration.slice(end),
  };
}

function tailLines(text: string, count: Count, budget: number): string {
  let kept = "";
  for (const line of pySplitlines(text, true).reverse()) {
    const candidate = line + kept;
    if (count(candidate) > budget) break;
    kept = candidate;
  }
  return kept;
}

/** The last `keep` tokens of `text`, cut at a token boundary. */
export function cutLeft(text: string, offsets: Offsets, keep: number): string {
  const spans = offsets(text);
  if (spans.length <= keep) return text;
  return keep > 0 ? text.slice(spans[spans.length - keep]![0]) : "";
}

/**
 * The file's header for a prompt: `import` lines, the scope commands, the `variable`s, then a blank line ("" when
 * there are none); prompt_context.py `prompt_header`.
 */
export function promptHeader(
  imports: readonly string[],
  scope: readonly string[],
  variables: readonly string[],
): string {
  const lines = [...imports.map((m) => `import ${m}`), ...scope, ...variables];
  return lines.length ? `${lines.join("\n")}\n\n` : "";
}

/** `prefix` with `goalComment` (whole lines) inserted just above the hole's line, its last line. */
export function withGoal(prefix: string, goalComment: string): string {
  if (!goalComment) return prefix;
  const at = prefix.lastIndexOf("\n");
  return at >= 0
    ? `${prefix.slice(0, at + 1)}${goalComment}${prefix.slice(at + 1)}`
    : `${goalComment}${prefix}`;
}

/** `prefix`, with `goalComment` above the hole's line, within `budget` tokens, kept by the module's priorities. */
export function fitPrefix(
  prefix: string,
  statement: string | undefined,
  count: Count,
  offsets: Offsets,
  budget: number,
  goalComment = "",
): string {
  const whole = withGoal(prefix, goalComment);
  if (count(whole) <= budget) return whole;
  if (goalComment) {
    // The goal after the statement: whole, with room for the statement and the hole's line, or not at all.
    const goalTokens = count(goalComment);
    const needed =
      count(splitPrefix(prefix, statement).statement) + count(prefix.slice(prefix.lastIndexOf("\n") + 1));
    let room = budget - goalTokens;
    while (room >= needed) {
      const fitted = withGoal(fitWithout(prefix, statement, count, offsets, room), goalComment);
      const over = count(fitted) - budget;
      if (over <= 0) return fitted;
      room -= over; // pieces counted apart can tokenise longer together
    }
  }
  return fitWithout(prefix, statement, count, offsets, budget);
}

/** `prefix` within `budget` tokens: the statement, the preamble, the declaration nearest the hole, earlier lemmas. */
function fitWithout(
  prefix: string,
  statement: string | undefined,
  count: Count,
  offsets: Offsets,
  budget: number,
): string {
  if (count(prefix) <= budget) return prefix;
  const parts = splitPrefix(prefix, statement);
  const statementTokens = count(parts.statement);
  if (statementTokens >= budget) return cutLeft(parts.statement + parts.body, offsets, budget);
  let left = budget - statementTokens;
  const keep = new Set<number>();
  // The preamble takes up to a quarter of the budget, never the room of the hole's own line.
  const holeLine = parts.body.slice(parts.body.lastIndexOf("\n") + 1);
  let preambleBudget = Math.max(0, Math.min(left - count(holeLine), Math.floor(budget / 4)));
  for (const [index, [isPreamble, text]] of parts.head.entries()) {
    // Imports first, in file order; the first preamble line that does not fit ends the preamble.
    if (!isPreamble) continue;
    const tokens = count(text);
    if (tokens > preambleBudget) break;
    keep.add(index);
    preambleBudget -= tokens;
    left -= tokens;
  }
  let body = count(parts.body) <= left ? parts.body : tailLines(parts.body, count, left);
  if (!body && parts.body) body = cutLeft(parts.body, offsets, left); // not even the hole's own line fits whole
  left -= count(body);
  const earlier = [...parts.head.keys()].filter((i) => !parts.head[i]![0]);
  if (body === parts.body) {
    // Earlier lemmas only once the whole declaration is in.
    for (const index of [...earlier].reverse()) {
      const tokens = count(parts.head[index]![1]);
      if (tokens <= left) {
        keep.add(index);
        left -= tokens;
      }
    }
  }
  let fitted = assemble(parts, keep, body);
  const keptEarlier = (): number[] => earlier.filter((i) => keep.has(i));
  while (count(fitted) > budget && keptEarlier().length > 0) {
    // Pieces counted apart can tokenise longer together.
    keep.delete(Math.min(...keptEarlier()));
    fitted = assemble(parts, keep, body);
  }
  if (count(fitted) > budget) fitted = cutLeft(fitted, offsets, budget);
  return fitted;
}

function assemble(parts: PrefixParts, keep: ReadonlySet<number>, body: string): string {
  return (
    parts.head
      .filter((_, index) => keep.has(index))
      .map(([, text]) => text)
      .join("") +
    parts.statement +
    body
  );
}
