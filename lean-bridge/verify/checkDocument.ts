/**
 * Builds the document Lean checks for one candidate: the file up to the end of the hole's declaration
 * (later declarations dropped), with only the hole replaced by the candidate re-indented to the hole's
 * column, followed by `#print axioms` for the declaration. Then re-reads the result to prove that the
 * candidate changed nothing outside the hole: the same statement, the same declaration boundaries.
 */
import type { Range } from "vscode-languageserver-protocol";
import { isCommandKeyword } from "../lean/commandWords";
import {
  isModuleFile,
  isNamedPriority,
  parseFile,
  type Declaration,
  type ParsedFile,
} from "../lean/commands";
import { createHash } from "node:crypto";
import { lex } from "../lean/lexer";
import { TokenKind, isCommentKind, tokenText } from "../lean/tokens";
import { LineIndex, leanColumnOf } from "../text/positions";
import { isTermHash, nameInPlace } from "./policyWords";
import { reindent, swallowedByLineComment, withoutTrailingComments } from "./placeCandidate";
import { featuresOfToolchain, moduleFilesUncheckable, type LeanFeatures } from "./toolchain";

/** What the check document needs to know of the Lean that checks it; an unknown toolchain by default. */
const UNKNOWN_LEAN = featuresOfToolchain(undefined);

export interface CheckDocument {
  text: string;
  /** The declaration being checked, as it stands in the original file. */
  declaration: Declaration;
  /** Where the declaration starts in `text` (the file's offset, unless a prefix-import form stands before it). */
  declarationStart: number;
  /** The candidate's span in `text`. */
  candidateStart: number;
  candidateEnd: number;
  /** Columns added to the candidate's lines after the first when it was re-indented. */
  indentShift: number;
  /** The 0-based line of the appended `#print axioms`. */
  axiomsLine: number;
  /**
   * The 0-based line of the appended `#check (type_of% @<name> : Prop)`, which Lean answers without an error
   * only when the declaration's type is a proposition; -1 for `theorem` and `lemma`, whose type Lean itself
   * requires to be one. A hole in a declaration of data (`def answer : Nat := by …`) is not a proof.
   */
  propCheckLine: number;
  /** The hole's column as Lean counts it (code points): where a sentinel tactic of the hole's block goes. */
  holeColumn: number;
  /** Everything before the candidate: documents that share it share Lean's snapshots. */
  prefix: string;
  /**
   * Where the declaration's last code token ends in `text`: Lean's range of the declaration must reach it,
   * or something the candidate wrote ended the declaration early.
   */
  declarationEnd: number;
  /** The last line of the file's header (imports, `module`, `prelude`); -1 when there is none. */
  headerEndLine: number;
  /** Where the header's first token is (Lean reports import failures there); -1 when there is no header. */
  headerStart: number;
  /**
   * The name the checked declaration has in this document, as written after its keyword: its own name, or
   * the verifier's `fimrlvr_check_<hash>` for `example`s and anonymous instances.
   */
  declaredName: string;
  /**
   * The full name `#print axioms` must report (namespaces included, no `_root_`); for a `private`
   * declaration Lean reports `_private.<Module>.0.<this>`.
   */
  checkedName: string;
  isPrivate: boolean;
  /**
   * In a `module` file a declaration without `public` (or `private`) is private unless a `public section`
   * says otherwise, so `#print axioms` may print either form; the name check accepts both (the name is
   * resolved exactly with `_root_.` either way).
   */
  mayBePrivate: boolean;
  /**
   * Whether Lean's documentSymbol lists the checked declaration: it lists only commands of kind
   * `declaration`, so not one wrapped in `set_option … in` / `open … in` (kind `in`). For those the
   * verifier asks `textDocument/foldingRange` instead (leanView.ts).
   */
  listedBySymbols: boolean;
}

export type BuildResult =
  | { kind: "ok"; doc: CheckDocument }
  | { kind: "bad-hole"; message: string }
  | { kind: "tampered"; message: string };

export interface HoleLocation {
  start: number;
  end: number;
  declaration: Declaration;
  /** The hole's column as Lean counts it (code points), for the layout rule. */
  column: number;
}

