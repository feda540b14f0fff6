/**
 * Reads Lean's diagnostics for one check document and decides the verdict. Only diagnostics that fall in
 * the checked declaration (or on the appended `#print axioms` line) count: errors elsewhere in the file's
 * prefix are the workspace's business, not the candidate's.
 */
import { LeanDiagnosticTag, LeanMessages, type LeanDiagnostic } from "../protocol/lean";
import type { Range } from "../protocol/lsp";
import { LineIndex } from "../text/positions";
import type { CheckDocument } from "./checkDocument";
import type { CandidateDiagnostic } from "./verdict";

export const DEFAULT_ALLOWED_AXIOMS = ["propext", "Classical.choice", "Quot.sound"];

type Outcome =
  | { kind: "proved"; axioms: string[]; axiomsChecked: boolean }
  | { kind: "failed"; reason: string }
  | { kind: "incomplete"; reason: "unsolved-goals" | "sorry"; goalsLeft: number };

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
  const onAxiomsLine = (d: LeanDiagnostic) => doc.axiomsLine >= 0 && d.range.start.line >= doc.axiomsLine;
  const errors = relevant.filter((d) => (d.severity ?? 1) === 1 && !onAxiomsLine(d));
  const isUnsolved = (d: LeanDiagnostic) =>
    (d.leanTags ?? []).includes(LeanDiagnosticTag.unsolvedGoals) ||
    LeanMessages.unsolvedGoals.test(d.message);
  const hard = errors.filter((d) => !isUnsolved(d));
  if (hard.length > 0) return done({ kind: "failed", reason: firstLine(hard[0]?.message ?? "error") });
  const unsolved = errors.filter(isUnsolved);
  if (unsolved.length > 0)
    return done({
      kind: "incomplete",
      reason: "unsolved-goals",
      goalsLeft: unsolved.reduce((n, d) => n + countGoals(d.message), 0),
    });
  if (relevant.some((d) => !onAxiomsLine(d) && LeanMessages.sorryWarning.test(d.message)))
    return done({ kind: "incomplete", reason: "sorry", goalsLeft: 0 });
  if (fatal) return done({ kind: "failed", reason: "Lean stopped processing the file (fatal error)" });
  if (doc.axiomsLine < 0) return done({ kind: "proved", axioms: [], axiomsChecked: false });
  const axiomsErrors = relevant.filter((d) => (d.severity ?? 1) === 1 && onAxiomsLine(d));
  if (axiomsErrors.length > 0)
    return done({
      kind: "failed",
      reason: `could not check the axioms of '${doc.declaration.fullName}': ${firstLine(axiomsErrors[0]?.message ?? "")}`,
    });
  const axioms = relevant
    .filter(onAxiomsLine)
    .map((d) => parseAxioms(d.message))
    .find((a) => a !== undefined);
  if (axioms === undefined)
    return done({ kind: "failed", reason: `no \`#print axioms\` output for '${doc.declaration.fullName}'` });
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
