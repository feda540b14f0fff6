/**
 * The simulator's "elaborator": it judges one command at a time and returns diagnostics shaped like Lean's
 * (same fields, ranges cut to a line with `fullRange` kept, `leanTags [1]` on unsolved goals, the sorry
 * warning, `#print axioms` output). It accepts a proof only when it matches a reference proof token for
 * token; that is the whole of its logic, and every message it makes up says "simulator".
 */
import { isModuleFile, type Command, type Declaration, type ParsedFile } from "../lean/commands";
import { bracketDelta, isCommentKind, tokenText, type TokenStream } from "../lean/tokens";
import type { LeanDiagnostic } from "../protocol/lean";
import { LeanDiagnosticTag } from "../protocol/lean";
import type { LineIndex } from "../text/positions";
import { sameUpToIntroducedNames } from "./binderNames";
import type { ReferenceIndex } from "./reference";
import { MODULE_AXIOMS_REFUSAL, defPropWarning, sorryWarningText, type SimulatedLean } from "./leanVersion";

import {
  SIMULATOR_SOURCE,
  codeIndices,
  danglingAfterSorry,
  diag,
  goalOf,
  prevCode,
  referenceWithoutNoops,
  tokenIndexAt,
  withoutNoopSteps,
  withoutOptionScopes,
  withoutParenBlocks,
} from "./tacticText";

export { SIMULATOR_SOURCE, goalOf };

export interface JudgedDeclaration {
  ok: boolean;
  usesSorry: boolean;
  /** A `private` declaration: Lean names it `_private.<Module>.0.<full name>`. */
  isPrivate?: boolean;
  /** Its proof runs compiled code (`native_decide`, `bv_decide`, `decide +native`). */
  native?: string;
  /** Its full name, and the declarations judged before it that its proof cites (their axioms are its too). */
  fullName?: string;
  cites?: string[];
  /** Its type is data, not a proposition (`def answer : Nat`), as far as the simulator can tell. */
  isData?: boolean;
}

/**
 * Type heads the simulator takes for data. Lean knows every type; the simulator only reads the statement,
 * so it knows the core data types and takes any other type for a proposition (an instance's class aside, below).
 */
const DATA_TYPE_HEADS = new Set([
  "Nat",
  "Int",
  "String",
  "Bool",
  "Char",
  "Float",
  "List",
  "Array",
  "Option",
  "Fin",
  "Type",
  "Sort",
  "Decidable",
]);

/**
 * Classes whose instances are proofs (their type is a `Prop`). Every other class is taken for data, as most are
 * (`Inhabited`, `Add`, `BEq`: structures in `Type`): an instance of an unknown class is then refused as not a
 * proposition, never paid for any value of its type.
 */
const PROP_CLASS_HEADS = new Set(["Nonempty", "Subsingleton", "Fact", "Nontrivial", "IsEmpty"]);

/**
 * Whether a declaration's type is data as far as the simulator can tell: it starts with a core data type, or the
 * declaration is an instance of a class not known to be a proposition.
 */
function statesData(ts: TokenStream, decl: Declaration): boolean {
  const head = typeHead(ts, decl);
  if (head !== undefined && DATA_TYPE_HEADS.has(head)) return true;
  return decl.keyword === "instance" && !(head !== undefined && PROP_CLASS_HEADS.has(head));
}

/** The first token of a declaration's type (after its top-level `:`), if it has one. */
function typeHead(ts: TokenStream, decl: Declaration): string | undefined {
  const first = tokenIndexAt(ts, decl.keywordStart, decl.firstToken, decl.lastToken);
  const statementEnd = decl.keywordStart + decl.statement.length;
  let depth = 0;
  for (let i = first + 1; i <= decl.lastToken && (ts.starts[i] ?? 0) < statementEnd; i++) {
    depth += bracketDelta(ts, i);
    if (depth === 0 && tokenText(ts, i) === ":") {
      let k = i + 1;
      while (k <= decl.lastToken && isCommentKind(ts.kinds[k] ?? 0)) k++;
      return tokenText(ts, k);
    }
  }
  return undefined;
}

/** The prefix the verifier gives anonymous declarations it renames (lean-bridge/verify/checkDocument.ts). */
const CHECK_NAME_PREFIX = "fimrlvr_check_";

