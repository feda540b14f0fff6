/**
 * The lean-like server's model of tactics (test/hacks/leanLike.ts): how many goals each step leaves, the
 * errors Lean would report and where (nested blocks, `done`, bullets, focusing tactics, `( … )`), and the
 * axioms a proof would use. A test double, never a judge of proofs.
 */
import type { Declaration, ParsedFile } from "../../lean-bridge/lean/commands";
import { TokenKind, bracketDelta, isCommentKind, tokenText } from "../../lean-bridge/lean/tokens";

/**
 * Symbols this model lets begin a line of tactics: the bullets `·` and `.`, `(tacs)`, and, to err on the
 * side of running a step, braces, `⟨` and `_`. Anything else at a line's start is a parse error in Lean.
 */
const TACTIC_SYMBOLS = new Set(["·", ".", "(", ")", "{", "}", "⟨", "_"]);

export const CLOSERS = new Set([
  "exact",
  "rfl",
  "omega",
  "simp",
  "decide",
  "native_decide",
  "trivial",
  "assumption",
  "linarith",
]);

export interface LeanError {
  at: number;
  end: number;
  message: string;
  /** Tagged `Tactic.unsolvedGoals` (Lean's `leanTags: [1]`). */
  unsolved: boolean;
}

export interface Elaborated {
  decl: Declaration;
  namespace: string;
  goalsLeft: number;
  /** Errors in Lean's order: nested blocks, the first failing step, then the block's own unsolved goals. */
  errors: LeanError[];
  axioms: string[];
  usesSorry: boolean;
  /** Information messages (`trace "…"`), each placed on its tactic. */
  infos: { at: number; end: number; message: string }[];
}

export const unsolvedMessage = (n: number) =>
  `unsolved goals\n${Array.from({ length: n }, () => "⊢ P").join("\n\n")}`;

/**
 * Token indices of the step starting at token i: the rest of its line (comments skipped), up to a `;` outside
 * brackets, which separates steps on one line as a line break does (`subst h; rfl`).
 */
export function lineTokens(ts: ParsedFile["tokens"], i: number, end: number): number[] {
  const out: number[] = [];
  const line = ts.lines[i];
  let depth = 0;
  for (let k = i; k < ts.count && ts.lines[k] === line && (ts.starts[k] ?? 0) < end; k++) {
    if (isCommentKind(ts.kinds[k] ?? 0)) continue;
    depth += bracketDelta(ts, k);
    if (depth === 0 && tokenText(ts, k) === ";") break;
    out.push(k);
  }
  return out;
}

/** Whether token i starts a step: first on its line, or after a `;` outside brackets on its line. */
function startsStep(ts: ParsedFile["tokens"], i: number): boolean {
  if (ts.lineFirst[i] === 1) return true;
  let first = i;
  while (first > 0 && ts.lineFirst[first] !== 1) first--;
  let depth = 0;
  let previous = "";
  for (let k = first; k < i; k++) {
    if (isCommentKind(ts.kinds[k] ?? 0)) continue;
    depth += bracketDelta(ts, k);
    previous = depth === 0 ? tokenText(ts, k) : "";
  }
  return previous === ";";
}

/**
 * A nested `by` block on one line (`exact (by tac)`, `have h : P := by tac`): one goal, its tactics up to
 * the line's end or the bracket that closes around it. As Lean does, a block that leaves its goal reports
 * unsolved goals where it opens (or where `done` stands) and closes the goal with a synthetic sorry; a
 * failing step reports its own error. Returns the errors and the tokens it consumed.
 */
export function nestedBlock(
  ts: ParsedFile["tokens"],
  tokens: number[],
  from: number,
  errors: LeanError[],
): number {
  const by = tokens[from]!;
  let goals = 1;
  let depth = 0;
  let k = from + 1;
  for (; k < tokens.length; k++) {
    const t = tokenText(ts, tokens[k]!);
    if (t === "(" || t === "⟨" || t === "[") depth++;
    if (t === ")" || t === "⟩" || t === "]") {
      if (depth === 0) break;
      depth--;
    }
    const at = ts.starts[tokens[k]!] ?? 0;
    if (t === "fail") {
      const quoted = /^fail\s+"([^"]*)"/.exec(ts.text.slice(at));
      errors.push({ at, end: at + 4, message: quoted?.[1] ?? "failed", unsolved: false });
      return k;
    }
    if (t === "done" && goals > 0) {
      errors.push({ at, end: at + 4, message: unsolvedMessage(goals), unsolved: true });
      return k;
    }
    if (CLOSERS.has(t)) goals = Math.max(0, goals - 1);
  }
  if (goals > 0) {
    const at = ts.starts[by] ?? 0;
    errors.push({ at, end: at + 2, message: unsolvedMessage(goals), unsolved: true });
  }
  return k;
}

