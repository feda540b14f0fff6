/**
 * The Markdown of a hole's hover: the latest candidate, its verdict with Lean's messages, the reward, the
 * step and the algorithm, and a "Show all attempts" command link. Pure (the adapter wraps it in a trusted
 * MarkdownString that allows only that one command).
 */
import type { Attempt, HoleRecord } from "./holeStore";

export const SHOW_ATTEMPTS_COMMAND = "fimRlvr.showAttempts";

/** A message as the hover shows it; severity names come from VS Code's converted diagnostics. */
export interface HoverMessage {
  severity: string;
  /** 0-based line within the candidate, when Lean gave a range. */
  line: number | null;
  message: string;
}

const VERDICT_MARK: Record<string, string> = {
  proved: "$(pass-filled)",
  failed: "$(error)",
  incomplete: "$(circle-large-outline)",
  timeout: "$(watch)",
  rejected: "$(circle-slash)",
  crashed: "$(debug-disconnect)",
  environment: "$(tools)",
};

/** A fence longer than any run of backticks inside `text`, so the text cannot close it. */
export function fence(text: string, language: string): string {
  const longest = Math.max(2, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
  const ticks = "`".repeat(longest + 1);
  return `${ticks}${language}\n${text}\n${ticks}`;
}

export function attemptSummary(attempt: Attempt): string {
  return `${attempt.verdict} · reward ${attempt.reward.toFixed(2)} · step ${attempt.step} · ${attempt.algorithm}`;
}

export function hoverMarkdown(hole: HoleRecord, messages: readonly HoverMessage[]): string {
  const latest = hole.latest;
  const parts = [
    `**FIM-RLVR** · ${hole.kind} hole · best so far: **${hole.best}**`,
    `${VERDICT_MARK[latest.verdict] ?? ""} **${latest.verdict}** · reward ${latest.reward.toFixed(2)} · step ${latest.step} · ${latest.algorithm}`,
    fence(latest.candidate, "lean"),
  ];
  if (messages.length) {
    const lines = messages.map(
      (m) => `${m.severity}${m.line === null ? "" : ` (candidate line ${m.line + 1})`}: ${m.message}`,
    );
    parts.push("Lean's messages:", fence(lines.join("\n"), "text"));
  }
  const args = encodeURIComponent(JSON.stringify([hole.taskId]));
  parts.push(`[Show all attempts (${hole.total})](command:${SHOW_ATTEMPTS_COMMAND}?${args})`);
  return parts.join("\n\n");
}
