/**
 * Reads Lean's diagnostics for one check document and decides the verdict. Diagnostics in the checked
 * declaration decide between failed, incomplete and proved; the appended `#print axioms` must answer for
 * exactly the checked declaration, once, with allowed axioms only, or the candidate is not proved.
 * Failures of the environment (imports out of date, an error in the header, Lean stopping before the
 * declaration) are told apart as `environment`: the workspace must be fixed, the candidate is not at fault.
 * Errors in earlier declarations are the workspace's business and do not change the verdict.
 */
import { LeanDiagnosticTag, LeanMessages, type LeanDiagnostic } from "../protocol/lean";
import type { Range } from "vscode-languageserver-protocol";
import { LineIndex } from "../text/positions";
import type { CheckDocument } from "./checkDocument";
import { nameParts } from "./policy";
import type { CandidateDiagnostic } from "./verdict";

export const DEFAULT_ALLOWED_AXIOMS = ["propext", "Classical.choice", "Quot.sound"];

type Outcome =
  | { kind: "proved"; axioms: string[]; axiomsChecked: true }
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
export function namesTheDeclaration(printed: string, checkedName: string, isPrivate: boolean): boolean {
  const got = nameParts(printed);
  const want = nameParts(checkedName);
  const same = (a: string[], b: string[]) => a.length === b.length && a.every((x, k) => x === b[k]);
  if (!isPrivate) return same(got, want);
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

/** An environment failure, if Lean's answer shows one: the workspace must be fixed, not the candidate. */
function environmentFailure(
  doc: CheckDocument,
  diagnostics: readonly LeanDiagnostic[],
  declLine: number,
  fatal: boolean,
): Outcome | undefined {
  // Only where the candidate cannot write: above the declaration (a candidate's own `fail "Imports are out
  // of date…"` must not pass for the environment, which would mask it and could stop a training run).
  const above = (d: LeanDiagnostic) => d.range.start.line < declLine;
  const outOfDate = diagnostics.find((d) => above(d) && LeanMessages.importsOutOfDate.test(d.message));
  if (outOfDate)
    return { kind: "environment", reason: `Lean: ${firstLine(outOfDate.message)}`, action: REBUILD_ACTION };
  const inHeader = diagnostics.find(
    (d) =>
      (d.severity ?? 1) === 1 &&
      d.range.start.line < declLine &&
      (d.range.start.line <= doc.headerEndLine || d.range.start.line === 0),
  );
  if (inHeader)
    return {
      kind: "environment",
      reason: `the file's header failed to load (line ${inHeader.range.start.line + 1}): ${firstLine(inHeader.message)}`,
      action: REBUILD_ACTION,
    };
  const moduleFile = diagnostics.find(
    (d) =>
      (d.severity ?? 1) === 1 &&
      d.range.start.line >= doc.axiomsLine &&
      LeanMessages.axiomsInModule.test(d.message),
  );
  if (moduleFile)
    return {
      kind: "environment",
      reason: "the file has a `module` header, where Lean refuses `#print axioms`",
      action: "move the theorem to a file without a `module` header (or remove the header) to verify it",
    };
  const inDeclaration = diagnostics.some((d) => (d.severity ?? 1) === 1 && d.range.start.line >= declLine);
  if (fatal && !inDeclaration)
    return {
      kind: "environment",
      reason: "Lean stopped processing the file before reaching the declaration (fatal error)",
      action: REBUILD_ACTION,
    };
  return undefined;
}

export function classify(
  doc: CheckDocument,
  diagnostics: readonly LeanDiagnostic[],
  fatal: boolean,
  allowedAxioms: readonly string[] = DEFAULT_ALLOWED_AXIOMS,
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
  const environment = environmentFailure(doc, diagnostics, declLine, fatal);
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
  if (relevant.some((d) => inDeclaration(d) && LeanMessages.sorryWarning.test(d.message)))
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
  if (!namesTheDeclaration(output.name, name, doc.isPrivate))
    return done({
      kind: "failed",
      reason: `\`#print axioms\` reported '${output.name}', not the checked declaration '${name}'`,
    });
  const axioms = output.axioms;
  if (axioms.includes("sorryAx")) return done({ kind: "incomplete", reason: "sorry", goalsLeft: 0 });
  const foreign = axioms.filter((a) => !allowedAxioms.includes(a));
  if (foreign.length > 0)
    return done({
      kind: "failed",
      reason: `the proof depends on axioms outside the allow-list: ${foreign.join(", ")}`,
    });
  return done({ kind: "proved", axioms, axiomsChecked: true });
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}