/** Resolves an LSP hole range to offsets and its tactic-proof declaration. */
export function locateHole(
  file: ParsedFile,
  index: LineIndex,
  hole: Range,
  features: LeanFeatures = UNKNOWN_LEAN,
): { kind: "ok"; hole: HoleLocation } | { kind: "bad-hole"; message: string } {
  const show = (r: Range) => `${r.start.line}:${r.start.character}-${r.end.line}:${r.end.character}`;
  for (const pos of [hole.start, hole.end]) {
    if (index.isValid(pos)) continue;
    const where =
      pos.line >= index.lineCount
        ? `the file has ${index.lineCount} lines`
        : `line ${pos.line} is shorter than ${pos.character} UTF-16 units`;
    return {
      kind: "bad-hole",
      message: `the hole ${show(hole)} lies outside the file: ${where} (positions are 0-based, characters in UTF-16)`,
    };
  }
  const start = index.offsetAt(hole.start);
  const end = index.offsetAt(hole.end);
  if (end < start) return { kind: "bad-hole", message: `the hole ${show(hole)} ends before it starts` };
  const declaration = file.commands
    .map((c) => c.declaration)
    .find((d) => d && d.start <= start && end <= d.end);
  if (!declaration)
    return { kind: "bad-hole", message: `the hole ${show(hole)} is not inside a declaration` };
  // A tactic proof may be followed by a `where` clause (auxiliary definitions); the hole is in the proof.
  if (
    (declaration.bodyKind !== "tactic" && declaration.bodyKind !== "where") ||
    declaration.byStart === undefined ||
    declaration.byEnd === undefined
  )
    return {
      kind: "bad-hole",
      message: `the hole ${show(hole)} is in '${declaration.name ?? declaration.keyword}', which has no tactic proof`,
    };
  if (start < declaration.byStart + 2 || end > declaration.byEnd)
    return {
      kind: "bad-hole",
      message: `the hole ${show(hole)} is not inside the tactic block of '${declaration.name ?? declaration.keyword}' (after its \`by\`)`,
    };
  // Where this Lean is known to refuse `#print axioms` in a module, say so before any check; where it is
  // not known, Lean is asked and its refusal, if any, is the verdict's reason (classify.ts).
  if (isModuleFile(file) && features.printAxiomsInModule === "no")
    return {
      kind: "bad-hole",
      message: `the file has a \`module\` header and ${moduleFilesUncheckable(features) ?? ""}`,
    };
  return { kind: "ok", hole: { start, end, declaration, column: leanColumnOf(file.tokens.text, start) } };
}

/** Whether the declaration is wrapped in `… in` (`set_option … in`, `open … in`), which Lean parses as one `in` command. */
export function wrappedInIn(file: ParsedFile, decl: Declaration): boolean {
  const ts = file.tokens;
  for (let i = decl.firstToken; i <= decl.lastToken && (ts.starts[i] ?? 0) < decl.keywordStart; i++)
    if (ts.kinds[i] === TokenKind.Ident && tokenText(ts, i) === "in") return true;
  return false;
}

