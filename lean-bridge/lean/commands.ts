/**
 * Splits a Lean file into top-level commands and reads the shape of each declaration: its modifiers, name
 * (fully qualified through `namespace`s), statement, and whether its body is a tactic block, a term,
 * equations or a `where` structure. Lean itself ends a command where the next command keyword begins; like
 * every Lean tool that works on text, we take a command keyword at column 0 as that boundary.
 */
import { BODY_CONTINUATIONS, DECLARATION_KEYWORDS, MODIFIERS, OTHER_COMMANDS } from "./commandWords";
import { lex } from "./lexer";
import { firstAtOrAfter, indexTokens, type TokenIndex } from "./tokenIndex";
import { TokenKind, bracketDelta, isCommentKind, tokenIs, tokenText, type TokenStream } from "./tokens";

/**
 * The open scopes that `end` closes (namespaces, sections, and `mutual` blocks, which add no namespace),
 * with their dotted namespace prefix kept current.
 */
type Scope = { kind: "namespace" | "section" | "mutual"; name: string };
type Scopes = Scope[] & { prefix: string };

export type BodyKind = "tactic" | "term" | "equations" | "where" | "none";

export interface Declaration {
  keyword: string;
  /** The name as written (undefined for `example` and anonymous instances). */
  name: string | undefined;
  /** The name with the enclosing namespaces, `_root_` resolved; undefined when anonymous. */
  fullName: string | undefined;
  /** The enclosing namespaces, dotted ("" at the top level): the prefix Lean gives a name declared here. */
  namespace: string;
  modifiers: string[];
  /** Offsets: the whole command (doc comment and attributes included). */
  start: number;
  end: number;
  /** Offset of the declaration keyword. */
  keywordStart: number;
  /** The text from the keyword up to (not including) the top-level `:=`; the whole header if none. */
  statement: string;
  bodyKind: BodyKind;
  /** For tactic bodies: the offset of `by` and of the end of the tactic block (before `termination_by`, `where`…). */
  byStart?: number;
  byEnd?: number;
  /** For tactic and term bodies: where the body begins (after `:=`). */
  bodyStart?: number;
  /** Token indices of the command in the file's token stream. */
  firstToken: number;
  lastToken: number;
}

export interface Command {
  kind: "declaration" | "other";
  start: number;
  end: number;
  firstToken: number;
  lastToken: number;
  /** The command's leading keyword (modifiers and attributes skipped). */
  keyword: string;
  declaration?: Declaration;
}

export interface ParsedFile {
  tokens: TokenStream;
  commands: Command[];
  /** Module names after `import`. */
  imports: string[];
  /** The text of the header: everything up to the end of the last `import` (or of `prelude`/`module`). */
  headerEnd: number;
}

/** Whether the file starts with a `module` header (the module system). */
export function isModuleFile(file: ParsedFile): boolean {
  return file.commands.some((c) => c.keyword === "module" && c.end <= file.headerEnd);
}

/** Whether token i, which starts its line (`startsLine`), begins a command. */
function isCommandStart(ts: TokenStream, i: number): boolean {
  const kind = ts.kinds[i];
  if (kind === TokenKind.DocComment) return true;
  if (kind === TokenKind.Symbol) return tokenText(ts, i) === "@[";
  if (kind !== TokenKind.Ident && !(kind === TokenKind.Symbol)) {
    return false;
  }
  const word = tokenText(ts, i);
  return DECLARATION_KEYWORDS.has(word) || MODIFIERS.has(word) || OTHER_COMMANDS.has(word);
}

/** Whether token i, which starts its line (`startsLine`), begins a `#` command. */
function isHashCommand(ts: TokenStream, i: number): boolean {
  // `#print` lexes as `#` then `print`.
  if (ts.kinds[i] !== TokenKind.Symbol) return false;
  return (
    ts.text.charCodeAt(ts.starts[i] ?? 0) === 35 &&
    ts.kinds[i + 1] === TokenKind.Ident &&
    ts.starts[i + 1] === ts.ends[i]
  );
}

