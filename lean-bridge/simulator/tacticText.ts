/**
 * How the simulator reads a tactic body: its code tokens, the goal a statement shows, the parse errors it
 * models around `sorry`, the parenthesised sequences it sees through, and diagnostics shaped like Lean's
 * (ranges cut to a line, `fullRange` kept). Split from judge.ts, which decides what the tokens mean.
 */
import type { Declaration } from "../lean/commands";
import { bracketDelta, isCommentKind, tokenText, type TokenStream } from "../lean/tokens";
import type { LeanDiagnostic } from "../protocol/lean";
import type { Range } from "vscode-languageserver-protocol";
import type { LineIndex } from "../text/positions";

export const SIMULATOR_SOURCE = "Lean 4 simulator";

/** Lean cuts a diagnostic's `range` to its first line (ending at the next line's start); `fullRange` keeps all. */
export function leanRange(index: LineIndex, start: number, end: number): { range: Range; fullRange: Range } {
  const fullRange = index.rangeAt(start, end);
  if (fullRange.start.line === fullRange.end.line) return { range: fullRange, fullRange };
  return {
    range: { start: fullRange.start, end: { line: fullRange.start.line + 1, character: 0 } },
    fullRange,
  };
}

export function diag(
  index: LineIndex,
  start: number,
  end: number,
  severity: 1 | 2 | 3,
  message: string,
  extra: Partial<LeanDiagnostic> = {},
): LeanDiagnostic {
  return { source: SIMULATOR_SOURCE, severity, ...leanRange(index, start, end), message, ...extra };
}

/** Code tokens (indices into the stream) of [from, to]. */
export function codeIndices(ts: TokenStream, from: number, to: number): number[] {
  const out: number[] = [];
  for (let i = from; i <= to; i++) if (!isCommentKind(ts.kinds[i] ?? 0)) out.push(i);
  return out;
}

export function tokenIndexAt(ts: TokenStream, offset: number, from: number, to: number): number {
  for (let i = from; i <= to; i++) if ((ts.starts[i] ?? 0) >= offset) return i;
  return to + 1;
}

/** A goal in Lean's rendering, read off the statement's binders and type. */
export function goalOf(ts: TokenStream, decl: Declaration): string {
  const first = tokenIndexAt(ts, decl.keywordStart, decl.firstToken, decl.lastToken);
  const statementEnd = decl.keywordStart + decl.statement.length;
  const hyps: string[] = [];
  let type = "";
  let depth = 0;
  let groupStart = -1;
  for (let i = first + 1; i <= decl.lastToken && (ts.starts[i] ?? 0) < statementEnd; i++) {
    const delta = bracketDelta(ts, i);
    if (depth === 0 && delta > 0) groupStart = i;
    depth += delta;
    if (depth === 0 && delta < 0 && groupStart >= 0) {
      const inner = ts.text.slice(ts.ends[groupStart], ts.starts[i]).trim();
      if (inner.includes(":")) hyps.push(inner.replace(/\s+/g, " "));
      groupStart = -1;
    } else if (depth === 0 && tokenText(ts, i) === ":") {
      type = ts.text.slice(ts.ends[i], statementEnd).trim().replace(/\s+/g, " ");
      break;
    }
  }
  return [...groupedHypotheses(hyps), `⊢ ${type || "?"}`].join("\n");
}

/**
 * Consecutive hypotheses of one type on one line, as Lean's `ppGoal` prints them (`(a : Nat) (b : Nat)` shows
 * as `a b : Nat`).
 */
function groupedHypotheses(hyps: readonly string[]): string[] {
  const out: { names: string; type: string }[] = [];
  for (const hyp of hyps) {
    const colon = hyp.indexOf(" : ");
    const [names, type] = colon < 0 ? [hyp, ""] : [hyp.slice(0, colon), hyp.slice(colon + 3)];
    const last = out[out.length - 1];
    if (last && type && last.type === type) last.names += ` ${names}`;
    else out.push({ names, type });
  }
  return out.map((h) => (h.type ? `${h.names} : ${h.type}` : h.names));
}

/** Tokens that may follow a complete tactic on its line: a separator, a combinator, a closing bracket. */
const AFTER_TACTIC_ON_LINE = new Set([";", "<;>", "<|>", ")", "]", "}", "⟩", ","]);
/** Tokens no tactic starts with, which only the tactic before them could take. */
const NEVER_TACTIC_START = new Set(["|", "with", "then", "at", "using", ":=", "=>", "from", "_", ","]);

