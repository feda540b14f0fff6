/**
 * Reads Lean's diagnostics for one check document and decides the verdict. Diagnostics in the checked
 * declaration decide between failed, incomplete and proved; the appended `#print axioms` must answer for
 * exactly the checked declaration, once, with allowed axioms only, or the candidate is not proved.
 * Failures of the environment (imports out of date, an error in the header, Lean stopping before the
 * declaration) are told apart as `environment`: the workspace must be fixed, the candidate is not at fault.
 * Errors in earlier declarations are the workspace's business and do not change the verdict.
 */
import { parseFile } from "../lean/commands";
import { LeanDiagnosticTag, LeanMessages, type LeanDiagnostic } from "../protocol/lean";
import type { Position, Range } from "vscode-languageserver-protocol";
import { LineIndex } from "../text/positions";
import type { CheckDocument } from "./checkDocument";
import { nameParts } from "./policy";
import type { LeanFeatures } from "./toolchain";
import type { CandidateDiagnostic } from "./verdict";

export const DEFAULT_ALLOWED_AXIOMS = ["propext", "Classical.choice", "Quot.sound"];

/** The axioms of native computation before Lean 4.29 (removed in 4.35 by lean4#14953). */
const LEGACY_NATIVE_AXIOMS = new Set(["Lean.ofReduceBool", "Lean.ofReduceNat", "Lean.trustCompiler"]);

/**
 * Whether this Lean still has the legacy native axioms (`Lean.ofReduceBool`, `Lean.ofReduceNat`,
 * `Lean.trustCompiler`): before 4.35, which removed them (lean4#14953; toolchain.ts). From 4.35 on an axiom of one
 * of those names can only be one the checked document declared itself (`axiom Lean.ofReduceBool : False`
 * no longer collides with anything), so `allowNative` must not take it for compiled code. A version the
 * verifier cannot read answers no (fail closed: a native proof there is refused, never a declared axiom accepted).
 */
export function legacyNativeAxiomsExist(features: Pick<LeanFeatures, "legacyNativeRemoved">): boolean {
  return features.legacyNativeRemoved === "no";
}

/**
 * Whether an axiom asserts the result of compiled code: the legacy ones, or, from Lean 4.29 (lean4#12217),
 * the one axiom per computation that `native_decide`, `bv_decide` and `decide +native` add, named
 * `<declaration>._native.<tactic>.ax_<n>_<m>` (e.g. `bv_axiomCheck._native.bv_decide.ax_1_5`).
 */
export function isNativeAxiom(name: string): boolean {
  if (LEGACY_NATIVE_AXIOMS.has(name)) return true;
  const parts = nameParts(name);
  const n = parts.length;
  return n >= 4 && parts[n - 3] === "_native" && /^ax(?:_\d+)+$/.test(parts[n - 1] ?? "");
}

/**
 * The declaration a native axiom of Lean 4.29+ was made for: `X` of `X._native.<tactic>.ax_…` (undefined for
 * the legacy axioms, which belong to no declaration, and for any other name). Lean names it after the
 * declaration being elaborated (src/Lean/Meta/Native.lean, `nativeEqTrue`:
 * `let auxAxiomName ← mkAuxDeclName <| \`_native ++ tacticName ++ \`ax`; src/Lean/CoreM.lean,
 * `mkUniqueName`: `let base := g.namePrefix ++ «infix»`, the numbers `_1_5` appended after, and in a module
 * file `mkPrivateName env n` when not exporting; `withDeclNameForAuxNaming` sets `namePrefix` to the
 * declaration's name, so a `where` or `let rec` helper names its own axioms after itself).
 */
export function nativeAxiomOwner(name: string): string | undefined {
  if (!isNativeAxiom(name) || LEGACY_NATIVE_AXIOMS.has(name)) return undefined;
  return nameParts(name).slice(0, -3).join(".");
}

/**
 * Whether `allowNative` accepts this axiom in a proof of the checked declaration: a legacy one where this Lean
 * has it (before 4.29 Lean names no declaration in it; 4.35 removed it, `legacyNativeExists`), or one made for exactly the checked declaration (its private name in a
 * module file included). A native axiom of any other declaration (a helper in the file, proved by
 * `native_decide`, that the candidate merely cites, or anything else) is not the candidate's computation and
 * fails.
 */
