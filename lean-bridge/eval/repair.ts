/**
 * Repair turns (`--repair R`): a failed candidate is shown back to the model with what Lean said about it — the
 * errors with ranges relative to the candidate (line 1 is its first line), and the goals at the first error when
 * Lean's message states them — and the model writes the hole again. The feedback is a block of Lean comments just
 * above the hole's line, where prompts.ts puts the goal comment: it reads the same in FIM, chat and instruction
 * prompts, and prefix fitting keeps it (the text nearest the hole is kept first).
 */
import type { PromptParts } from "../models/backend";
import type { Verdict } from "../verify/verdict";

export const REPAIR_HEADER = "previous attempt, which Lean did not accept:";
const MAX_ERRORS = 3;
const MAX_MESSAGE_LINES = 12;
const MAX_CANDIDATE_LINES = 40;

/** The errors (severity 1) of a verdict, each once, with candidate-relative 1-based positions when inside it. */
export function feedbackLines(verdict: Verdict): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  let goals: string | undefined;
  for (const d of verdict.diagnostics) {
    if (d.severity !== 1) continue;
    const where = d.candidateRange
      ? `${d.candidateRange.start.line + 1}:${d.candidateRange.start.character + 1}`
      : "outside the attempt";
    const message = d.message.split("\n");
    const key = `${where}\0${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (seen.size > MAX_ERRORS) break;
    lines.push(`error at ${where}: ${message[0] ?? ""}`);
    // Lean states the goals below the first line of an "unsolved goals" error: the state to work from, shown
    // once under its own heading.
    if (goals === undefined && d.message.includes("⊢")) {
      goals = message.slice(1).join("\n");
      continue;
    }
    for (const more of message.slice(1, MAX_MESSAGE_LINES)) lines.push(`  ${more}`);
  }
  if (lines.length === 0) {
    const reason = (verdict as { reason?: unknown }).reason;
    lines.push(
      verdict.kind === "timeout"
        ? `no answer within ${verdict.timeoutMs} ms`
        : `${verdict.kind}${typeof reason === "string" ? `: ${reason}` : ""}`,
    );
  }
  if (goals !== undefined) {
    lines.push("goals at the first error:");
    for (const g of goals.split("\n").slice(0, MAX_MESSAGE_LINES)) lines.push(`  ${g}`);
  }
  return lines;
}

/** The prompt parts of a repair turn: the task's parts with the last attempt and Lean's feedback above the hole. */
export function repairParts(parts: PromptParts, candidate: string, verdict: Verdict): PromptParts {
  const pad = " ".repeat(parts.indent);
  const comment = (text: string) => (text ? `${pad}-- ${text}` : `${pad}--`);
  const attempt = candidate.split("\n").slice(0, MAX_CANDIDATE_LINES);
  const block = [
    comment(REPAIR_HEADER),
    ...attempt.map((line) => comment(`  ${line.trimEnd()}`)),
    comment("Lean said:"),
    ...feedbackLines(verdict).map((line) => comment(`  ${line}`)),
  ].join("\n");
  const lineStart = parts.prefix.lastIndexOf("\n") + 1;
  return {
    ...parts,
    prefix: `${parts.prefix.slice(0, lineStart)}${block}\n${parts.prefix.slice(lineStart)}`,
  };
}

/** The task's own prefix again, without repair feedback (the scripted test models look tasks up by it). */
export function withoutRepairFeedback(prefix: string): string {
  const header = prefix.indexOf(`-- ${REPAIR_HEADER}`);
  if (header < 0) return prefix;
  const blockStart = prefix.lastIndexOf("\n", header) + 1;
  return prefix.slice(0, blockStart) + prefix.slice(prefix.lastIndexOf("\n") + 1);
}