/**
 * The statement the workspace wrote, for finding reference proofs: the verifier checks an `example` as
 * `def fimrlvr_check_<hash>` and an anonymous instance as `instance fimrlvr_check_<hash>`; both are the
 * workspace's declaration under a verifier-chosen name.
 */
export function referenceStatement(decl: Declaration): string {
  if (!decl.name?.startsWith(CHECK_NAME_PREFIX)) return decl.statement;
  const named = new RegExp(`^(def|instance)(\\s*(?:\\([^)]*\\))?)\\s+${decl.name}\\b`);
  return decl.statement.replace(named, (_all, keyword: string, priority: string) =>
    keyword === "def" ? `example${priority}` : `instance${priority}`,
  );
}

export interface JudgeContext {
  file: ParsedFile;
  index: LineIndex;
  reference: ReferenceIndex;
  /** Results of declarations judged so far in this document, by full and short name. */
  judged: Map<string, JudgedDeclaration>;
  /** What the command being judged added to `judged` (kept so a reused command can replay it). */
  recorded: [string, JudgedDeclaration][];
  /** The document's module name, as Lean derives it from the file's path (for private names). */
  moduleName: string;
  /** The Lean version played, with its behaviours. */
  lean: SimulatedLean;
}

/** The text of the commands before `command` that start with `keyword`. */
function earlierCommands(file: ParsedFile, command: Command, keyword: string): string[] {
  return file.commands
    .filter((c) => c.start < command.start && c.keyword === keyword)
    .map((c) => file.tokens.text.slice(c.start, c.end));
}

/**
 * Private by Lean's rules: `private`, or in a `module` file anything not `public` outside a `public section`
 * (the module system makes declarations private by default).
 */
function isPrivateDecl(file: ParsedFile, command: Command, decl: Declaration): boolean {
  if (decl.modifiers.includes("private")) return true;
  if (!isModuleFile(file) || decl.modifiers.includes("public")) return false;
  return !earlierCommands(file, command, "section").some(
    (t) => /^public\s/.test(t) || /^@\[[^\]]*\]\s*public\s/.test(t),
  );
}

/** Tactics that prove by compiled code, and the name Lean 4.29+ gives the axiom of each computation. */
const NATIVE_TACTICS = ["native_decide", "bv_decide"];

function nativeTactic(bodyTexts: string[]): string | undefined {
  const found = NATIVE_TACTICS.find((t) => bodyTexts.includes(t));
  if (found) return found;
  const d = bodyTexts.indexOf("decide");
  return d >= 0 && bodyTexts[d + 1] === "+" && bodyTexts[d + 2] === "native" ? "native_decide" : undefined;
}

/** A Prop-looking type, for the `defProp` linter (the simulator has no types: it reads the statement). */
function looksLikeProp(statement: string): boolean {
  const colon = statement.lastIndexOf(" : ");
  const type = colon >= 0 ? statement.slice(colon + 3) : statement;
  return /[=≤<≥>≠∧∨¬→↔∀∃]|\bTrue\b|\bFalse\b/.test(type);
}

