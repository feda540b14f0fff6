/**
 * Hole mining: finds every declaration with a tactic proof and cuts holes out of it at four granularities,
 * each a contiguous, syntactically whole span:
 *   proof  — the whole tactic proof after `by`;
 *   steps  — a run of 2–4 consecutive top-level steps (never the whole proof);
 *   block  — a nested block (`·` bullet, `case`/`next`/alternative body, a `have … := by` or `calc` step proof);
 *   tactic — one step (multi-line steps stay whole).
 * Term-mode proofs, equation compilers, `where` structure bodies and data-valued definitions (`def`, `abbrev`)
 * are recognised and skipped, with counts (a tactic proof followed by a `where` clause is mined).
 */
import { parseFile, type Declaration, type ParsedFile } from "../lean/commands";
import { lex } from "../lean/lexer";
import { tokenText, type TokenStream } from "../lean/tokens";
import type { Range } from "vscode-languageserver-protocol";
import { SEQUENCE_HEADS } from "./layout";
import { HoleSpans, addBlockSpans, allWhole, positionOf } from "./holeSpans";
import { readBlock, type TacticBlock } from "./tactics";

export type HoleKind = "proof" | "steps" | "block" | "tactic";
export const HOLE_KINDS: readonly HoleKind[] = ["proof", "steps", "block", "tactic"];

export interface MinedHole {
  kind: HoleKind;
  /** Fully qualified declaration name ("" for `example` and anonymous instances). */
  decl: string;
  declKind: string;
  /** Offsets into the (LF-normalised) file text. */
  start: number;
  end: number;
  range: Range;
  /** The hole's column (UTF-16): where the middle's first line starts and its steps align. */
  indent: number;
  middle: string;
  /** The declaration's text before and after the hole. */
  declPrefix: string;
  declSuffix: string;
  /**
   * Offsets of the declaration's start and end: `start - declPrefix.length` and `end + declSuffix.length`
   * (numbers, for a caller that needs where the declaration lies, not its text).
   */
  declFrom: number;
  declTo: number;
  /** The hole's first and last tokens: indices into the token stream of the file it was mined from. */
  firstToken: number;
  lastToken: number;
  statement: string;
  /** Where the declaration starts (LSP position). */
  declStart: Range["start"];
  /** `variable` commands in scope at the declaration. */
  variables: string[];
}

export type SkipReason = "term-proof" | "equations" | "where-clause" | "no-body" | "data-valued-definition";

/**
 * Declarations whose keyword says their value is data (`def answer : Nat := by exact 0`): any value of the
 * type proves nothing, so a hole there is no proof task and is not mined. `theorem`, `lemma`, `example`
 * and `instance` stay (the verifier confirms with Lean that what it rewards is a Prop).
 */
const DATA_KEYWORDS = new Set(["def", "abbrev", "opaque"]);

export interface MinedFile {
  imports: string[];
  holes: MinedHole[];
  declarations: number;
  skipped: Record<SkipReason, number>;
  /** Spans dropped because they were not whole tactic sequences (broken source). */
  malformedHoles: number;
  /**
   * Declarations whose whole tactic proof does not read as whole tactics (a bracket left open or closed too
   * often: a syntax error, as a rule), by name and 0-based line: named in the export's summary and report, so a
   * declaration never vanishes without a word. Their whole spans are still mined; Lean judges them.
   */
  unreadable: { name: string; line: number }[];
}

function skipReason(decl: Declaration): SkipReason | undefined {
  switch (decl.bodyKind) {
    case "tactic":
      return DATA_KEYWORDS.has(decl.keyword) ? "data-valued-definition" : undefined;
    case "term":
      return "term-proof";
    case "equations":
      return "equations";
    case "where":
      // A tactic proof followed by a `where` clause (auxiliary definitions) is a proof like any other, and
      // the verifier checks it; a structure-instance body (`instance : C where …`) has no tactic block.
      if (decl.byStart === undefined) return "where-clause";
      return DATA_KEYWORDS.has(decl.keyword) ? "data-valued-definition" : undefined;
    case "none":
      return "no-body";
  }
}

/** Variable commands in scope, per command index (sections and namespaces scope them). */
export function variablesInScope(file: ParsedFile): string[][] {
  const stack: string[][] = [[]];
  let current: string[] = [];
  return file.commands.map((c) => {
    const k = c.keyword;
    // Shared by the following commands until the variables in scope change: opening a scope, or closing
    // one that declared none, leaves them as they are.
    if (k === "namespace" || k === "section" || k === "mutual") stack.push([]);
    else if (k === "end" && stack.length > 1) {
      if (stack.pop()!.length > 0) current = stack.flat();
    } else if (k === "variable") {
      stack[stack.length - 1]!.push(file.tokens.text.slice(c.start, c.end));
      current = stack.flat();
    }
    return current;
  });
}

export function mineText(text: string, parsed: ParsedFile = parseFile(text)): MinedFile {
  const holes: MinedHole[] = [];
  const counts = mineDeclarations(text, parsed, (found) => {
    for (const hole of found) holes.push(hole);
  });
  return { ...counts, holes };
}

/**
 * `mineText`, handing each declaration's holes to `onHoles` as soon as they are found (in the same order), so
 * that a caller going through a large file holds one declaration's holes at a time, not the file's.
 */
