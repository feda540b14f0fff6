/**
 * Kimina's REPL messages as the diagnostics classify.ts reads: 1-based lines become 0-based, columns counted
 * in code points become UTF-16 characters of the check document's own lines (what LSP positions count).
 */
import type { LeanDiagnostic } from "../protocol/lean";
import type { KiminaMessage, KiminaPos } from "./protocol";

const SEVERITY: Record<KiminaMessage["severity"], 1 | 2 | 3 | 4> = {
  error: 1,
  warning: 2,
  info: 3,
  trace: 4,
};

/** UTF-16 length of the first `codePoints` code points of `line`. */
function utf16Column(line: string, codePoints: number): number {
  let units = 0;
  let seen = 0;
  for (const ch of line) {
    if (seen >= codePoints) break;
    units += ch.length;
    seen++;
  }
  return units + Math.max(0, codePoints - seen);
}

export function toDiagnostics(messages: readonly KiminaMessage[], documentText: string): LeanDiagnostic[] {
  const lines = documentText.split("\n");
  const position = (p: KiminaPos) => {
    const line = Math.max(0, p.line - 1);
    return { line, character: utf16Column(lines[line] ?? "", Math.max(0, p.column)) };
  };
  return messages.map((m) => {
    const start = position(m.pos);
    const end = m.endPos ? position(m.endPos) : start;
    return {
      severity: SEVERITY[m.severity],
      range: { start, end },
      message: m.data,
      source: "Kimina Lean Server",
    };
  });
}