export function elaborate(
  file: ParsedFile,
  decl: Declaration,
  base: string[],
  goalsAtStart: number,
): Elaborated {
  const ts = file.tokens;
  let goals = goalsAtStart;
  const axioms = new Set(base);
  let usesSorry = false;
  const errors: LeanError[] = [];
  const from = decl.bodyStart ?? decl.end;
  // A `where` clause after the tactic block holds definitions, not steps.
  const stepsEnd = decl.bodyKind === "where" ? (decl.byEnd ?? decl.end) : decl.end;
  const fail = (at: number, end: number, message: string, unsolved = false) =>
    errors.push({ at, end, message, unsolved });
  const infos: Elaborated["infos"] = [];
  /**
   * A tactic whose sequence is a plain `tacticSeq` (`focus`, `case _ =>`, `next =>`) ending its line: the
   * lines after it at the same column are its sequence (the first tactic of a `tacticSeq` may stand on the
   * next line at any column), run on the one goal it focuses on; the other goals wait outside.
   */
  let focused: { at: number; keyword: string; outside: number; empty: boolean } | undefined;
  const endFocus = () => {
    if (!focused) return;
    // `case`/`next` must close their goal: Lean reports the rest where the tactic stands, closed with sorry.
    if (focused.keyword !== "focus" && goals > 0)
      fail(focused.at, focused.at + 4, unsolvedMessage(goals), true);
    goals = (focused.keyword === "focus" ? goals : 0) + focused.outside;
    focused = undefined;
  };
  steps: for (let i = 0; i < ts.count; i++) {
    const at = ts.starts[i] ?? 0;
    // Only a step's first token is a tactic here (`have h : … := by decide` is one step).
    if (at < from || at >= stepsEnd || isCommentKind(ts.kinds[i] ?? 0) || !startsStep(ts, i)) continue;
    const tokens = lineTokens(ts, i, decl.end);
    const first = tokenText(ts, i);
    // `(` and `)` alone on their lines: Lean's `(tacs)` tactic, which runs `tacs` on the goals as they are.
    if ((first === "(" || first === ")") && tokens.length === 1) {
      if (first === ")" && focused?.empty) {
        // The sequence of `focus`/`case … =>` has no tactic: a parse error at `)`, so nothing after it runs.
        fail(at, at + 1, "unexpected token ')'; expected tactic");
        break;
      }
      if (first === ")") endFocus();
      continue;
    }
    const lastText = tokenText(ts, tokens.at(-1) ?? i);
    if (
      (first === "focus" && tokens.length === 1) ||
      ((first === "case" || first === "next") && lastText === "=>")
    ) {
      if (goals === 0) {
        fail(at, at + first.length, "no goals to be proved");
        break;
      }
      endFocus();
      focused = { at, keyword: first, outside: goals - 1, empty: true };
      goals = 1;
      continue;
    }
    // Lean's tactic parser wants a tactic at a line's start: a number, string, char or a symbol that begins
    // none (`/`, `'`, `0x`, …) is a parse error there, and nothing after it runs.
    const kind = ts.kinds[i] ?? 0;
    if (kind !== TokenKind.Ident && !(kind === TokenKind.Symbol && TACTIC_SYMBOLS.has(first))) {
      fail(at, at + first.length, `unexpected token '${first}'; expected tactic`);
      break;
    }
    if (focused) focused.empty = false;
    // `set_option … in tac` and `open … in tac` run `tac`.
    const inAt =
      first === "set_option" || first === "open" ? tokens.findIndex((k) => tokenText(ts, k) === "in") : -1;
    const word = tokenText(ts, inAt > 0 ? (tokens[inAt + 1] ?? i) : i);
    // Nested blocks on the line run first, each on its own goal.
    for (let k = 1; k < tokens.length; k++)
      if (tokenText(ts, tokens[k]!) === "by") k = nestedBlock(ts, tokens, k, errors);
    if (errors.some((e) => !e.unsolved && e.at >= at)) break; // A failing step ends the block.
    if (word === "fail") {
      fail(at, at + 4, /^fail\s+"([^"]*)"/.exec(ts.text.slice(at))?.[1] ?? "failed");
      break;
    } else if (word === "done") {
      // Lean's `done`: the goals left, reported on itself and admitted; the rest of the block never runs.
      if (goals > 0) fail(at, at + 4, unsolvedMessage(goals), true);
      goals = 0;
      break;
    } else if (word === "·") {
      // A bullet works on one goal; one it leaves open is reported at the bullet and closed with sorry.
      if (goals === 0) {
        fail(at, at + 1, "no goals to be proved");
        break;
      }
      const closes = tokens.slice(1).some((k) => CLOSERS.has(tokenText(ts, k)));
      if (!closes) fail(at, at + 1, unsolvedMessage(1), true);
      goals--;
    } else if (word === "trace") {
      // Lean's `trace "msg"` logs the text as information on itself.
      infos.push({ at, end: at + 5, message: /^trace\s+"([^"]*)"/.exec(ts.text.slice(at))?.[1] ?? "" });
    } else if (word === "all_goals" && tokens.slice(1).some((k) => CLOSERS.has(tokenText(ts, k)))) goals = 0;
    else if (word === "constructor") goals++;
    else if (word === "sorry" || word === "admit" || word === "stop") {
      // `admit` is `sorry`; `stop` discards the rest of the block as `repeat sorry` (Lean's Init/Tactics.lean).
      usesSorry = true;
      axioms.add("sorryAx");
      if (word === "stop") {
        goals = 0;
        break;
      }
      goals = Math.max(0, goals - 1);
    } else if (CLOSERS.has(word)) {
      if (word === "native_decide") axioms.add("Lean.ofReduceBool");
      if (goals === 0) {
        fail(at, at + word.length, "no goals to be proved");
        break steps;
      }
      goals = Math.max(0, goals - 1);
    }
  }
  // `done` inside a focused sequence aborts the whole block: nothing outside it is reported.
  if (!errors.some((e) => e.unsolved && ts.text.startsWith("done", e.at))) endFocus();
  const goalsLeft = decl.bodyKind === "tactic" || decl.bodyKind === "where" ? goals : 0;
  if (goalsLeft > 0 && !errors.some((e) => !e.unsolved)) {
    const by = decl.byStart ?? decl.keywordStart;
    fail(by, by + 2, unsolvedMessage(goalsLeft), true);
  }
  // Lean closes what an error left with a synthetic sorry: the declaration depends on `sorryAx`.
  if (errors.length > 0) axioms.add("sorryAx");
  return {
    decl,
    namespace: decl.namespace,
    goalsLeft,
    errors,
    axioms: [...axioms].sort(),
    usesSorry,
    infos,
  };
}