export function prevCode(ts: TokenStream, i: number): number {
  let j = i - 1;
  while (j > 0 && isCommentKind(ts.kinds[j] ?? 0)) j--;
  return j;
}

/**
 * The simulator's model of Lean's parser around a `sorry` tactic (the export's hole-shape check puts one
 * in a hole): `sorry` is complete, so the token after it must be one that may follow a complete tactic on
 * its line, or on a later line start a tactic at `sorry`'s column (or end its block further left). Anything
 * else continues a tactic that `sorry` replaced only in part, which Lean reports as a parse error. Returns
 * that token's index, or undefined when the body parses.
 */
export function danglingAfterSorry(ts: TokenStream, body: number[]): number | undefined {
  for (let k = 0; k + 1 < body.length; k++) {
    const at = body[k]!;
    if (tokenText(ts, at) !== "sorry") continue;
    const next = body[k + 1]!;
    const text = tokenText(ts, next);
    if (ts.lines[next] === ts.lines[at]) {
      if (!AFTER_TACTIC_ON_LINE.has(text)) return next;
      continue;
    }
    const col = ts.cols[next] ?? 0;
    const sorryCol = ts.cols[at] ?? 0;
    if (col > sorryCol && text !== "<;>" && text !== "<|>") return next;
    if (col === sorryCol && NEVER_TACTIC_START.has(text)) return next;
  }
  return undefined;
}

/** The code token before `i` on its line, or undefined when `i` starts its line. */
function codeBeforeOnLine(ts: TokenStream, i: number): number | undefined {
  for (let k = i - 1; k >= 0 && ts.lines[k] === ts.lines[i]; k--)
    if (!isCommentKind(ts.kinds[k] ?? 0)) return k;
  return undefined;
}

/** Whether token `i` is the last code token on its line. */
function lastOnLine(ts: TokenStream, i: number): boolean {
  for (let k = i + 1; k < ts.count && ts.lines[k] === ts.lines[i]; k++)
    if (!isCommentKind(ts.kinds[k] ?? 0)) return false;
  return true;
}

/**
 * A `(` that opens a tactic on a line of its own: last on its line, and first on it or right after the
 * `by` or `·` whose block it starts (a hole on the `by` line is wrapped there).
 */
function opensParenTactic(ts: TokenStream, i: number): boolean {
  if (tokenText(ts, i) !== "(" || !lastOnLine(ts, i)) return false;
  const before = codeBeforeOnLine(ts, i);
  return before === undefined || ["by", "·", "."].includes(tokenText(ts, before));
}

/**
 * The body without the brackets of Lean's `(tacs)` tactic written with `(` ending its line and `)` alone on its line (how
 * the verifier's goal probe wraps a candidate, lean-bridge/verify/goals.ts): `(tacs)` runs `tacs` on the
 * goals as they are (src/Init/Tactics.lean, `paren`), so the reference proofs are matched through it.
 */
export function withoutParenBlocks(ts: TokenStream, body: number[]): number[] {
  const dropped = new Set<number>();
  for (let k = 0; k < body.length; k++) {
    const open = body[k]!;
    if (!opensParenTactic(ts, open)) continue;
    let depth = 0;
    for (let j = k; j < body.length; j++) {
      depth += bracketDelta(ts, body[j]!);
      if (depth > 0) continue;
      const close = body[j]!;
      if (
        tokenText(ts, close) === ")" &&
        codeBeforeOnLine(ts, close) === undefined &&
        lastOnLine(ts, close)
      ) {
        dropped.add(open);
        dropped.add(close);
      }
      break;
    }
  }
  return dropped.size === 0 ? body : body.filter((i) => !dropped.has(i));
}

/** Whether token `i` stands where a tactic step starts: first on its line, or right after the `by` opening a block. */
function startsStep(ts: TokenStream, i: number): boolean {
  const before = codeBeforeOnLine(ts, i);
  return before === undefined || tokenText(ts, before) === "by";
}