function judgeDeclaration(ctx: JudgeContext, command: Command, decl: Declaration): LeanDiagnostic[] {
  const { file, index, reference } = ctx;
  const ts = file.tokens;
  const isPrivate = isPrivateDecl(file, command, decl);
  const isData = statesData(ts, decl);
  const record = (judged: JudgedDeclaration) => {
    const result = { ...judged, ...(isPrivate ? { isPrivate } : {}), ...(isData ? { isData } : {}) };
    for (const name of [decl.fullName, decl.name]) {
      if (!name) continue;
      ctx.judged.set(name, result);
      ctx.recorded.push([name, result]);
    }
  };
  if (decl.bodyStart === undefined) {
    record({ ok: decl.keyword !== "theorem" && decl.keyword !== "lemma", usesSorry: false });
    return [];
  }
  const bodyFirst = tokenIndexAt(ts, decl.bodyStart, command.firstToken, command.lastToken);
  const nameToken = tokenIndexAt(ts, decl.keywordStart, command.firstToken, command.lastToken);
  const nameAt = decl.name ? nameToken + 1 : nameToken;
  const namePos = {
    start: ts.starts[nameAt] ?? decl.keywordStart,
    end: ts.ends[nameAt] ?? decl.keywordStart,
  };
  const judgeable =
    decl.bodyKind === "tactic" ||
    decl.keyword === "theorem" ||
    decl.keyword === "lemma" ||
    decl.keyword === "example";
  const accepted = reference
    .accepted(referenceStatement(decl), [decl.fullName, decl.name])
    .map(referenceWithoutNoops);
  // A reference as written, or with the names its `intro`s bind chosen differently (binderNames.ts).
  const isAccepted = (texts: string[]) => accepted.some((a) => sameUpToIntroducedNames(a, texts));
  const body = withoutNoopSteps(
    ts,
    withoutOptionScopes(ts, withoutParenBlocks(ts, codeIndices(ts, bodyFirst, command.lastToken))),
    isAccepted,
  );
  const bodyTexts = body.map((i) => tokenText(ts, i));
  if (accepted.length === 0) {
    record({ ok: !judgeable, usesSorry: false });
    if (!judgeable) return [];
    return [
      diag(
        index,
        namePos.start,
        namePos.end,
        1,
        `simulator: no reference proof for '${decl.fullName ?? decl.keyword}' in this workspace or the oracle file; the simulator can only judge known declarations (use Lean for new ones)`,
      ),
    ];
  }
  if (bodyTexts.includes("sorry")) {
    record({ ok: true, usesSorry: true });
    const dangling = danglingAfterSorry(ts, body);
    // src/Lean/AddDecl.lean: no version names the declaration in this warning.
    const warning = diag(index, namePos.start, namePos.end, 2, sorryWarningText(ctx.lean));
    if (dangling === undefined) return [warning];
    // Lean (since lean4#2393) starts an unexpected token's error at the end of the token before it.
    const sorryEnd = ts.ends[prevCode(ts, dangling)] ?? 0;
    const parseError = diag(
      index,
      sorryEnd,
      ts.ends[dangling] ?? sorryEnd,
      1,
      `unexpected token '${tokenText(ts, dangling)}'; expected command`,
    );
    return [parseError, warning];
  }
  if (isAccepted(bodyTexts)) {
    const native = nativeTactic(bodyTexts);
    const cites = [...new Set(bodyTexts.filter((t) => ctx.judged.has(t)))];
    record({
      ok: true,
      usesSorry: false,
      ...(native ? { native } : {}),
      ...(decl.fullName ? { fullName: decl.fullName } : {}),
      ...(cites.length ? { cites } : {}),
    });
    return defPropLint(ctx, command, decl);
  }
  record({ ok: false, usesSorry: false });
  // The reference sharing the longest token prefix decides where the first error sits.
  let best = accepted[0] ?? [];
  let bestShared = -1;
  for (const ref of accepted) {
    let k = 0;
    while (k < ref.length && k < bodyTexts.length && ref[k] === bodyTexts[k]) k++;
    if (k > bestShared) {
      bestShared = k;
      best = ref;
    }
  }
  const atToken = (k: number) => ({ start: ts.starts[body[k] ?? 0] ?? 0, end: ts.ends[body[k] ?? 0] ?? 0 });
  if (bodyTexts[bestShared] === "done" && bestShared < best.length) {
    // Lean's `done` with goals left: one error on itself, tagged, listing them; the goals are admitted
    // and the rest of the block never runs (the verifier's sentinel for measuring goals).
    const { start, end } = atToken(bestShared);
    return [
      diag(index, start, end, 1, `unsolved goals\n${goalOf(ts, decl)}`, {
        leanTags: [LeanDiagnosticTag.unsolvedGoals],
      }),
    ];
  }
  const nestedBy = bodyTexts.lastIndexOf("by", bestShared);
  if (nestedBy > 0 && ts.lines[body[nestedBy] ?? 0] === ts.lines[body[bestShared] ?? 0]) {
    // The step that leaves the references sits in a nested `by` block on the same line (`exact (by skip)`):
    // as Lean does, that block reports its unsolved goals where it opens and is closed with a synthetic sorry.
    const { start, end } = atToken(nestedBy);
    return [
      diag(index, start, end, 1, `unsolved goals\n${goalOf(ts, decl)}`, {
        leanTags: [LeanDiagnosticTag.unsolvedGoals],
      }),
    ];
  }
  if (bestShared === bodyTexts.length && decl.byStart !== undefined) {
    // The candidate stops early: Lean reports unsolved goals on `by`, its full range the whole block.
    return [
      diag(index, decl.byStart, decl.byEnd ?? decl.end, 1, `unsolved goals\n${goalOf(ts, decl)}`, {
        leanTags: [LeanDiagnosticTag.unsolvedGoals],
      }),
    ];
  }
  const at = body[bestShared] ?? body[body.length - 1] ?? nameAt;
  const start = ts.starts[at] ?? 0;
  const end = ts.ends[at] ?? start;
  if (bestShared === best.length) return [diag(index, start, end, 1, "No goals to be solved")];
  return [
    diag(
      index,
      start,
      end,
      1,
      `simulator: this step does not match any reference proof of '${decl.fullName ?? decl.keyword}'`,
    ),
  ];
}

