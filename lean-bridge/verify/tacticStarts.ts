/**
 * Where a candidate's tactics start: the tokens at which Lean's tactic parser reads a tactic's leading word.
 * The policy holds the word there to an allow-list (tacticPolicy.ts). Steps come from the miner's layout rule
 * (holes/tactics.ts: a step starts at its block's column unless the line above still needs input, and here
 * also after a line ending in `simp only` and the like, OPTIONAL_TAILS); inside a step a tactic starts after
 * `;` and `<;>`, after the leading word of a combinator (`try`, `all_goals`, `iterate 3` …), after `·`, inside
 * `(…)` at a tactic's start, after each `|` of `first`, after `then` and `else` of a tactic `if`, after `in` of
 * `set_option … in` and `open … in`, after `=>` of `case`, `next`, `on_goal` and the alternatives of
 * `induction`/`cases`/`match`, after Mathlib's `says`, in a discharger (`(disch := tacs)`), after a conversion's
 * `tactic =>`, and after every `by`.
 *
 * Where the reading is in doubt the token is left out, never put in: a line further right than its block's
 * column, or after a term operator, continues a term (a lemma's name at the start of a continuation line is a
 * name); conversions (`conv => …`) are not tactics and are not read; nor is a `first` alternative after a
 * `with` (an `rcases` pattern's `|`). A word left out is still held to the policy's word lists, so a doubt
 * never lets an evaluator through that a list refuses.
 */
import { TokenKind, bracketDelta, isCommentKind, tokenText, type TokenStream } from "../lean/tokens";
import { readBlock, type BlockStops, type TacticBlock } from "../holes/tactics";
import { continuesOnly } from "../holes/layout";

/** Combinators whose argument, right after their leading word (and `iterate`'s count), is a tactic sequence. */
const SEQUENCE_COMBINATORS = new Set([
  "try",
  "repeat",
  "repeat'",
  "repeat1'",
  "all_goals",
  "any_goals",
  "focus",
  "classical",
  "iterate",
  "fail_if_success",
  "fail_if_no_progress",
  "with_reducible",
  "with_reducible_and_instances",
  "with_unfolding_all",
  "show_term",
  "checkpoint",
  "unhygienic",
  "squeeze_scope",
  "success_if_fail_with_msg",
]);

/** Tactics whose `=>` (at their own bracket depth) is followed by a tactic sequence. */
const ARROW_TACTICS = new Set([
  "case",
  "case'",
  "next",
  "on_goal",
  "induction",
  "cases",
  "match",
  "fun_induction",
  "fun_cases",
  "induction'",
  "cases'",
]);

/** Tactics whose block holds conversions (their own tactic category), not read. */
const CONV_TACTICS = new Set(["conv", "conv_lhs", "conv_rhs"]);

/**
 * Words that end a line leaving the tactic open to the layout rule (holes/layout.ts), after which Lean reads
 * nothing more at the block's column: what may follow them needs `colGt` (`at h`, `with x`, `generalizing m`)
 * or a bracket (`simp only [h]`), or is absent.
 */
const OPTIONAL_TAILS = new Set(["only", "with", "at", "generalizing"]);

const NO_STOPS: BlockStops = { bar: false, comma: false };
const ARM_STOPS: BlockStops = { bar: true, comma: false };
const BRACKETED_STOPS: BlockStops = { bar: false, comma: true };

/**
 * Past this nesting the rest of a block is not read (a fuzzer's input must not exhaust the stack), and the
 * reading says so: the policy refuses such a candidate, as no proof nests tactic blocks this deep.
 */
export const MAX_NESTING = 48;

/** holes/tactics.ts reads nested blocks while its budget's depth is below 64: from 63, one level. */
const LAYOUT_LAST_LEVEL = 63;

/** Whether the candidate's own text starts as a tactic sequence, or as a term (the code of a string's braces). */
export type StartMode = "tactics" | "term";

/** The tokens that start a tactic, in order, and whether blocks nested past MAX_NESTING were left unread. */
export interface Starts {
  starts: number[];
  tooDeep: boolean;
}

export function tacticStarts(ts: TokenStream, mode: StartMode = "tactics"): Starts {
  const reader = new StartReader(ts);
  const starts = reader.read(mode, 0, ts.count - 1);
  return { starts, tooDeep: reader.tooDeep };
}

/**
 * Whether a hole at offset `at` of a file stands where a tactic starts, as the file's tactic block (tokens
 * `from` to `to`, the block after a declaration's `by`) reads: its first token after `at` is a tactic start.
 * A hole inside a term (`exact ⟨_, hq⟩` cut at `_`) holds a term, whose `by` blocks alone hold tactics.
 */