export function mineDeclarations(
  text: string,
  parsed: ParsedFile,
  onHoles: (holes: MinedHole[]) => void,
): Omit<MinedFile, "holes"> {
  const ts = parsed.tokens;
  const skipped: Record<SkipReason, number> = {
    "term-proof": 0,
    equations: 0,
    "where-clause": 0,
    "no-body": 0,
    "data-valued-definition": 0,
  };
  let malformedHoles = 0;
  let declarations = 0;
  const unreadable: MinedFile["unreadable"] = [];
  const scopes = variablesInScope(parsed);
  const spans = new HoleSpans(ts, text);
  const commands = parsed.commands;
  for (let commandIndex = 0; commandIndex < commands.length; commandIndex++) {
    const command = commands[commandIndex]!;
    const decl = command.declaration;
    if (!decl) continue;
    declarations++;
    const reason = skipReason(decl);
    if (reason) {
      skipped[reason]++;
      continue;
    }
    const byToken = findToken(ts.starts, decl.byStart ?? 0, command.firstToken, command.lastToken);
    let first = byToken + 1;
    while (first <= command.lastToken && isComment(ts.kinds[first])) first++;
    const lastToken = findLastToken(ts.ends, decl.byEnd ?? decl.end, command.firstToken, command.lastToken);
    if (first > lastToken) {
      skipped["no-body"]++;
      continue;
    }
    const top = readBlock(ts, first, lastToken);
    const holes = spans.begin(decl, positionOf(ts, command.firstToken), scopes[commandIndex] ?? []);
    // The spans in hole order: the proof, runs of its steps, then blocks and single steps as they are read.
    const proofWhole = allWhole(top.steps, 0, top.steps.length);
    if (!proofWhole)
      unreadable.push({ name: decl.fullName ?? decl.keyword, line: positionOf(ts, command.firstToken).line });
    spans.add("proof", top.first, top.last, proofWhole);
    const runs = stepsBlock(ts, top).steps;
    const n = runs.length;
    for (let a = 0; a < n; a++)
      for (let len = 2; len <= Math.min(4, n - 1) && a + len <= n; len++)
        spans.add("steps", runs[a]!.first, runs[a + len - 1]!.last, allWhole(runs, a, a + len));
    addBlockSpans(spans, top, true);
    malformedHoles += spans.end();
    if (holes.length > 0) onHoles(holes);
  }
  return { imports: parsed.imports, declarations, skipped, malformedHoles, unreadable };
}

/**
 * The block whose runs of steps are `steps` holes: the proof's top level, or, for a proof that is one
 * combinator over the rest (`classical` on its own line, whose sequence holds every later tactic), that
 * combinator's sequence.
 */
function stepsBlock(ts: TokenStream, top: TacticBlock): TacticBlock {
  const only = top.steps.length === 1 ? top.steps[0]! : undefined;
  const inner = only?.nested.length === 1 ? only.nested[0]! : undefined;
  if (!only || !inner || inner.last !== only.last || !SEQUENCE_HEADS.has(ts, only.first)) return top;
  return inner;
}

function isComment(kind: number | undefined): boolean {
  return kind === 4 || kind === 5 || kind === 6;
}

/**
 * The first token of [from, to] that starts at or after `offset` (`to` if none). Tokens are in text order
 * (starts increase), so a binary search finds it; a statement can be long.
 */
function findToken(starts: Int32Array, offset: number, from: number, to: number): number {
  let lo = from;
  let hi = to + 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((starts[mid] ?? 0) >= offset) hi = mid;
    else lo = mid + 1;
  }
  return lo <= to ? lo : to;
}

/** The last token of [from, to] that ends at or before `offset` (`from` if none); ends increase too. */
function findLastToken(ends: Int32Array, offset: number, from: number, to: number): number {
  let lo = from - 1;
  let hi = to;
  while (lo < hi) {
    const mid = (lo + hi + 1) >>> 1;
    if ((ends[mid] ?? 0) <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo >= from ? lo : from;
}

/** Tokens that may follow a hole on its line: they close the term the hole sits in. */
const CLOSERS = new Set([")", "]", "}", "⟩", "⦄", ","]);

/**
 * Whether the hole [start, end) of `text` is a whole tactic sequence in its place: its middle is one (see
 * `isWholeSequence`), and the rest of its last line holds nothing but what closes an enclosing term — so a
 * hole never ends at a `|` of a term or pattern (`|x|`, `a | b`, `first | a | b`) that continues after it.
 */
export function isWholeHole(text: string, start: number, end: number, indent: number): boolean {
  if (!isWholeSequence(text.slice(start, end).replace(/\r\n/g, "\n"), indent)) return false;
  const newline = text.indexOf("\n", end);
  const rest = text.slice(end, newline === -1 ? text.length : newline).trim();
  return rest === "" || rest.startsWith("--") || rest.startsWith("/-") || CLOSERS.has([...rest][0]!);
}

/** Whether a middle is a whole tactic sequence at `indent`: balanced, terminated, nothing left of the column. */
export function isWholeSequence(middle: string, indent: number): boolean {
  const ts = lex(middle);
  if (ts.unterminated) return false;
  let depth = 0;
  for (let i = 0; i < ts.count; i++) {
    if (isComment(ts.kinds[i])) continue;
    const startLine = middle.lastIndexOf("\n", (ts.starts[i] ?? 0) - 1) !== -1;
    if (ts.lineFirst[i] === 1 && startLine && (ts.cols[i] ?? 0) < indent) return false;
    const t = tokenText(ts, i);
    if (t === "(" || t === "[" || t === "{" || t === "⟨" || t === "⦃" || t === "@[") depth++;
    if (t === ")" || t === "]" || t === "}" || t === "⟩" || t === "⦄") depth--;
    if (depth < 0) return false;
  }
  return depth === 0;
}
