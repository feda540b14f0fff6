/**
 * Repair turns (`--repair R` in eval, `repair_turns` in training): a failed candidate is shown back to the model
 * with what Lean said about it — the errors with ranges relative to the candidate (line 1 is its first line), and
 * the goals at the first error when Lean's message states them — and the model writes the hole again. The
 * feedback is a block of Lean comments just above the hole's line, where prompts.ts puts the goal comment: it
 * reads the same in FIM, chat and instruction prompts, and prefix fitting keeps it (the text nearest the hole is
 * kept first).
 *
 * The feedback is built from the verdict as the wire carries it (a BatchVerdict's kind and diagnostics, which
 * serve/wire.ts makes of a pool verdict), because that is all the trainer gets from its verifier service:
 * trainer/fim_rlvr/tasks/repair.py builds the same block from the same input, byte for byte
 * (test/eval/repairParity.test.ts).
 *
 * A long failed attempt can make the repair prompt longer than the model's context (the prompt budget and
 * max-new-tokens together above the server's limit: vLLM answers 400 "This model's maximum context length is …").
 * Eval then asks again with the block shortened, level by level (`RepairFit`): the attempt cut to a half, a
 * quarter, an eighth, a sixteenth of its characters, then left out, then Lean's messages down to their first
 * lines. Level 0 is the training prompt, byte for byte.
 */
import type { PromptParts } from "../models/backend";
import type { BatchVerdict } from "../protocol/trainer";
import { batchVerdict } from "../serve/wire";
import type { Verdict } from "../verify/verdict";

export const REPAIR_HEADER = "previous attempt, which Lean did not accept:";
const MAX_ERRORS = 3;
const MAX_MESSAGE_LINES = 12;
const MAX_CANDIDATE_LINES = 40;
const GOALS_HEADING = "goals at the first error:";

/** What a repair prompt needs of a verdict: its kind and the verifier's messages, as on the wire. */
export type RepairVerdict = Pick<BatchVerdict, "kind" | "diagnostics">;

/** A pool verdict as the wire (and so the trainer) sees it: messages for verdicts without one included. */
export function repairVerdict(verdict: Verdict): RepairVerdict {
  const { kind, diagnostics } = batchVerdict("", verdict, "binary");
  return { kind, diagnostics };
}

/** Trailing spaces, tabs and CRs (the same set on the Python side, unlike JavaScript's `trimEnd`). */
function trimLineEnd(line: string): string {
  return line.replace(/[ \t\r]+$/, "");
}

/**
 * The errors (severity 1) of a verdict, each once and at most MAX_ERRORS, with candidate-relative 1-based
 * positions when inside it; then the goals Lean states in the first error's message, when it states them.
 */
export function feedbackLines(verdict: RepairVerdict): string[] {
  const lines: string[] = [];
  const seen = new Set<string>();
  let goals: string[] | undefined;
  for (const d of verdict.diagnostics) {
    if (d.severity !== 1) continue;
    const where = d.candidateRange
      ? `at ${d.candidateRange.start.line + 1}:${d.candidateRange.start.character + 1}`
      : "outside the attempt";
    const key = `${where}\0${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (seen.size > MAX_ERRORS) break;
    const message = d.message.split("\n");
    const first = seen.size === 1;
    lines.push(`error ${where}: ${message[0]!}`);
    // Lean states the goals below the first line of an "unsolved goals" error (and of many tactics' failures):
    // for the first error, the state to work from, shown once under its own heading.
    if (first && d.message.includes("⊢")) {
      goals = message.slice(1, MAX_MESSAGE_LINES + 1);
      continue;
    }
    for (const more of message.slice(1, MAX_MESSAGE_LINES)) lines.push(`  ${more}`);
  }
  if (lines.length === 0)
    lines.push(verdict.kind === "timeout" ? "no answer within the time limit" : verdict.kind);
  if (goals !== undefined) {
    lines.push(GOALS_HEADING);
    for (const g of goals) lines.push(`  ${g}`);
  }
  return lines;
}

/**
 * How far a repair block is shortened to fit a model's context: 0 is the training prompt; 1–4 show the first half,
 * quarter, eighth, sixteenth of the attempt's characters; 5 leaves the attempt out; 6 also keeps only the first
 * line of each of Lean's messages, cut to FIRST_LINE_CHARS.
 */
export type RepairFit = 0 | 1 | 2 | 3 | 4 | 5 | 6;
export const REPAIR_FITS: readonly RepairFit[] = [0, 1, 2, 3, 4, 5, 6];
const FIRST_LINE_CHARS = 200;

/** The attempt's lines as a repair block shows them at `fit`, with a note where it was cut. */
function attemptLines(candidate: string, fit: RepairFit): string[] {
  const lines = candidate.split("\n").slice(0, MAX_CANDIDATE_LINES);
  if (fit === 0) return lines;
  const whole = lines.join("\n");
  if (fit >= 5) return [`(${whole.length} characters left out to fit the model's context)`];
  let keep = Math.ceil(whole.length / 2 ** fit);
  // The errors' positions count from the attempt's first line, so its start is what is kept; a UTF-16 pair is
  // never split.
  if (/[\uD800-\uDBFF]/.test(whole.charAt(keep - 1))) keep--;
  if (keep >= whole.length) return lines;
  return [
    ...whole.slice(0, keep).split("\n"),
    `(${whole.length - keep} more characters cut to fit the model's context)`,
  ];
}

/** Lean's feedback as a repair block shows it at `fit`. */
function fittedFeedback(verdict: RepairVerdict, fit: RepairFit): string[] {
  const lines = feedbackLines(verdict);
  if (fit < 6) return lines;
  return lines
    .filter((line) => !line.startsWith(" ") && line !== GOALS_HEADING)
    .map((line) => line.slice(0, FIRST_LINE_CHARS));
}

/** The repair block and the prefix around it: the last attempt and Lean's feedback just above the hole's line. */
export function repairPrefix(
  prefix: string,
  indent: number,
  candidate: string,
  verdict: RepairVerdict,
  fit: RepairFit = 0,
): string {
  const pad = " ".repeat(indent);
  const comment = (text: string) => trimLineEnd(`${pad}-- ${text}`);
  const block = [
    comment(REPAIR_HEADER),
    ...attemptLines(candidate, fit).map((line) => comment(`  ${line}`)),
    comment("Lean said:"),
    ...fittedFeedback(verdict, fit).map((line) => comment(`  ${line}`)),
  ].join("\n");
  const lineStart = prefix.lastIndexOf("\n") + 1;
  return `${prefix.slice(0, lineStart)}${block}\n${prefix.slice(lineStart)}`;
}

/** The prompt parts of a repair turn: the task's parts with the last attempt and Lean's feedback above the hole. */
export function repairParts(
  parts: PromptParts,
  candidate: string,
  verdict: RepairVerdict,
  fit: RepairFit = 0,
): PromptParts {
  return { ...parts, prefix: repairPrefix(parts.prefix, parts.indent, candidate, verdict, fit) };
}

/** The task's own prefix again, without repair feedback (the scripted test models look tasks up by it). */
export function withoutRepairFeedback(prefix: string): string {
  const header = prefix.indexOf(`-- ${REPAIR_HEADER}`);
  if (header < 0) return prefix;
  const blockStart = prefix.lastIndexOf("\n", header) + 1;
  return prefix.slice(0, blockStart) + prefix.slice(prefix.lastIndexOf("\n") + 1);
}