/** Index of the next token that is not a comment, or `limit`. */
function nextCode(ts: TokenStream, i: number, limit: number): number {
  while (i < limit && isCommentKind(ts.kinds[i] ?? 0)) i++;
  return i;
}

function prevCode(ts: TokenStream, i: number, floor: number): number {
  while (i >= floor && isCommentKind(ts.kinds[i] ?? 0)) i--;
  return i;
}

function wordAt(ts: TokenStream, i: number): string {
  return i < ts.count ? tokenText(ts, i) : "";
}

export function parseFile(text: string, tokens: TokenStream = lex(text)): ParsedFile {
  const ts = tokens;
  const index = indexTokens(ts);
  const starts: number[] = [];
  // Commands begin only where a line starts: the index lists those tokens.
  for (const i of index.lineStarts) if (isCommandStart(ts, i) || isHashCommand(ts, i)) starts.push(i);
  // Anything before the first command start (header comments) is not a command.
  const commands: Command[] = [];
  const scopes: Scopes = Object.assign([], { prefix: "" });
  const imports: string[] = [];
  let headerEnd = 0;
  let pendingIn = -1;
  for (let s = 0; s < starts.length; s++) {
    const first = pendingIn >= 0 ? pendingIn : (starts[s] ?? 0);
    const limit = s + 1 < starts.length ? (starts[s + 1] ?? ts.count) : ts.count;
    const last = prevCode(ts, limit - 1, first);
    const keywordAt = firstKeywordIndex(ts, starts[s] ?? first, last);
    // A doc comment, attributes or modifiers on lines of their own belong to the command that follows.
    if ((last < first || keywordAt > last) && s + 1 < starts.length) {
      if (pendingIn < 0) pendingIn = first;
      continue;
    }
    if (last < first) continue;
    // `set_option … in` and `open … in` prefix the next command.
    if (tokenIs(ts, last, "in") && s + 1 < starts.length && !isDeclarationLike(ts, first, last)) {
      pendingIn = first;
      continue;
    }
    pendingIn = -1;
    const command = readCommand(ts, index, first, last, scopes, keywordAt);
    // A tactic proof ends at a command our lists do not know (`alias`, `irreducible_def`, `seal`, …): that
    // text is a command of its own, never part of the declaration Lean's range ends before.
    const cut = command.declaration?.lastToken;
    if (cut !== undefined && cut < last) {
      command.lastToken = cut;
      command.end = command.declaration!.end;
      commands.push(command);
      const rest = nextCode(ts, cut + 1, last + 1);
      if (tokenIs(ts, last, "in") && s + 1 < starts.length) pendingIn = rest;
      else commands.push(readCommand(ts, index, rest, last, scopes, firstKeywordIndex(ts, rest, last)));
      continue;
    }
    if (command.keyword === "import") {
      const module = wordAt(ts, nextCode(ts, firstKeywordIndex(ts, first, last) + 1, last + 1));
      if (module) imports.push(module);
      headerEnd = command.end;
    } else if ((command.keyword === "prelude" || command.keyword === "module") && commands.length === 0) {
      headerEnd = command.end;
    }
    commands.push(command);
  }
  return { tokens: ts, commands, imports, headerEnd };
}

function isDeclarationLike(ts: TokenStream, first: number, last: number): boolean {
  return DECLARATION_KEYWORDS.has(wordAt(ts, firstKeywordIndex(ts, first, last)));
}

/** Skips doc comments, `@[…]` attributes and modifiers; returns the index of the command keyword. */
function firstKeywordIndex(ts: TokenStream, first: number, last: number): number {
  let i = first;
  while (i <= last) {
    const kind = ts.kinds[i];
    if (isCommentKind(kind ?? 0)) {
      i++;
      continue;
    }
    // Token kinds first: only a symbol can be `@[`, only a name a modifier (no string made for the rest).
    if (kind === TokenKind.Symbol && tokenIs(ts, i, "@[")) {
      let depth = 0;
      for (; i <= last; i++) {
        depth += bracketDelta(ts, i);
        if (depth === 0) break;
      }
      i++;
      continue;
    }
    if (kind !== TokenKind.Ident) return i;
    const word = tokenText(ts, i);
    if (MODIFIERS.has(word) && !DECLARATION_KEYWORDS.has(word)) {
      // `local notation`, `scoped instance`: modifiers too.
      i++;
      continue;
    }
    return i;
  }
  return last + 1;
}

