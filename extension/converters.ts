/**
 * Lean's LSP ranges and diagnostics become VS Code objects through vscode-languageclient's protocol
 * converters (the same code vscode-lean4 relies on), not hand-written conversion code.
 */
import type * as vscode from "vscode";
import { createConverter } from "vscode-languageclient/lib/common/protocolConverter";
import type { CandidateDiagnostic, Range } from "../lean-bridge/protocol/trainer";

const p2c = createConverter(undefined, false, false);

export function asRange(range: Range): vscode.Range {
  return p2c.asRange(range);
}

/** A candidate's diagnostics as VS Code diagnostics (ranges relative to the candidate text). */
export function asDiagnostics(diagnostics: readonly CandidateDiagnostic[]): vscode.Diagnostic[] {
  return diagnostics.map((d) =>
    p2c.asDiagnostic({
      range: d.candidateRange ?? { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
      severity: d.severity >= 1 && d.severity <= 4 ? (d.severity as 1 | 2 | 3 | 4) : 1,
      message: d.message,
      source: "Lean",
    }),
  );
}