export function holeStartsTactic(ts: TokenStream, from: number, to: number, at: number): boolean {
  let first = from;
  while (first <= to && ((ts.starts[first] ?? 0) < at || isCommentKind(ts.kinds[first] ?? 0))) first++;
  // No token of the block at or after the hole (a hole at the block's end): a tactic follows the block's last.
  if (first > to) return true;
  return new StartReader(ts).read("tactics", from, to).includes(first);
}

class StartReader {
  private readonly starts = new Set<number>();
  private nesting = 0;
  tooDeep = false;

  constructor(private readonly ts: TokenStream) {}

  read(mode: StartMode, from: number, last: number): number[] {
    const first = this.nextCode(from, last);
    if (first > last) return [];
    if (mode === "tactics") this.sequence(first, last, NO_STOPS);
    else this.byBlocks(first, last);
    return [...this.starts].sort((a, b) => a - b);
  }

  private text(i: number): string {
    return tokenText(this.ts, i);
  }

  private isSymbol(i: number, symbol: string): boolean {
    return this.ts.kinds[i] === TokenKind.Symbol && this.text(i) === symbol;
  }

  private isWord(i: number, word: string): boolean {
    return this.ts.kinds[i] === TokenKind.Ident && this.text(i) === word;
  }

  private nextCode(i: number, limit: number): number {
    let j = i;
    while (j <= limit && isCommentKind(this.ts.kinds[j] ?? 0)) j++;
    return j;
  }

  private prevCode(i: number, floor: number): number {
    let k = i;
    while (k >= floor && isCommentKind(this.ts.kinds[k] ?? 0)) k--;
    return k;
  }

  /** A tactic sequence from token `from` to at most `limit`; returns its last token. */
  private sequence(from: number, limit: number, stops: BlockStops): number {
    if (this.nesting >= MAX_NESTING) {
      this.tooDeep = true;
      return limit;
    }
    this.nesting++;
    // One level of nested blocks from the layout reader (their extents, for step()); deeper levels are this
    // reader's own, so that no block is read more than once per level.
    const block: TacticBlock = readBlock(this.ts, from, limit, stops, { depth: LAYOUT_LAST_LEVEL });
    for (const step of block.steps) {
      let from = step.first;
      for (const cut of this.optionalTailCuts(step.first, step.last, block.column)) {
        this.step(from, this.prevCode(cut - 1, from), step.nested);
        from = cut;
      }
      this.step(from, step.last, step.nested);
    }
    this.nesting--;
    return block.last;
  }

  /**
   * Lines of a step that Lean reads as tactics although the layout rule continues the step: a line at the
   * block's column that starts with a word, after a line ending in a word whose arguments Lean reads only
   * further right or after a bracket (`simp only`, `congr! with`, `simp at`, `induction n generalizing`).
   * There the tactic above is complete (or a parse error), and the word starts the next tactic.
   */
  private optionalTailCuts(first: number, last: number, column: number): number[] {
    const cuts: number[] = [];
    let prev = first;
    for (let i = first + 1; i <= last; i++) {
      if (isCommentKind(this.ts.kinds[i] ?? 0)) continue;
      if (
        this.ts.lineFirst[i] === 1 &&
        this.ts.cols[i] === column &&
        this.ts.kinds[i] === TokenKind.Ident &&
        !continuesOnly(this.ts, i) &&
        this.ts.kinds[prev] === TokenKind.Ident &&
        OPTIONAL_TAILS.has(this.text(prev))
      )
        cuts.push(i);
      prev = i;
    }
    return cuts;
  }

  /**
   * The tactic blocks of a term or a tactic's arguments from `from` to `limit`: after every `by`, and in a
   * discharger, `(disch := tacs)` or `(discharger := tacs)` (simp, field_simp, norm_num …).
   */
  private byBlocks(from: number, limit: number): void {
    let depth = 0;
    for (let i = from; i <= limit; i++) {
      if (isCommentKind(this.ts.kinds[i] ?? 0)) continue;
      if (this.isWord(i, "by")) {
        const j = this.nextCode(i + 1, limit);
        if (j <= limit) i = this.sequence(j, limit, depth > 0 ? BRACKETED_STOPS : NO_STOPS);
        continue;
      }
      if (this.isSymbol(i, "(")) {
        const name = this.nextCode(i + 1, limit);
        const assign = this.nextCode(name + 1, limit);
        if ((this.isWord(name, "disch") || this.isWord(name, "discharger")) && this.isSymbol(assign, ":=")) {
          const close = this.closing(i, limit);
          const to = close < 0 ? limit : close - 1;
          const j = this.nextCode(assign + 1, to);
          if (j <= to) this.sequence(j, to, NO_STOPS);
          if (close < 0) return;
          i = close;
          continue;
        }
      }
      depth += bracketDelta(this.ts, i);
    }
  }