function lineBreaks(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

/** Keywords whose declarations Lean itself requires to have a proposition as type. */
const PROP_BY_LEAN = new Set(["theorem", "lemma"]);

/** The name the verifier gives an anonymous declaration: fixed by its statement and place, so it is cacheable. */
export function checkName(decl: Declaration): string {
  const hash = createHash("sha256").update(`${decl.start}\0${decl.statement}`).digest("hex");
  return `fimrlvr_check_${hash.slice(0, 12)}`;
}

/**
 * The declaration's head as written in the check document: `example` becomes a named `def` (noncomputable
 * unless it says so already or cannot be, so a data-valued example still elaborates without compiling),
 * an anonymous `instance` gets a name after its priority, and Mathlib's `lemma` becomes `theorem`, which is
 * exactly what its macro does (Mathlib/Tactic/Lemma.lean, `expandLemma`: the `lemma` atom replaced by
 * `theorem`, the node's kind set to `declaration`) and what Lean's documentSymbol lists; everything else is
 * byte-identical. `renamed`: the declaration now has the verifier's name.
 */
function namedHead(
  decl: Declaration,
  name: string,
): { from: number; to: number; text: string; renamed: boolean } | undefined {
  if (decl.keyword === "lemma")
    return {
      from: decl.keywordStart,
      to: decl.keywordStart + "lemma".length,
      text: "theorem",
      renamed: false,
    };
  if (decl.name !== undefined) return undefined;
  if (decl.keyword === "example") {
    const keepComputable = decl.modifiers.some((m) =>
      ["noncomputable", "unsafe", "partial", "nonrec"].includes(m),
    );
    return {
      from: decl.keywordStart,
      to: decl.keywordStart + "example".length,
      text: `${keepComputable ? "" : "noncomputable "}def ${name}`,
      renamed: true,
    };
  }
  if (decl.keyword !== "instance") return undefined;
  // `instance (priority := p) : C` takes its name after the priority; `instance (A : X) : C`, right
  // after the keyword (any other `(` opens a binder).
  const ts = lex(decl.statement);
  let after = "instance".length;
  let k = 1;
  while (k < ts.count && ts.kinds[k] !== undefined && isCommentKind(ts.kinds[k] ?? 0)) k++;
  if (isNamedPriority(ts, k, ts.count - 1)) {
    let depth = 0;
    for (; k < ts.count; k++) {
      const t = tokenText(ts, k);
      if (t === "(") depth++;
      else if (t === ")" && --depth === 0) break;
    }
    after = ts.ends[k] ?? after;
  }
  const at = decl.keywordStart + after;
  return { from: at, to: at, text: ` ${name}`, renamed: true };
}

/**
 * The `defProp` linter (Lean 4.31 on; on by default from 4.32) warns on a `def` whose type is a
 * proposition, which is what a renamed Prop `example` is. Only a warning, but an error in a workspace that
 * sets `warningAsError`, so it is switched off for the check, as a command of its own before the
 * declaration (an `… in` prefix would hide the declaration from documentSymbol). Only where the option
 * exists: setting an option Lean does not know is an error.
 */
const SILENCE_DEF_PROP = "set_option linter.defProp false\n";

/** What precedes the declaration's name on the appended line. */
export const PRINT_AXIOMS_PREFIX = "set_option pp.fullNames true in #print axioms ";

export function buildCheckDocument(
  file: ParsedFile,
  hole: HoleLocation,
  candidate: string,
  features: LeanFeatures = UNKNOWN_LEAN,
  /**
   * What stands before the declaration instead of the file's text: the prefix-import form's blanked text
   * (prefixForm.ts), with the same lines, so every line stays the file's. The file's own text when absent.
   */
  blankedBefore?: string,
): BuildResult {
  const source = file.tokens.text;
  const decl = hole.declaration;
  const { text: reindented, shift } = reindent(candidate, hole.column);
  const placed = withoutTrailingComments(reindented);
  if (placed === undefined)
    return {
      kind: "tampered",
      message:
        "the candidate ends with a doc comment (`/-- … -/` or `/-! … -/`), which Lean reads as the start of the next command, so the file would not hold what was checked; remove it or use `--` / `/- … -/`",
    };
  const swallowed = swallowedByLineComment(reindented, source, hole.end);
  if (swallowed !== undefined)
    return {
      kind: "tampered",
      message: `the candidate ends with a line comment and the hole ends mid-line: in the file the comment would swallow the rest of the line (\`${swallowed}\`), which the check would not see; remove the comment or write it as \`/- … -/\``,
    };
  const given = checkName(decl);
  const head = namedHead(decl, given);
  const renamed = head?.renamed === true;
  const declaredName = renamed ? given : (decl.name ?? given);
  const silence = decl.keyword === "example" && features.defPropOption === "yes" ? SILENCE_DEF_PROP : "";
  // The statement as the re-parse will read it: from the keyword on (a modifier we added is not part of it).
  const statement = head
    ? decl.statement.slice(0, head.from - decl.keywordStart) +
      head.text.replace(/^noncomputable /, "") +
      decl.statement.slice(head.to - decl.keywordStart)
    : decl.statement;
  if (blankedBefore !== undefined && lineBreaks(blankedBefore) !== lineBreaks(source.slice(0, decl.start)))
    throw new Error("a prefix-import form must have exactly the lines of the text it stands for");
  const before = (blankedBefore ?? source.slice(0, decl.start)) + silence;
  const prefix = head
    ? before + source.slice(decl.start, head.from) + head.text + source.slice(head.to, hole.start)
    : before + source.slice(decl.start, hole.start);
  const suffix = source.slice(hole.end, decl.end);
  const checkedName = renamed
    ? decl.namespace
      ? `${decl.namespace}.${given}`
      : given
    : (decl.fullName ?? given);
  let text = prefix + placed + suffix + "\n";
  let propCheckLine = -1;
  if (!PROP_BY_LEAN.has(decl.keyword)) {
    // `type_of% @c` (a core term, src/Lean/Parser/Term.lean) is the type of the constant with every argument
    // explicit; it has type Prop exactly when the declaration states a proposition (a ∀ over data whose body
    // is a Prop is itself a Prop). Lean answers with the type, or with an error for data.
    propCheckLine = new LineIndex(text).lineCount;
    text += `\n#check (type_of% @_root_.${checkedName} : Prop)\n`;
  }
  const axiomsLine = new LineIndex(text).lineCount; // The line after the trailing newline's line.
  // `_root_.` makes Lean resolve exactly this name, never a namesake in an open namespace; `pp.fullNames`
  // makes it print axiom names in full, which `open` would otherwise shorten (`choice` for
  // `Classical.choice` under `open Classical`: Print.lean prints them with `MessageData.ofConstName`). One
  // line, so Lean's answer stays on `axiomsLine`; the option exists in every version.
  text += `\n${PRINT_AXIOMS_PREFIX}_root_.${checkedName}\n`;
  const module = isModuleFile(file);
  const doc: CheckDocument = {
    text,
    declaration: decl,
    declarationStart: before.length,
    candidateStart: prefix.length,
    candidateEnd: prefix.length + placed.length,
    declarationEnd: prefix.length + placed.length + (suffix.trim() === "" ? 0 : suffix.length),
    indentShift: shift,
    axiomsLine,
    propCheckLine,
    holeColumn: hole.column,
    prefix,
    headerEndLine: file.headerEnd > 0 ? new LineIndex(source).positionAt(file.headerEnd).line : -1,
    headerStart: file.headerEnd > 0 ? (file.commands[0]?.start ?? -1) : -1,
    declaredName,
    checkedName,
    isPrivate: decl.modifiers.includes("private"),
    mayBePrivate: module && !decl.modifiers.includes("public"),
    listedBySymbols: !wrappedInIn(file, decl),
  };
  const tamper = findTampering(doc, suffix, statement);
  return tamper ? { kind: "tampered", message: tamper } : { kind: "ok", doc };
}

/**
 * The check document with the declaration's whole body replaced by the term `sorry`, and nothing of the candidate
 * left: what the kernel gate compiles, without the candidate, to learn the statement the file states. The body
 * goes whole, not only the hole, since a hole cut mid-tactic (`subst h` in `subst h; trivial`) with `sorry` in it
 * leaves the rest of the block with no goal, an error, and no module. Undefined where the document does not read
 * as one declaration with a body around the candidate.
 */
export function statementReference(doc: CheckDocument): string | undefined {
  const base = doc.declarationStart;
  const decl = parseFile(doc.text.slice(base)).commands[0]?.declaration;
  if (decl?.bodyStart === undefined) return undefined;
  const bodyStart = base + decl.bodyStart;
  if (bodyStart > doc.candidateStart || doc.declarationEnd < doc.candidateEnd) return undefined;
  return doc.text.slice(0, bodyStart) + "sorry" + doc.text.slice(doc.declarationEnd);
}

/** Re-reads the check document; the declaration must start, be stated and end exactly as in the file. */
function findTampering(doc: CheckDocument, suffix: string, statement: string): string | undefined {
  // Everything before the declaration is the file's own text, so only the declaration onwards is read
  // again: the cost of a check does not grow with the number of declarations above it.
  const base = doc.declarationStart;
  const reparsed = parseFile(doc.text.slice(base));
  const candidateStart = doc.candidateStart - base;
  const candidateEnd = doc.candidateEnd - base;
  // Lean starts a new command at a command keyword whatever its column, so none may stand in the candidate.
  const ts = reparsed.tokens;
  for (let i = 0; i < ts.count; i++) {
    const start = ts.starts[i] ?? 0;
    const end = ts.ends[i] ?? 0;
    // The policy read the candidate alone: a token that runs across the hole's edge (`sor` + `ry⟩`, a `-`
    // before the file's `-`) is one the policy never saw, so the candidate's tokens must be Lean's.
    if ((start < candidateStart && end > candidateStart) || (start < candidateEnd && end > candidateEnd))
      return `the candidate runs into the file's text at the hole's edge (\`${tokenText(ts, i)}\` would be one token), so Lean would read a token the policy did not check`;
    if (start < candidateStart) continue;
    if (start >= candidateEnd) break;
    const word = tokenText(ts, i);
    const hash =
      word === "#" &&
      ts.kinds[i + 1] === TokenKind.Ident &&
      ts.starts[i + 1] === ts.ends[i] &&
      !isTermHash(ts, i);
    const command =
      ts.kinds[i] === TokenKind.Ident && isCommandKeyword(word) && !(word === "lemma" && nameInPlace(ts, i));
    if (command || hash)
      return `the candidate contains the command \`${hash ? "#" + tokenText(ts, i + 1) : word}\`, which would end the declaration`;
  }
  const decl = reparsed.commands[0]?.declaration;
  if (!decl || reparsed.commands[0]?.start !== 0)
    return "the declaration no longer parses as one declaration";
  if (decl.statement !== statement) return "the candidate changes the theorem statement";
  if (decl.end !== candidateEnd + suffix.length && !(suffix.trim() === "" && decl.end <= candidateEnd))
    return "the candidate ends the declaration early or continues past it";
  // `where`, `termination_by` or `decreasing_by` in the candidate would end the tactic block inside it.
  if (decl.byEnd !== undefined && decl.byEnd < candidateEnd)
    return "the candidate ends the tactic block early (with `where`, `termination_by` or `decreasing_by`)";
  if (decl.bodyKind !== doc.declaration.bodyKind)
    return "the candidate turns the tactic proof into something else (or adds or removes a `where` clause)";
  return undefined;
}