export function nativeAxiomAccepted(
  axiom: string,
  checkedName: string,
  isPrivate: boolean,
  mayBePrivate: boolean,
  legacyNativeExists = true,
): boolean {
  if (LEGACY_NATIVE_AXIOMS.has(axiom)) return legacyNativeExists;
  const owner = nativeAxiomOwner(axiom);
  return owner !== undefined && namesTheDeclaration(owner, checkedName, isPrivate, mayBePrivate);
}

/** An axiom name as `#print axioms` printed it, without a leading `_root_.` (printed when a name is shadowed). */
export function axiomName(printed: string): string {
  return printed.startsWith("_root_.") ? printed.slice("_root_.".length) : printed;
}

type Outcome =
  | { kind: "proved"; axioms: string[]; axiomsChecked: true; confirmedBy: "server" }
  | { kind: "failed"; reason: string }
  | {
      kind: "incomplete";
      reason: "unsolved-goals" | "sorry";
      goalsLeft: number;
      goalsAtHole?: number;
      goalsAfterCandidate?: number;
    }
  | { kind: "environment"; reason: string; action: string }
  | { kind: "rejected"; rule: string; reason: string };

/** What to do about an environment failure, said once with the verdict. */
export const REBUILD_ACTION =
  "run `lake build` in the project (and `lake exe cache get` where Mathlib is used), then verify again";

export type Classified = Outcome & { diagnostics: CandidateDiagnostic[] };

function toCandidateRange(doc: CheckDocument, index: LineIndex, range: Range): Range | null {
  const start = index.offsetAt(range.start);
  if (start < doc.candidateStart || start > doc.candidateEnd) return null;
  const base = index.positionAt(doc.candidateStart);
  const map = (p: Range["start"]) =>
    p.line === base.line
      ? { line: 0, character: Math.max(0, p.character - base.character) }
      : { line: p.line - base.line, character: Math.max(0, p.character - doc.indentShift) };
  const endOffset = Math.min(index.offsetAt(range.end), doc.candidateEnd);
  return { start: map(range.start), end: map(index.positionAt(endOffset)) };
}

function countGoals(message: string): number {
  const turnstiles = message.match(/⊢/g)?.length ?? 0;
  return Math.max(1, turnstiles);
}

/** Parses `#print axioms` output, whose axiom list Lean may wrap over several lines. */
export function parseAxiomsOutput(message: string): { name: string; axioms: string[] } | undefined {
  const m = LeanMessages.axioms.exec(message);
  if (m)
    return {
      name: m[1] ?? "",
      axioms: (m[2] ?? "")
        .split(",")
        .map((a) => a.trim())
        .filter((a) => a !== ""),
    };
  const none = LeanMessages.noAxioms.exec(message);
  if (none) return { name: none[1] ?? "", axioms: [] };
  return undefined;
}

/**
 * Whether the name `#print axioms` printed is exactly the checked declaration: its full name, or for a
 * `private` one `_private.<Module>.0.<full name>` (Lean's private-name mangling; the module is whatever
 * Lean derived from the document, so any non-empty one is accepted). Names compare as Lean reads them.
 */
export function namesTheDeclaration(
  printed: string,
  checkedName: string,
  isPrivate: boolean,
  mayBePrivate = false,
): boolean {
  const got = nameParts(printed);
  const want = nameParts(checkedName);
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, k) => x === b[k]);
  if (!isPrivate && (!mayBePrivate || got[0] !== "_private")) return same(got, want);
  if (got[0] !== "_private" || got.length < want.length + 3) return false;
  const tail = got.slice(got.length - want.length);
  return same(tail, want) && got[got.length - want.length - 1] === "0";
}

export function parseAxioms(message: string): string[] | undefined {
  const m = LeanMessages.axioms.exec(message);
  if (m)
    return (m[2] ?? "")
      .split(",")
      .map((a) => a.trim())
      .filter((a) => a !== "");
  if (LeanMessages.noAxioms.test(message)) return [];
  return undefined;
}

const before = (a: Position, b: Position) =>
  a.line < b.line || (a.line === b.line && a.character < b.character);