function readCommand(
  ts: TokenStream,
  index: TokenIndex,
  first: number,
  last: number,
  scopes: Scopes,
  /** `firstKeywordIndex` from the command's first line start. */
  keywordAt: number,
): Command {
  const k = Math.min(keywordAt, last);
  const word = wordAt(ts, k);
  const keyword = word === "#" ? "#" + wordAt(ts, k + 1) : word;
  const start = ts.starts[first] ?? 0;
  const end = ts.ends[last] ?? 0;
  if (keyword === "namespace" || keyword === "section") {
    const name = k + 1 <= last ? wordAt(ts, k + 1) : "";
    scopes.push({ kind: keyword, name });
    scopes.prefix = namespacePrefix(scopes);
  } else if (keyword === "mutual") {
    scopes.push({ kind: "mutual", name: "" });
  } else if (keyword === "end") {
    scopes.pop();
    scopes.prefix = namespacePrefix(scopes);
  }
  if (!DECLARATION_KEYWORDS.has(keyword))
    return { kind: "other", start, end, firstToken: first, lastToken: last, keyword };
  const modifiers: string[] = [];
  // Modifiers are identifiers: other tokens (doc comments, attributes) need no string made and looked up.
  for (let i = first; i < k; i++)
    if (ts.kinds[i] === TokenKind.Ident && MODIFIERS.has(wordAt(ts, i))) modifiers.push(wordAt(ts, i));
  const declaration = readDeclaration(ts, index, first, last, k, keyword, modifiers, scopes);
  return { kind: "declaration", start, end, firstToken: first, lastToken: last, keyword, declaration };
}

/** The enclosing namespaces joined by dots. */
function namespacePrefix(scopes: Scope[]): string {
  return scopes
    .filter((s) => s.kind === "namespace" && s.name)
    .map((s) => s.name)
    .join(".");
}

/** Whether token i opens `(priority := …)`, the only parenthesis allowed between `instance` and its name. */
export function isNamedPriority(ts: TokenStream, i: number, last: number): boolean {
  return wordAt(ts, i) === "(" && wordAt(ts, nextCode(ts, i + 1, last + 1)) === "priority";
}

