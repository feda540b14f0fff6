/**
 * The policy's tactic rule (`unknown-tactic`): every tactic's leading word, where Lean's tactic parser reads
 * one (tacticStarts.ts), must be on the allow-list (tacticAllowList.ts, the workspace's own, a policy file's
 * `allowTactics`). policy.ts applies it after the word lists; docs/POLICY.md "Tactics by allow-list".
 */
import { lex } from "../lean/lexer";
import { TokenKind, tokenText } from "../lean/tokens";
import { reindent } from "./placeCandidate";
import { MAX_NESTING, tacticStarts, type StartMode } from "./tacticStarts";

/** What the rule reads of a policy: its tactic words, and whether native code is allowed. */
export interface TacticRule {
  tacticWords: ReadonlySet<string> | "any";
  allowNative: boolean;
}

export type TacticVerdict = { kind: "allowed" } | { kind: "rejected"; rule: string; reason: string };

/**
 * Where the candidate will stand: the hole's column, which decides the layout Lean reads its lines in, and
 * whether the hole is a tactic's place or a term's inside a tactic (`exact ⟨_, hq⟩` cut at `_`), where only
 * the candidate's `by` blocks hold tactics. Without a placement the candidate is taken for tactics.
 */
export interface Placement {
  column: number;
  mode?: StartMode;
}

/**
 * The candidate as the check document places it (checkDocument.ts `reindent`), its first line at the hole's
 * column, so that a line's column relative to its block is what Lean sees. Without a placement the hole's
 * column is taken from the candidate's own layout: a first line without indentation and later lines
 * indented is a block cut verbatim from a file at the later lines' least indentation.
 */
export function placedCandidate(candidate: string, placement: Placement | undefined): string {
  const column = placement?.column ?? verbatimColumn(candidate);
  return " ".repeat(column) + reindent(candidate, column).text;
}

function verbatimColumn(candidate: string): number {
  const lines = candidate.replace(/^\s*\n/, "").split("\n");
  const first = lines[0] ?? "";
  if (/^[ \t]/.test(first)) return 0;
  const indents = lines
    .slice(1)
    .filter((l) => l.trim() !== "")
    .map((l) => /^[ \t]*/.exec(l)?.[0].length ?? 0);
  return indents.length ? Math.min(...indents) : 0;
}

/** The native-code tactics: known tactics, off the list, allowed with native code (`"allowNative": true`). */
const NATIVE_TACTICS = new Set(["native_decide", "bv_decide", "bv_check"]);

/**
 * Words that end a declaration's tactic block where a tactic would start: not tactics, and refused when the
 * check document is built (`tamper`: the candidate ends the tactic block early), under that rule.
 */
const BLOCK_ENDERS = new Set(["where", "termination_by", "decreasing_by"]);

/**
 * Every tactic's leading word must be on the policy's allow-list: what a tactic does at elaboration time is
 * its elaborator's, and a name nobody has read may run anything (`elab "my_tac" : tactic => … evalExpr …` in a
 * library). Where a token's reading as a tactic start is in doubt, tacticStarts leaves it out (the policy's
 * word lists still hold it).
 */
export function checkTacticWords(
  code: string,
  policy: TacticRule,
  mode: StartMode,
  who: string,
): TacticVerdict {
  const words = policy.tacticWords;
  if (words === "any") return { kind: "allowed" };
  const ts = lex(code);
  const read = tacticStarts(ts, mode);
  if (read.tooDeep)
    return {
      kind: "rejected",
      rule: "too-deep",
      reason: `${who} nests tactic blocks more than ${MAX_NESTING} deep, past what the policy reads; no proof needs that`,
    };
  for (const i of read.starts) {
    if (ts.kinds[i] !== TokenKind.Ident) continue;
    const word = tokenText(ts, i);
    if (words.has(word) || BLOCK_ENDERS.has(word)) continue;
    if (policy.allowNative && NATIVE_TACTICS.has(word)) continue;
    return {
      kind: "rejected",
      rule: "unknown-tactic",
      reason: `${who} starts a tactic with \`${word}\`, which is not on the policy's list of tactics (core Lean, Batteries, Mathlib and the workspace's own); a tactic the verifier has not read may run code while it elaborates. If \`${word}\` is a tactic your project declares, declare it in the workspace's own .lean files or add it to "allowTactics" in a policy file (docs/POLICY.md)`,
    };
  }
  return { kind: "allowed" };
}

/** Whether `word` lexes as one identifier, as a tactic's leading word does. */
export function isTacticWord(word: string): boolean {
  const ts = lex(word);
  return ts.count === 1 && ts.kinds[0] === TokenKind.Ident && tokenText(ts, 0) === word;
}