/**
 * An environment failure, if Lean's answer shows one: the workspace must be fixed, not the candidate. Told
 * apart by where Lean puts its messages, never by text a candidate could write: every message the
 * candidate can cause lies inside the checked declaration, which starts after the header and ends before
 * the `#print axioms` line, while Lean attributes header failures to the header itself:
 * - `Language.diagnosticsOfHeaderError` (lake setup-file failures, "Imports are out of date and must be
 *   rebuilt") reports an error from the top of the file to its end;
 * - `processHeaderCore` (an import that cannot be found) reports at the header's first token;
 * and in both cases `processHeader` stops: nothing after the header is elaborated, so no message at or
 * after the declaration and no `#print axioms` answer. An error merely on line 0 is not enough (in a file
 * without imports it is the first command's, the workspace's business).
 * - The sticky "Imports are out of date and should be rebuilt" (`handleStaleDependency`, information, from
 *   0:0 to the end of the file) means Lean went on with stale imports: its verdict cannot be trusted.
 */
function environmentFailure(
  doc: CheckDocument,
  diagnostics: readonly LeanDiagnostic[],
  index: LineIndex,
  declLine: number,
  fatal: boolean,
): Outcome | undefined {
  const top: Position = { line: 0, character: 0 };
  const endOfDocument = index.positionAt(doc.text.length);
  const spansDocument = (d: LeanDiagnostic) =>
    !before(top, d.range.start) && !before((d.fullRange ?? d.range).end, endOfDocument);
  const stale = diagnostics.find(
    (d) => d.severity === 3 && spansDocument(d) && LeanMessages.importsStale.test(d.message),
  );
  if (stale)
    return {
      kind: "environment",
      reason: `Lean: ${firstLine(stale.message)} (the check ran against stale imports)`,
      action: REBUILD_ACTION,
    };
  const coreMissing = missingCoreLibrary(doc, diagnostics, fatal);
  if (coreMissing)
    return {
      kind: "environment",
      reason: `Lean could not load its core library for this file, which has no header and so imports \`Init\` (line 1): ${firstLine(coreMissing.message)}`,
      action:
        'install a Lean toolchain with its standard library (elan; README.md, "With real Lean"), or, on a Lean without one (the embedded Lean), start the file with `prelude`',
    };
  // Lean's own header message may start on the declaration's line (a file without imports whose first
  // line is the declaration); it spans the document, which nothing the declaration causes can.
  const elaboratedPastHeader = diagnostics.some((d) => d.range.start.line >= declLine && !spansDocument(d));
  if (!elaboratedPastHeader) {
    const headerStart = doc.headerStart >= 0 ? index.positionAt(doc.headerStart) : undefined;
    const atHeader = (d: LeanDiagnostic) =>
      headerStart !== undefined &&
      d.range.start.line === headerStart.line &&
      d.range.start.character === headerStart.character;
    const header = diagnostics.find((d) => (d.severity ?? 1) === 1 && (spansDocument(d) || atHeader(d)));
    if (header)
      return {
        kind: "environment",
        reason: `the file's header failed to load (line ${header.range.start.line + 1}): ${firstLine(header.message)}`,
        action: REBUILD_ACTION,
      };
  }
  // Lean's refusal of `#print axioms` in a `module` file, on the line the verifier appended (Lean 4.20 to
  // 4.29; where the toolchain says so, such holes are refused before any check).
  const moduleFile = diagnostics.find(
    (d) =>
      (d.severity ?? 1) === 1 &&
      d.range.start.line >= doc.axiomsLine &&
      LeanMessages.axiomsInModule.test(d.message),
  );
  if (moduleFile)
    return {
      kind: "environment",
      reason:
        "the file has a `module` header, where this Lean refuses `#print axioms` (Lean 4.20 to 4.29; 4.30 lifted it), so the proof cannot be axiom-checked",
      action:
        "use Lean 4.30 or newer (lean-toolchain), or move the theorem to a file without a `module` header, to verify it",
    };
  return undefined;
}

/**
 * A file without a header imports `Init` implicitly; where Lean cannot load it (a Lean without its standard
 * library, or a broken one) the header fails with an error on the empty range at 0:0 and Lean stops there,
 * saying so with a fatal-error progress report. Nothing the candidate writes can produce that: every message
 * of the declaration has the range of its syntax, and processing never stops before the declaration when the
 * header loaded. So the error is the environment's only with all three: no header, the fatal report, and
 * that error alone.
 */
function missingCoreLibrary(
  doc: CheckDocument,
  diagnostics: readonly LeanDiagnostic[],
  fatal: boolean,
): LeanDiagnostic | undefined {
  if (doc.headerStart >= 0 || !fatal || diagnostics.length !== 1) return undefined;
  const only = diagnostics[0]!;
  const { start, end } = only.range;
  const atTopEmpty = start.line === 0 && start.character === 0 && end.line === 0 && end.character === 0;
  return (only.severity ?? 1) === 1 && atTopEmpty ? only : undefined;
}