/**
 * The `defProp` linter (src/Lean/Linter/DefProp.lean): a `def` (not an `abbrev`) whose type is a
 * proposition, where the linter is on by default and not switched off by `set_option linter.defProp false`
 * earlier in the document or in an `… in` prefix. Logged at the command.
 */
function defPropLint(ctx: JudgeContext, command: Command, decl: Declaration): LeanDiagnostic[] {
  if (!ctx.lean.defPropOnByDefault || decl.keyword !== "def" || !looksLikeProp(decl.statement)) return [];
  const off = /set_option\s+linter\.defProp\s+false/;
  const prefix = ctx.file.tokens.text.slice(command.start, decl.keywordStart);
  if (off.test(prefix) || earlierCommands(ctx.file, command, "set_option").some((t) => off.test(t)))
    return [];
  const end = Math.min(command.end, command.start + 1);
  return [diag(ctx.index, command.start, end, 2, defPropWarning(decl.fullName ?? decl.name ?? "?"))];
}

/**
 * The native axioms a declaration depends on: its own computation's, and those of the declarations its proof
 * cites, transitively, each named after the declaration that ran it (Lean's `#print axioms` collects them all).
 */
function nativeAxiomsOf(ctx: JudgeContext, name: string, result: JudgedDeclaration): string[] {
  const out = new Set<string>();
  const seen = new Set<JudgedDeclaration>();
  const visit = (at: string, r: JudgedDeclaration) => {
    if (seen.has(r)) return;
    seen.add(r);
    // A private declaration's axioms carry its private name (Lean's `mkUniqueName` keeps the prefix).
    const owner = `${r.isPrivate ? `_private.${ctx.moduleName}.0.` : ""}${r.fullName ?? at}`;
    if (r.native) for (const a of nativeAxioms(ctx.lean, owner, r.native)) out.add(a);
    for (const cited of r.cites ?? []) {
      const c = ctx.judged.get(cited);
      if (c) visit(cited, c);
    }
  };
  visit(name, result);
  return [...out];
}

/** The axioms a proof by compiled code depends on, as the played version names them. */
function nativeAxioms(lean: SimulatedLean, declName: string, tactic: string): string[] {
  if (lean.nativeAxiomNames) return [`${declName}._native.${tactic}.ax_1_1`];
  // Before 4.29: the kernel evaluates `Lean.reduceBool`; `collectAxioms` walks axioms' types since 4.23
  // (lean4#8842), so `Lean.trustCompiler` shows too.
  return ["Lean.ofReduceBool", "Lean.trustCompiler"];
}

/**
 * An axiom's name as `MessageData.ofConstName` prints it without `pp.fullNames` (4.29 on): the shortest
 * suffix that the document's `open`s resolve to it (`choice` under `open Classical`).
 */
function printedAxiom(ctx: JudgeContext, command: Command, axiom: string, fullNames: boolean): string {
  if (fullNames || !ctx.lean.axiomNamesShortened) return axiom;
  const opened = earlierCommands(ctx.file, command, "open").flatMap((t) => t.split(/\s+/).slice(1));
  for (const ns of opened) if (axiom.startsWith(`${ns}.`)) return axiom.slice(ns.length + 1);
  return axiom;
}