/**
 * The body without the steps that do nothing, as Lean runs them: `skip` and `all_goals skip` on a line of their
 * own never fail and change no goal (src/Lean/Elab/Tactic/BuiltinTactic.lean, `evalSkip := fun _ => pure ()`;
 * `all_goals` over no goals does nothing), and `done` succeeds exactly where no goal is left, which in the
 * simulator's terms is where the steps before it are already a whole reference proof (`completes`). So a no-op
 * in a hole whose proof is complete without it proves there, as in Lean; anywhere else `done` stays and fails.
 */
export function withoutNoopSteps(
  ts: TokenStream,
  body: number[],
  completes: (texts: string[]) => boolean,
): number[] {
  const kept: number[] = [];
  for (let k = 0; k < body.length; k++) {
    const i = body[k]!;
    const text = tokenText(ts, i);
    if (!startsStep(ts, i)) {
      kept.push(i);
      continue;
    }
    const next = body[k + 1];
    if (text === "skip" && lastOnLine(ts, i)) continue;
    if (
      text === "all_goals" &&
      next !== undefined &&
      ts.lines[next] === ts.lines[i] &&
      tokenText(ts, next) === "skip" &&
      lastOnLine(ts, next)
    ) {
      k++;
      continue;
    }
    if (text === "done" && lastOnLine(ts, i) && completes(kept.map((j) => tokenText(ts, j)))) continue;
    kept.push(i);
  }
  return kept;
}

/**
 * Lean's defaults for the limits a proof may raise with `set_option … in` (src/Lean/CoreM.lean `maxHeartbeats`
 * and `maxRecDepth`, src/Lean/Meta/SynthInstance.lean `synthInstance.maxHeartbeats` and `synthInstance.maxSize`).
 */
const LIMIT_DEFAULTS = new Map([
  ["maxHeartbeats", 200_000],
  ["maxRecDepth", 512],
  ["synthInstance.maxHeartbeats", 20_000],
  ["synthInstance.maxSize", 128],
]);

/**
 * Whether `set_option NAME VALUE in tacs` accepts exactly what `tacs` alone does, so the simulator judges `tacs`:
 * a limit raised to at least Lean's default (a proof that runs within the default runs within more), a linter
 * switched off (linters only warn), a printing option. Anything else may change what Lean accepts (a lower limit
 * can make a proof run out; `debug.skipKernelTC` switches a check off) and stays in the text, where it matches
 * no reference.
 */
function optionKeepsProofs(name: string, value: string): boolean {
  const floor = LIMIT_DEFAULTS.get(name);
  if (floor !== undefined) return /^[0-9]+$/.test(value) && Number(value) >= floor;
  if (name.startsWith("linter.")) return value === "false";
  return name.startsWith("pp.") && (value === "true" || value === "false");
}

/** Whether texts[k..k+3] is `set_option NAME VALUE in` for an option that keeps proofs (optionKeepsProofs). */
function keptOptionScopeAt(texts: (k: number) => string | undefined, k: number): boolean {
  return (
    texts(k) === "set_option" &&
    texts(k + 3) === "in" &&
    optionKeepsProofs(texts(k + 1) ?? "", texts(k + 2) ?? "")
  );
}

/**
 * The body without `set_option NAME VALUE in` where the option changes nothing Lean accepts: Lean's builtin
 * `set_option … in` tactic (and term) runs what follows with the option set, so the reference proofs are matched
 * through it.
 */
export function withoutOptionScopes(ts: TokenStream, body: number[]): number[] {
  const kept: number[] = [];
  const text = (k: number) => (body[k] === undefined ? undefined : tokenText(ts, body[k]));
  for (let k = 0; k < body.length; k++) {
    if (keptOptionScopeAt(text, k)) {
      k += 3;
      continue;
    }
    kept.push(body[k]!);
  }
  return kept;
}

/**
 * A reference proof's tokens without its no-ops: every `done` or `skip` in a correct proof does nothing, and an
 * option scope that keeps proofs (withoutOptionScopes) only runs what follows.
 */
export function referenceWithoutNoops(texts: string[]): string[] {
  const out: string[] = [];
  for (let k = 0; k < texts.length; k++) {
    if (keptOptionScopeAt((j) => texts[j], k)) {
      k += 3;
      continue;
    }
    if (texts[k] === "all_goals" && texts[k + 1] === "skip") {
      k++;
      continue;
    }
    if (texts[k] !== "done" && texts[k] !== "skip") out.push(texts[k]!);
  }
  return out;
}