/**
 * The names the check document declares itself (full names, namespaces included) among `names`: an allowed
 * axiom's name declared there (a prelude workspace's own `axiom propext : False`) is that document's axiom,
 * not the one the allow-list means, which comes from Lean's prelude or the workspace's imports. Read from the
 * document's parse, the candidate's text included; only documents that spell the keyword `axiom` are parsed.
 */
export function declaredByDocument(text: string, names: readonly string[]): string[] {
  if (names.length === 0 || !/\baxiom\b/.test(text)) return [];
  const declared = new Set(
    parseFile(text)
      .commands.map((c) => c.declaration?.fullName)
      .filter((n) => n !== undefined)
      .map(axiomName),
  );
  return names.filter((n) => declared.has(n));
}

export function classify(
  doc: CheckDocument,
  diagnostics: readonly LeanDiagnostic[],
  fatal: boolean,
  allowedAxioms: readonly string[] = DEFAULT_ALLOWED_AXIOMS,
  allowNative = false,
  legacyNativeExists = true,
): Classified {
  const index = new LineIndex(doc.text);
  const declLine = index.positionAt(doc.declarationStart).line;
  const relevant = diagnostics.filter((d) => d.range.start.line >= declLine);
  const mapped: CandidateDiagnostic[] = relevant.map((d) => ({
    severity: d.severity ?? 1,
    message: d.message,
    range: d.range,
    candidateRange: toCandidateRange(doc, index, d.range),
    ...(d.code !== undefined ? { code: d.code } : {}),
  }));
  const done = (outcome: Outcome): Classified => ({ ...outcome, diagnostics: mapped });
  const environment = environmentFailure(doc, diagnostics, index, declLine, fatal);
  if (environment) return done(environment);
  const onAxiomsLine = (d: LeanDiagnostic) => d.range.start.line >= doc.axiomsLine;
  const onPropCheckLine = (d: LeanDiagnostic) =>
    doc.propCheckLine >= 0 && d.range.start.line >= doc.propCheckLine && !onAxiomsLine(d);
  const inDeclaration = (d: LeanDiagnostic) => !onAxiomsLine(d) && !onPropCheckLine(d);
  const errors = relevant.filter((d) => (d.severity ?? 1) === 1 && inDeclaration(d));
  const declarationOutcome = (): Outcome | undefined => {
    // Lean's tag, never the message's text: `fail "unsolved goals"` writes the words but not the tag.
    const isUnsolved = (d: LeanDiagnostic) => (d.leanTags ?? []).includes(LeanDiagnosticTag.unsolvedGoals);
    const hard = errors.filter((d) => !isUnsolved(d));
    if (hard.length > 0) return { kind: "failed", reason: firstLine(hard[0]?.message ?? "error") };
    const unsolved = errors.filter(isUnsolved);
    if (unsolved.length === 0) return undefined;
    // The hole's own block reports its unsolved goals where it opens (`by`, `·`, `case … =>`), before the
    // candidate. A report anywhere else is a nested block the candidate (or the proof after it) left open,
    // which Lean closed with a synthetic `sorry`: the goal it stood for reads closed without a proof.
    const ownBlock = (d: LeanDiagnostic) => {
      const at = index.offsetAt(d.range.start);
      return at >= doc.declarationStart && at < doc.candidateStart;
    };
    const nested = unsolved.find((d) => !ownBlock(d));
    if (nested || unsolved.length > 1)
      return {
        kind: "failed",
        reason: nested
          ? `a tactic block ${index.offsetAt(nested.range.start) < doc.candidateEnd ? "inside the candidate" : "after the candidate"} left goals unsolved (line ${nested.range.start.line + 1}); Lean closed them with \`sorry\`, which is not progress`
          : "more than one tactic block left goals unsolved",
      };
    return {
      kind: "incomplete",
      reason: "unsolved-goals",
      goalsLeft: countGoals(unsolved[0]?.message ?? ""),
    };
  };
  const outcome = declarationOutcome();
  if (outcome?.kind === "failed") return done(outcome);
  // Only an outcome that could earn reward needs the proposition check; a failed declaration may not even
  // exist for Lean to answer about.
  if (doc.propCheckLine >= 0) {
    const answers = relevant.filter(onPropCheckLine);
    const error = answers.find((d) => (d.severity ?? 1) === 1);
    if (error || answers.length === 0)
      return done({
        kind: "rejected",
        rule: "not-a-proposition",
        reason: error
          ? `'${doc.checkedName}' is not a proposition (its type is data), so a hole in it is not a proof: any value of the type is accepted. Lean: ${firstLine(error.message)}`
          : `Lean did not confirm that '${doc.checkedName}' states a proposition (no answer to the check; the verifier fails closed)`,
      });
  }
  if (outcome) return done(outcome);
  // Lean's sorry warning is a warning: the same words as information (`trace "declaration uses 'sorry'"`)
  // are the candidate's text, not Lean's finding (`#print axioms` below still catches every real sorry).
  const sorryWarning = (d: LeanDiagnostic) => d.severity === 2 && LeanMessages.sorryWarning.test(d.message);
  if (relevant.some((d) => inDeclaration(d) && sorryWarning(d)))
    return done({ kind: "incomplete", reason: "sorry", goalsLeft: 0 });
  if (fatal) return done({ kind: "failed", reason: "Lean stopped processing the file (fatal error)" });
  const name = doc.checkedName;
  const axiomsErrors = relevant.filter((d) => (d.severity ?? 1) === 1 && onAxiomsLine(d));
  if (axiomsErrors.length > 0)
    return done({
      kind: "failed",
      reason: `could not check the axioms of '${name}': ${firstLine(axiomsErrors[0]?.message ?? "")}`,
    });
  const outputs = relevant
    .filter(onAxiomsLine)
    .map((d) => parseAxiomsOutput(d.message))
    .filter((o) => o !== undefined);
  // Exactly one answer, naming exactly the checked declaration: anything else fails closed.
  if (outputs.length !== 1)
    return done({
      kind: "failed",
      reason:
        outputs.length === 0
          ? `no \`#print axioms\` output for '${name}'`
          : `\`#print axioms\` answered ${outputs.length} times for '${name}' (expected once)`,
    });
  const output = outputs[0]!;
  if (!namesTheDeclaration(output.name, name, doc.isPrivate, doc.mayBePrivate))
    return done({
      kind: "failed",
      reason: `\`#print axioms\` reported '${output.name}', not the checked declaration '${name}'`,
    });
  const axioms = output.axioms.map(axiomName);
  if (axioms.includes("sorryAx")) return done({ kind: "incomplete", reason: "sorry", goalsLeft: 0 });
  const ownNative = (a: string) =>
    nativeAxiomAccepted(a, name, doc.isPrivate, doc.mayBePrivate, legacyNativeExists);
  const posingAllowed = declaredByDocument(
    doc.text,
    axioms.filter((a) => allowedAxioms.includes(a)),
  );
  if (posingAllowed.length > 0)
    return done({
      kind: "failed",
      reason: `the proof rests on ${posingAllowed.map((a) => `'${a}'`).join(", ")}, declared by the checked document itself: an allowed axiom is the one the imports provide, not a document's own of that name`,
    });
  const foreign = axioms.filter((a) => !allowedAxioms.includes(a) && !(allowNative && ownNative(a)));
  const native = foreign.filter(isNativeAxiom);
  const posing = allowNative && !legacyNativeExists ? native.filter((a) => LEGACY_NATIVE_AXIOMS.has(a)) : [];
  if (posing.length > 0)
    return done({
      kind: "failed",
      reason: `the proof depends on ${posing.join(", ")}, which this Lean does not provide (Lean 4.35 removed the legacy native axioms, lean4#14953; on a toolchain the verifier cannot read they are not trusted either): an axiom of that name was declared by the document, not by compiled code`,
    });
  if (native.length > 0)
    return done({
      kind: "failed",
      reason: allowNative
        ? `the proof depends on compiled code run for another declaration (axioms ${native.join(", ")}); "allowNative" accepts only the checked declaration's own native computation ('${name}')`
        : `the proof runs compiled code, which the kernel does not check (axioms ${native.join(", ")}); allowed only with "allowNative": true in a policy file`,
    });
  if (foreign.length > 0)
    return done({
      kind: "failed",
      reason: `the proof depends on axioms outside the allow-list: ${foreign.join(", ")}`,
    });
  // The server's word alone; the kernel gate (kernelGate.ts), where it runs, confirms it again.
  return done({ kind: "proved", axioms, axiomsChecked: true, confirmedBy: "server" });
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}