function judgePrintAxioms(ctx: JudgeContext, command: Command): LeanDiagnostic[] {
  const ts = ctx.file.tokens;
  const code = codeIndices(ts, command.firstToken, command.lastToken);
  // `#print axioms Name` lexes as `#`, `print`, `axioms`, `Name`; it may follow `set_option … in`.
  const at = code.findIndex(
    (i, k) => tokenText(ts, i) === "#" && tokenText(ts, code[k + 1] ?? 0) === "print",
  );
  const nameIndex = code[at + 3];
  if (at < 0 || nameIndex === undefined || tokenText(ts, code[at + 2] ?? 0) !== "axioms") return [];
  const hashStart = ts.starts[code[at]!] ?? command.start;
  const printEnd = ts.ends[code[at + 1]!] ?? command.end;
  const fullNames = /set_option\s+pp\.fullNames\s+true\s+in\s*$/.test(
    ts.text.slice(command.start, hashStart),
  );
  if (isModuleFile(ctx.file) && !ctx.lean.printAxiomsInModule)
    return [diag(ctx.index, hashStart, printEnd, 1, MODULE_AXIOMS_REFUSAL)];
  const written = tokenText(ts, nameIndex);
  // `_root_.N.x` names exactly `N.x`; a bare name is looked up as written (the simulator has no scopes).
  const name = written.startsWith("_root_.") ? written.slice("_root_.".length) : written;
  const result = ctx.judged.get(name);
  if (!result)
    return [
      diag(ctx.index, ts.starts[nameIndex] ?? 0, ts.ends[nameIndex] ?? 0, 1, `unknown constant '${written}'`),
    ];
  const axioms =
    result.ok && !result.usesSorry
      ? [...ctx.reference.axiomsOf([name]), ...nativeAxiomsOf(ctx, name, result)].sort()
      : ["sorryAx"];
  const printed = result.isPrivate ? `_private.${ctx.moduleName}.0.${name}` : name;
  const list = axioms.map((a) => printedAxiom(ctx, command, a, fullNames));
  const message =
    list.length === 0
      ? `'${printed}' does not depend on any axioms`
      : `'${printed}' depends on axioms: [${list.join(", ")}]`;
  return [diag(ctx.index, hashStart, command.end, 3, message)];
}

/** `set_option NAME …` as a command of its own: an option this Lean does not know is an error. */
function judgeSetOption(ctx: JudgeContext, command: Command): LeanDiagnostic[] {
  const ts = ctx.file.tokens;
  const code = codeIndices(ts, command.firstToken, command.lastToken);
  const option = tokenText(ts, code[1] ?? command.firstToken);
  if (option !== "linter.defProp" || ctx.lean.defPropOption) return [];
  const i = code[1]!;
  return [
    diag(
      ctx.index,
      ts.starts[i] ?? 0,
      ts.ends[i] ?? 0,
      1,
      `unknown option '${option}' (simulator: Lean ${describe(ctx.lean)} has no such option)`,
    ),
  ];
}

function describe(lean: SimulatedLean): string {
  const v = lean.version;
  return v.kind === "release"
    ? `${v.major}.${v.minor}.${v.patch}`
    : v.kind === "nightly"
      ? `nightly-${v.date}`
      : v.text;
}

/**
 * `#check (type_of% @Name : Prop)`, the verifier's question whether a declaration states a proposition:
 * Lean prints the type when it is one, and a type mismatch when the declaration's type is data.
 */
function judgePropCheck(ctx: JudgeContext, command: Command): LeanDiagnostic[] {
  const text = ctx.file.tokens.text.slice(command.start, command.end);
  const m = /^#check \(type_of% @(\S+) : Prop\)$/.exec(text.trim());
  if (!m) return [];
  const written = m[1] ?? "";
  const name = written.startsWith("_root_.") ? written.slice("_root_.".length) : written;
  const result = ctx.judged.get(name);
  if (!result) return [diag(ctx.index, command.start, command.end, 1, `unknown constant '${written}'`)];
  if (result.isData)
    return [
      diag(
        ctx.index,
        command.start,
        command.end,
        1,
        `type mismatch\n  type_of% @${written}\nhas type\n  Type : Type 1\nbut is expected to have type\n  Prop : Type`,
      ),
    ];
  return [diag(ctx.index, command.start, command.end, 3, `type_of% @${written} : Prop`)];
}

/** Diagnostics of one command, updating the context for later `#print axioms`. */
export function judgeCommand(ctx: JudgeContext, command: Command): LeanDiagnostic[] {
  if (command.declaration) return judgeDeclaration(ctx, command, command.declaration);
  if (command.keyword === "#print") return judgePrintAxioms(ctx, command);
  if (command.keyword === "set_option") {
    const printed = judgePrintAxioms(ctx, command);
    return printed.length > 0 ? printed : judgeSetOption(ctx, command);
  }
  if (command.keyword === "#check") return judgePropCheck(ctx, command);
  return [];
}