function readDeclaration(
  ts: TokenStream,
  index: TokenIndex,
  first: number,
  lastOfCommand: number,
  k: number,
  keyword: string,
  modifiers: string[],
  scopes: Scopes,
): Declaration {
  let last = lastOfCommand;
  let i = nextCode(ts, k + 1, last + 1);
  let name: string | undefined;
  if (keyword !== "example") {
    if (keyword === "instance" && isNamedPriority(ts, i, last)) {
      // `instance (priority := low) name : …` (Lean's `optNamedPrio`; any other `(` opens a binder)
      let depth = 0;
      for (; i <= last; i++) {
        depth += bracketDelta(ts, i);
        if (depth === 0) break;
      }
      i = nextCode(ts, i + 1, last + 1);
    }
    if (ts.kinds[i] === TokenKind.Ident && i <= last) {
      const after = keyword === "instance" ? wordAt(ts, nextCode(ts, i + 1, last + 1)) : "";
      const anonymousInstance =
        keyword === "instance" &&
        !(
          after === ":" ||
          after === "(" ||
          after === "[" ||
          after === "{" ||
          after === "⦃" ||
          after === ":=" ||
          after === "where"
        );
      if (!anonymousInstance) {
        name = tokenText(ts, i);
        i++;
      }
    }
  }
  let fullName: string | undefined;
  if (name !== undefined) {
    const prefix = scopes.prefix;
    fullName = name.startsWith("_root_.") ? name.slice(7) : prefix ? `${prefix}.${name}` : name;
  }
  // Find the top-level `:=`, `|` (equations) or `where`: the index lists every such token, whatever its
  // depth, so only they need a look (statements are over half of all tokens).
  const { depthBefore, statementEnds } = index;
  const depthAtStatement = depthBefore[i] ?? 0;
  let assign = -1;
  let bodyKind: BodyKind = "none";
  for (let p = firstAtOrAfter(statementEnds, i); p < statementEnds.length; p++) {
    const j = statementEnds[p]!;
    if (j > last) break;
    if (depthBefore[j + 1] !== depthAtStatement) continue;
    const c = ts.text.charCodeAt(ts.starts[j] ?? 0);
    if (c === 58) assign = j;
    else bodyKind = c === 124 ? "equations" : "where";
    break;
  }
  const keywordStart = ts.starts[k] ?? 0;
  const statementEnd = assign >= 0 ? (ts.starts[assign] ?? 0) : (ts.ends[last] ?? 0);
  const declaration: Declaration = {
    keyword,
    name,
    fullName,
    namespace: scopes.prefix,
    modifiers,
    start: ts.starts[first] ?? 0,
    end: ts.ends[last] ?? 0,
    keywordStart,
    statement: ts.text.slice(keywordStart, statementEnd).trimEnd(),
    bodyKind,
    firstToken: first,
    lastToken: last,
  };
  if (assign < 0) return declaration;
  const b = nextCode(ts, assign + 1, last + 1);
  declaration.bodyStart = ts.starts[b] ?? declaration.end;
  if (!tokenIs(ts, b, "by") || b > last) {
    declaration.bodyKind = "term";
    return declaration;
  }
  declaration.bodyKind = "tactic";
  declaration.byStart = ts.starts[b] ?? 0;
  const foreign = foreignCommandStart(ts, index, b, last);
  if (foreign !== undefined) {
    last = prevCode(ts, foreign - 1, b);
    declaration.lastToken = last;
    declaration.end = ts.ends[last] ?? declaration.end;
  }
  // The tactic block ends before a top-level `termination_by`, `decreasing_by` or `where` that comes first
  // on its line: only line-first tokens need a look.
  let end = last;
  const depthAtBy = depthBefore[b + 1];
  const { lineFirsts } = index;
  for (let p = firstAtOrAfter(lineFirsts, b + 1); p < lineFirsts.length; p++) {
    const j = lineFirsts[p]!;
    if (j > last) break;
    if (depthBefore[j + 1] !== depthAtBy || ts.kinds[j] !== TokenKind.Ident) continue;
    const isWhere = tokenIs(ts, j, "where");
    if (isWhere || tokenIs(ts, j, "termination_by") || tokenIs(ts, j, "decreasing_by")) {
      end = prevCode(ts, j - 1, b);
      declaration.bodyKind = isWhere ? "where" : "tactic";
      break;
    }
  }
  declaration.byEnd = ts.ends[end] ?? declaration.end;
  return declaration;
}

/**
 * The first word at column 0 after a tactic block (whose tactics stand right of column 0) that cannot
 * continue the declaration: Lean's tactic block takes only tokens at or right of its first tactic's column
 * (`many1Indent`, `checkColGe`), so such a word begins the next command, one our keyword lists do not know
 * (Mathlib's `alias`, `irreducible_def`, core's `seal`, …). Undefined when there is none.
 */
function foreignCommandStart(
  ts: TokenStream,
  index: TokenIndex,
  by: number,
  last: number,
): number | undefined {
  const firstTactic = nextCode(ts, by + 1, last + 1);
  if (firstTactic > last || (ts.lineFirst[firstTactic] === 1 && ts.cols[firstTactic] === 0)) return undefined;
  // Only tokens that start a line can begin a command: the index lists them.
  const { depthBefore, lineStarts } = index;
  const depthAtBy = depthBefore[by + 1];
  for (let p = firstAtOrAfter(lineStarts, by + 1); p < lineStarts.length; p++) {
    const j = lineStarts[p]!;
    if (j > last) break;
    if (depthBefore[j + 1] !== depthAtBy || ts.kinds[j] !== TokenKind.Ident) continue;
    if (!BODY_CONTINUATIONS.has(tokenText(ts, j))) return j;
  }
  return undefined;
}
