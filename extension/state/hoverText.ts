/**
 * The Markdown of a hole's hover: the latest candidate, its verdict with the messages of the verifier that wrote
 * them (Lean, or the simulator, never called Lean), the reward, the step and the algorithm (for a candidate Fill
 * Hole inserted: the model instead), and a "Show all attempts" command link. Pure (the adapter wraps it in a
 * trusted MarkdownString that allows only that one command).
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

/** A training sample's reward, step and algorithm; for a candidate Fill Hole inserted, the model that wrote it. */
function attemptDetails(attempt: Attempt): string {
  if (attempt.model !== undefined) return `Fill Hole · model ${attempt.model}`;
  return `reward ${attempt.reward.toFixed(2)} · step ${attempt.step} · ${attempt.algorithm}`;
}

export function attemptSummary(attempt: Attempt): string {
  return `${attempt.verdict} · ${attemptDetails(attempt)}`;
}

/** Whose messages these are: "Lean's messages" only when Lean wrote them ("Lean" or "Lean <toolchain>"). */
export function messagesHeading(attempt: Attempt): string {
  if (attempt.verifier === "Lean" || attempt.verifier?.startsWith("Lean ")) return "Lean's messages:";
  if (attempt.verifier?.includes("simulator")) return "The simulator's messages (not Lean):";
  return "The verifier's messages:";
}

/** "in theorem Foo.bar" (or "in an example"), when the run's dataset named the declaration. */
export function declarationPhrase(hole: HoleRecord): string {
  if (hole.decl === undefined) return "";
  return hole.decl ? ` in ${hole.decl}` : " in an example";
}

/** A FIM Holes row: the declaration when known ("example" for an anonymous one), then the line. */
export function holeRowLabel(hole: HoleRecord): string {
  const line = `line ${hole.range.start.line + 1}`;
  if (hole.decl === undefined) return line;
  return `${hole.decl || "example"} · ${line}`;
}

export function hoverMarkdown(hole: HoleRecord, messages: readonly HoverMessage[], marker = ""): string {
  const latest = hole.latest;
  const verifier = latest.verifier ? ` · verifier: ${latest.verifier}` : "";
  const parts = [
    `**FIM-RLVR** · ${marker ? `${marker} ` : ""}${hole.kind} hole${declarationPhrase(hole)} · best so far: **${hole.best}**${verifier}`,
    `${VERDICT_MARK[latest.verdict] ?? ""} **${latest.verdict}** · ${attemptDetails(latest)}`,
    fence(latest.candidate, "lean"),
  ];
  if (messages.length) {
    const lines = messages.map(
      (m) => `${m.severity}${m.line === null ? "" : ` (candidate line ${m.line + 1})`}: ${m.message}`,
    );
    parts.push(messagesHeading(latest), fence(lines.join("\n"), "text"));
  }
  const args = encodeURIComponent(JSON.stringify([hole.taskId]));
  parts.push(`[Show all attempts (${hole.total})](command:${SHOW_ATTEMPTS_COMMAND}?${args})`);
  return parts.join("\n\n");
}
