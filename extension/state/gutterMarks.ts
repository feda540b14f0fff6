/**
 * Which gutter icon each line gets, and how holes that share a line are told apart. VS Code draws one gutter
 * icon per line, so a line where several holes start gets the "several" icon unless they all earned the same one
 * (one hole's colour would contradict the other's verdict), and each of its holes gets a numbered marker (①, ②)
 * drawn before it in the text, which its CodeLens and hover repeat. Pure; `vscode` only in decorations.ts.
 */
import type { VerdictKind } from "../../lean-bridge/protocol/trainer";
import type { HoleRecord } from "./holeStore";

/** The four verdict icon families (verdicts that are not the model's fault share the timeout icon). */
export type IconName = "proved" | "failed" | "incomplete" | "timeout";
export type GutterIcon = IconName | "several";

export function iconName(verdict: VerdictKind): IconName {
  switch (verdict) {
    case "proved":
    case "failed":
    case "incomplete":
      return verdict;
    case "rejected":
      return "failed";
    default:
      return "timeout";
  }
}

const MARKERS = ["①", "②", "③", "④", "⑤", "⑥", "⑦", "⑧", "⑨", "⑩"];

export function marker(index: number): string {
  return MARKERS[index] ?? `(${index + 1})`;
}

export interface LineMark {
  /** 0-based line where the holes start. */
  line: number;
  icon: GutterIcon;
  /** The holes starting on this line, left to right. */
  holes: HoleRecord[];
}

/** One mark per line where at least one hole starts, in line order. */
export function lineMarks(holes: readonly HoleRecord[]): LineMark[] {
  const byLine = new Map<number, HoleRecord[]>();
  for (const hole of holes) {
    const line = hole.range.start.line;
    byLine.set(line, [...(byLine.get(line) ?? []), hole]);
  }
  return [...byLine.entries()]
    .sort(([a], [b]) => a - b)
    .map(([line, onLine]) => {
      const sorted = onLine.sort((a, b) => a.range.start.character - b.range.start.character);
      const icons = new Set(sorted.map((h) => iconName(h.latest.verdict)));
      return { line, icon: icons.size === 1 ? [...icons][0]! : "several", holes: sorted };
    });
}

/** The marker of a hole that shares its line with others ("①"), or "" when it is alone on its line. */
export function holeMarker(hole: HoleRecord, sameFile: readonly HoleRecord[]): string {
  const onLine = sameFile
    .filter((h) => h.range.start.line === hole.range.start.line)
    .sort((a, b) => a.range.start.character - b.range.start.character);
  return onLine.length > 1 ? marker(onLine.findIndex((h) => h.taskId === hole.taskId)) : "";
}

/** A CodeLens title that names its hole, so lenses merged onto one line say which is which. */
export function lensTitle(hole: HoleRecord, holeMarker: string): string {
  // Short: lenses of one line are joined into one row, which must stay readable.
  const where = holeMarker
    ? `${holeMarker} ${hole.kind}, col ${hole.range.start.character + 1}`
    : `${hole.kind} hole`;
  return `${where}: ${hole.latest.verdict} (best ${hole.best}), ${hole.total} attempt${hole.total === 1 ? "" : "s"}`;
}
