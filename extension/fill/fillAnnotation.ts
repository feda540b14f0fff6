/**
 * A candidate "Fill Hole with Model" inserted, as a hole annotation: the same HoleStore record training's samples
 * make, so the filled hole gets training's gutter icon, highlight, hover, CodeLens and FIM Holes row (one renderer,
 * extension/decorations.ts). The attempt names the model and the verifier (Lean, or the simulator as such). Pure:
 * no `vscode` here.
 */
import type { Position, Range } from "../../lean-bridge/protocol/trainer";
import type { FilledCandidate } from "../../lean-bridge/fill/fillHole";
import type { EditorHole } from "../../lean-bridge/fill/editorHole";
import type { Attempt, PlacedHole } from "../state/holeStore";

/** Where `text` ends once inserted at `start` (positions in UTF-16 code units, as VS Code and LSP count). */
export function endAfterInsert(start: Position, text: string): Position {
  const lines = text.split(/\r\n|\r|\n/);
  const last = lines[lines.length - 1]!;
  return lines.length === 1
    ? { line: start.line, character: start.character + last.length }
    : { line: start.line + lines.length - 1, character: last.length };
}

/** The task id of a filled hole: its file and where it starts (filling the same place again adds an attempt). */
export function fillTaskId(file: string, start: Position): string {
  return `fill:${file}:${start.line}:${start.character}`;
}

/** The hole the inserted candidate now occupies in `file`. */
export function filledHole(file: string, hole: EditorHole, inserted: string): PlacedHole {
  const start = hole.range.start;
  const range: Range = { start, end: endAfterInsert(start, inserted) };
  return {
    taskId: fillTaskId(file, start),
    file,
    kind: hole.parts.kind,
    // `example` has no name: the record says "" as training's do.
    decl: hole.declaration === "example" ? "" : hole.declaration,
    range,
  };
}

/** The attempt of an inserted candidate, with the verifier's messages (ranges relative to the candidate). */
export function fillAttempt(candidate: FilledCandidate, model: string): Attempt {
  return {
    candidate: candidate.text,
    verdict: candidate.verdict.kind,
    // A fill has no reward, step or algorithm: the hover and the attempts list show the model instead.
    reward: candidate.verdict.kind === "proved" ? 1 : 0,
    step: 0,
    algorithm: "fill",
    diagnostics: candidate.verdict.diagnostics.map((d) => ({
      severity: d.severity,
      message: d.message,
      candidateRange: d.candidateRange,
    })),
    run: "Fill Hole with Model",
    verifier: candidate.verdict.verifier.label,
    model,
  };
}