  /**
   * One step of a block: its tactics separated by `;` and `<;>` at the step's own bracket depth. A separator
   * inside one of the step's nested blocks (`have := by simp; ring`, an arm `| zero => left; rfl`) is that
   * block's, not the step's.
   */
  private step(first: number, last: number, nested: readonly TacticBlock[]): void {
    if (this.ts.kinds[first] === TokenKind.Ident && CONV_TACTICS.has(this.text(first))) {
      this.starts.add(first);
      this.convEscapes(first + 1, last);
      return;
    }
    let segment = first;
    let depth = 0;
    let inner = 0;
    for (let i = first; i <= last; i++) {
      if (isCommentKind(this.ts.kinds[i] ?? 0)) continue;
      while (inner < nested.length && nested[inner]!.last < i) inner++;
      const block = nested[inner];
      if (block && block.first <= i) {
        i = block.last;
        continue;
      }
      // Mathlib's `tac says tacs`: the tactics after `says` are a sequence of their own.
      if (depth === 0 && this.isWord(i, "says")) {
        if (segment >= 0) this.tactic(segment, this.prevCode(i - 1, segment));
        const j = this.nextCode(i + 1, last);
        if (j <= last) this.sequence(j, last, NO_STOPS);
        return;
      }
      if (depth === 0 && (this.isSymbol(i, ";") || this.isSymbol(i, "<;>"))) {
        if (segment >= 0) this.tactic(segment, this.prevCode(i - 1, segment));
        segment = this.nextCode(i + 1, last);
        if (this.isSymbol(i, "<;>") && this.isSymbol(segment, "[")) {
          // Batteries' `t <;> [t₁; t₂]`: one tactic per goal, separated by `;` inside the brackets.
          i = this.tacticList(segment, last);
          segment = -1;
        }
        continue;
      }
      depth += bracketDelta(this.ts, i);
      if (depth < 0) break;
    }
    if (segment >= 0 && segment <= last) this.tactic(segment, last);
  }

  /**
   * Conversions are not read, but `tactic => tacs` (and `tactic'`) inside them returns to tactics, which are:
   * each such sequence runs to the end of the `conv` step (the layout ends it sooner, at its column).
   */
  private convEscapes(from: number, last: number): void {
    for (let i = from; i <= last; i++) {
      if (!(this.isWord(i, "tactic") || this.isWord(i, "tactic'"))) continue;
      const arrow = this.nextCode(i + 1, last);
      if (!this.isSymbol(arrow, "=>")) continue;
      const j = this.nextCode(arrow + 1, last);
      if (j <= last) i = this.sequence(j, last, NO_STOPS);
    }
  }

  /** `[t₁; t₂; …]` starting at token `open`; returns the closing bracket (or `limit`). */
  private tacticList(open: number, limit: number): number {
    let depth = 0;
    let item = this.nextCode(open + 1, limit);
    for (let i = open; i <= limit; i++) {
      if (isCommentKind(this.ts.kinds[i] ?? 0)) continue;
      if (depth === 1 && (this.isSymbol(i, ";") || this.isSymbol(i, "]"))) {
        const end = this.prevCode(i - 1, item);
        if (item <= end) this.sequence(item, end, NO_STOPS);
        item = this.nextCode(i + 1, limit);
      }
      depth += bracketDelta(this.ts, i);
      if (depth === 0) return i;
    }
    return limit;
  }

  /** The token that closes the bracket opened at `open`, or -1 if none does by `limit`. */
  private closing(open: number, limit: number): number {
    let depth = 0;
    for (let i = open; i <= limit; i++) {
      depth += bracketDelta(this.ts, i);
      if (depth === 0) return i;
    }
    return -1;
  }

