/**
 * The tactics a workspace declares itself (`syntax "my_tac" … : tactic`, `macro "…" … : tactic`,
 * `elab "…" … : tactic`, with any `(name := …)` or `(priority := …)`), read from its own `.lean` files when
 * the verifier starts, so that the policy allows their leading words (policy.ts `withTacticWords`). Its
 * dependencies (`.lake/packages`, any folder whose name starts with a dot) are not the workspace's and are
 * not read: a library's tactic is allowed only where the policy's list or a policy file names it. The
 * workspace is the user's, not the candidate's (the candidate writes no files: the sandbox and the imports'
 * fingerprint, docs/POLICY.md), and a word the policy's word lists refuse stays refused.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { lex } from "../lean/lexer";
import { TokenKind, isCommentKind, tokenText, type TokenStream } from "../lean/tokens";

/** Bounds on what is read, so that a huge workspace cannot hold the verifier's start. */
const MAX_FILES = 20_000;
const MAX_FILE_BYTES = 4 * 1024 * 1024;
/** Tokens a declaration may take before its `: tactic` (its whole syntax pattern). */
const MAX_PATTERN_TOKENS = 200;

const DECLARERS = new Set(["syntax", "macro", "elab"]);

/** The leading words of the tactics declared in one file's text. */
export function declaredTactics(text: string): string[] {
  const ts = lex(text);
  const words: string[] = [];
  for (let i = 0; i < ts.count; i++) {
    if (ts.kinds[i] !== TokenKind.Ident || !DECLARERS.has(tokenText(ts, i))) continue;
    const word = leadingAtom(ts, i);
    if (word !== undefined) words.push(word);
  }
  return words;
}

function next(ts: TokenStream, i: number): number {
  let j = i + 1;
  while (j < ts.count && isCommentKind(ts.kinds[j] ?? 0)) j++;
  return j;
}

/**
 * The first atom of the declaration at token `at` (`syntax`, `macro` or `elab`), if it declares a tactic:
 * after `(name := …)`/`(priority := …)`/`(kind := …)` and an optional `ident:` binder (`tk:"intro"`), a
 * string whose text, trimmed, is one identifier; then `: tactic` before the declaration's body.
 */
function leadingAtom(ts: TokenStream, at: number): string | undefined {
  let j = next(ts, at);
  // `macro:1`, `syntax:arg` precedences.
  if (tokenText(ts, j) === ":" && ts.ends[at] === ts.starts[j]) j = next(ts, next(ts, j));
  while (tokenText(ts, j) === "(" && ["name", "priority", "kind"].includes(tokenText(ts, next(ts, j)))) {
    while (j < ts.count && tokenText(ts, j) !== ")") j++;
    j = next(ts, j);
  }
  if (ts.kinds[j] === TokenKind.Ident && tokenText(ts, next(ts, j)) === ":") j = next(ts, next(ts, j));
  if (ts.kinds[j] !== TokenKind.String) return undefined;
  const literal = tokenText(ts, j);
  if (!literal.startsWith('"') || literal.includes("\\")) return undefined;
  const word = literal.slice(1, -1).trim();
  const atom = lex(word);
  if (atom.count !== 1 || atom.kinds[0] !== TokenKind.Ident || tokenText(atom, 0) !== word) return undefined;
  for (
    let k = next(ts, j), prev = j, n = 0;
    k < ts.count && n < MAX_PATTERN_TOKENS;
    prev = k, k = next(ts, k), n++
  ) {
    const t = tokenText(ts, k);
    if (t === "=>" || t === ":=" || (ts.kinds[k] === TokenKind.Ident && DECLARERS.has(t))) return undefined;
    // The category's `:` stands apart; a binder's (`t:tactic`) is written against its name.
    if (t === ":" && ts.starts[k] !== ts.ends[prev] && tokenText(ts, next(ts, k)) === "tactic") return word;
  }
  return undefined;
}

/** The tactics the workspace's own `.lean` files declare (dependencies and dot folders skipped). */
export function workspaceTactics(root: string): Set<string> {
  const words = new Set<string>();
  let files = 0;
  const walk = (dir: string): void => {
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      return; // An unreadable folder adds no words: the refusal stays fail-closed.
    }
    for (const name of names) {
      if (files >= MAX_FILES) return;
      if (name.startsWith(".") || name === "node_modules") continue;
      const path = join(dir, name);
      let stat;
      try {
        stat = statSync(path);
      } catch {
        continue;
      }
      if (stat.isDirectory()) walk(path);
      else if (name.endsWith(".lean") && stat.size <= MAX_FILE_BYTES) {
        files++;
        try {
          const text = readFileSync(path, "utf8");
          // Most files declare no syntax: only those that name the category are lexed.
          if (/:\s*tactic\b/.test(text)) for (const word of declaredTactics(text)) words.add(word);
        } catch {
          // An unreadable file adds no words.
        }
      }
    }
  };
  walk(root);
  return words;
}
