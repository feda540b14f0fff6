/**
 * The text of "Show all attempts": a read-only document (a virtual one; nothing to save) listing a hole's kept
 * attempts grouped by run, each run named with its verifier, newest first, every candidate with its messages.
 * Lean comments (`--`) around Lean candidates, so it reads well with Lean highlighting. Pure.
 */
import type { Attempt, HoleRecord } from "./holeStore";
import { attemptSummary, declarationPhrase, type HoverMessage } from "./hoverText";

/** Attempts saved before runs were named. */
export const UNNAMED_RUN = "an earlier run (not named in annotations saved by older versions)";

export interface RunGroup {
  run: string;
  verifier: string | undefined;
  /** Newest first. */
  attempts: Attempt[];
}

/** The kept attempts by run, the run of the newest attempt first, each run's attempts newest first. */
export function attemptsByRun(hole: HoleRecord): RunGroup[] {
  const groups: RunGroup[] = [];
  for (const attempt of [...hole.attempts].reverse()) {
    const run = attempt.run ?? UNNAMED_RUN;
    let group = groups.find((g) => g.run === run);
    if (!group) {
      group = { run, verifier: attempt.verifier, attempts: [] };
      groups.push(group);
    }
    group.attempts.push(attempt);
  }
  return groups;
}

function comment(text: string): string {
  return text
    .split("\n")
    .map((line) => `-- ${line}`)
    .join("\n");
}

export function attemptsDocument(
  hole: HoleRecord,
  fileLabel: string,
  messagesOf: (attempt: Attempt) => readonly HoverMessage[],
): string {
  const kept =
    hole.total > hole.attempts.length ? `; the latest ${hole.attempts.length} of ${hole.total} kept` : "";
  const out = [
    comment(
      `FIM-RLVR: attempts at ${fileLabel} line ${hole.range.start.line + 1} (${hole.kind} hole${declarationPhrase(hole)}), ` +
        `newest first, by run${kept}. Best so far: ${hole.best}. Read-only.`,
    ),
    "",
  ];
  for (const group of attemptsByRun(hole)) {
    out.push(
      comment(
        `${"=".repeat(8)} Run ${group.run}${group.verifier ? ` · verifier: ${group.verifier}` : ""} · ${group.attempts.length} attempt${group.attempts.length === 1 ? "" : "s"}`,
      ),
      "",
    );
    group.attempts.forEach((attempt, k) => {
      out.push(comment(`#${k + 1} ${attemptSummary(attempt)}`));
      for (const m of messagesOf(attempt))
        out.push(
          comment(`${m.severity}${m.line === null ? "" : ` at candidate line ${m.line + 1}`}: ${m.message}`),
        );
      out.push(attempt.candidate, "");
    });
  }
  return out.join("\n");
}
