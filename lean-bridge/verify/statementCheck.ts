/**
 * Whether a statement elaborates on the project's toolchain: the statement is checked with `sorry` as its
 * proof (the verifier's own probe, never a candidate's text, the same probe as the export's hole-shape
 * check in holeShape.ts). Lean answering only "declaration uses 'sorry'" means the statement, its binders
 * and the header it needs are fine; any error in the declaration means the row cannot be a task on this
 * toolchain (datasets are pinned to old Lean and Mathlib releases). Such rows are dropped and reported
 * with Lean's own message, never counted as model failures.
 */
import type { VerdictOutcome } from "./verdict";

export type StatementCheck =
  | { kind: "elaborates" }
  /** Lean reported an error in the declaration; `message` is Lean's (its first error). */
  | { kind: "does-not-elaborate"; message: string }
  /** The project could not load the file's header (imports missing or out of date). */
  | { kind: "environment"; message: string; action: string }
  /** No usable answer (timeout, crash, a refused task): dropped too, since nothing says it elaborates. */
  | { kind: "inconclusive"; reason: string };

/** Lean's messages can be long (a goal, a whole expected type): enough to recognise the problem. */
const MESSAGE_CHARS = 600;

function clip(message: string): string {
  const m = message.trim();
  return m.length > MESSAGE_CHARS ? `${m.slice(0, MESSAGE_CHARS)}…` : m;
}

export function judgeStatement(outcome: VerdictOutcome): StatementCheck {
  switch (outcome.kind) {
    case "incomplete":
      return outcome.reason === "sorry"
        ? { kind: "elaborates" }
        : { kind: "inconclusive", reason: "Lean reported unsolved goals for a `sorry` proof" };
    case "failed": {
      const error = outcome.diagnostics.find((d) => d.severity === 1);
      return { kind: "does-not-elaborate", message: clip(error?.message ?? outcome.reason) };
    }
    case "environment":
      return { kind: "environment", message: clip(outcome.reason), action: outcome.action };
    case "timeout":
      return { kind: "inconclusive", reason: `no answer within ${outcome.timeoutMs} ms` };
    case "crashed":
      return { kind: "inconclusive", reason: clip(outcome.reason) };
    case "rejected":
      return { kind: "inconclusive", reason: `${outcome.rule}: ${clip(outcome.reason)}` };
    case "proved":
      // `sorry` cannot prove anything: an answer of this shape is not to be trusted.
      return { kind: "inconclusive", reason: "a `sorry` proof was reported proved (unexpected)" };
  }
}