  /** One tactic, from its leading token `s` to at most `e`: records the start and reads what it nests. */
  private tactic(s: number, e: number): void {
    if (s > e) return;
    this.starts.add(s);
    const kind = this.ts.kinds[s];
    const word = this.text(s);
    if (kind === TokenKind.Symbol) {
      if (word === "(" || word === "{") {
        // `(tacs)` and `{ tacs }`: a sequence inside the brackets, then maybe more of the step (`(tac) <;> …`).
        const close = this.closing(s, e);
        const inner = this.nextCode(s + 1, close < 0 ? e : close - 1);
        if (inner <= (close < 0 ? e : close - 1)) this.sequence(inner, close < 0 ? e : close - 1, NO_STOPS);
        if (close >= 0) this.byBlocks(close + 1, e);
        return;
      }
      if (word === "·" || word === ".") {
        const j = this.nextCode(s + 1, e);
        if (j <= e) this.sequence(j, e, NO_STOPS);
        return;
      }
      this.byBlocks(s + 1, e);
      return;
    }
    if (kind !== TokenKind.Ident) return;
    if (SEQUENCE_COMBINATORS.has(word)) {
      let j = this.nextCode(s + 1, e);
      if (word === "iterate" && this.ts.kinds[j] === TokenKind.Number) j = this.nextCode(j + 1, e);
      if (word === "success_if_fail_with_msg" && this.ts.kinds[j] === TokenKind.String)
        j = this.nextCode(j + 1, e);
      if (j <= e) this.sequence(j, e, NO_STOPS);
      return;
    }
    if (word === "first") return this.alternatives(s, e);
    if (word === "set_option" || word === "open") {
      const at = this.wordAtDepth0(s + 1, e, "in");
      const j = at < 0 ? e + 1 : this.nextCode(at + 1, e);
      if (j <= e) this.sequence(j, e, NO_STOPS);
      else this.byBlocks(s + 1, e);
      return;
    }
    if (word === "if") return this.branches(s, e);
    if (ARROW_TACTICS.has(word)) return this.arms(s, e);
    this.byBlocks(s + 1, e);
  }

  /** The first `word` at the tactic's own bracket depth in [from, e], or -1. */
  private wordAtDepth0(from: number, e: number, word: string): number {
    let depth = 0;
    for (let i = from; i <= e; i++) {
      if (depth === 0 && this.isWord(i, word)) return i;
      depth += bracketDelta(this.ts, i);
      if (depth < 0) return -1;
    }
    return -1;
  }

  /** `first | t₁ | t₂`: each alternative is a tactic sequence, up to the next `|` at the same depth. */
  private alternatives(s: number, e: number): void {
    const bars: number[] = [];
    let depth = 0;
    for (let i = s + 1; i <= e; i++) {
      if (isCommentKind(this.ts.kinds[i] ?? 0)) continue;
      if (depth === 0 && this.isSymbol(i, "|")) bars.push(i);
      // A `with` makes a later `|` a pattern's (`first | rcases h with a | b`): stop reading alternatives.
      if (depth === 0 && this.isWord(i, "with")) break;
      depth += bracketDelta(this.ts, i);
      if (depth < 0) break;
    }
    for (let k = 0; k < bars.length; k++) {
      const from = this.nextCode(bars[k]! + 1, e);
      const to = k + 1 < bars.length ? this.prevCode(bars[k + 1]! - 1, from) : e;
      if (from <= to) this.sequence(from, to, NO_STOPS);
    }
  }

  /** A tactic `if c then t₁ else t₂`: the condition may hold `by` blocks, each branch is a sequence. */
  private branches(s: number, e: number): void {
    const then = this.wordAtDepth0(s + 1, e, "then");
    if (then < 0) return this.byBlocks(s + 1, e);
    this.byBlocks(s + 1, then - 1);
    const other = this.wordAtDepth0(then + 1, e, "else");
    const thenFrom = this.nextCode(then + 1, e);
    const thenTo = other < 0 ? e : this.prevCode(other - 1, thenFrom);
    if (thenFrom <= thenTo) this.sequence(thenFrom, thenTo, NO_STOPS);
    if (other < 0) return;
    const elseFrom = this.nextCode(other + 1, e);
    if (elseFrom <= e) this.sequence(elseFrom, e, NO_STOPS);
  }

  /** `case tag => tacs`, `induction n with | zero => tacs | succ n ih => tacs`: a sequence after each `=>`. */
  private arms(s: number, e: number): void {
    let depth = 0;
    for (let i = s + 1; i <= e; i++) {
      if (isCommentKind(this.ts.kinds[i] ?? 0)) continue;
      if (this.isWord(i, "by")) {
        const j = this.nextCode(i + 1, e);
        if (j <= e) i = this.sequence(j, e, depth > 0 ? BRACKETED_STOPS : NO_STOPS);
        continue;
      }
      if (depth === 0 && this.isSymbol(i, "=>")) {
        const j = this.nextCode(i + 1, e);
        if (j <= e) i = this.sequence(j, e, ARM_STOPS);
        continue;
      }
      depth += bracketDelta(this.ts, i);
      if (depth < 0) return;
    }
  }
}
