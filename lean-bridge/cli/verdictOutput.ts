/** How verdicts are printed: one JSON object per verdict (`--json`, verify-batch) or a few human lines. */
import { rewardOf, type RewardMode } from "../verify/rewards";
import type { Verdict } from "../verify/verdict";
import { UsageError } from "./usage";

export function rewardMode(text: string | undefined): RewardMode {
  if (text === undefined || text === "binary") return "binary";
  if (text === "partial") return "partial";
  throw new UsageError(`--reward must be binary or partial, got "${text}"`);
}

export function verdictJson(verdict: Verdict, mode: RewardMode): Record<string, unknown> {
  const { reward } = rewardOf(verdict, mode);
  const { kind, elapsedMs, verifier, diagnostics, ...details } = verdict;
  return {
    kind,
    reward,
    verifier: verifier.label,
    verifierKind: verifier.kind,
    elapsedMs,
    diagnostics,
    ...details,
  };
}

function firstLine(text: string): string {
  return text.split("\n")[0] ?? "";
}

/**
 * The human-readable verdict: a head line, the reason unless a diagnostic below already says it, then each
 * error or warning once (Lean may publish the same message twice across its incremental passes).
 */
export function describe(verdict: Verdict, reward: number): string {
  const head = `${verdict.kind} (reward ${reward}) — verifier: ${verdict.verifier.label}, ${verdict.elapsedMs} ms`;
  const seen = new Set<string>();
  const diags: string[] = [];
  for (const d of verdict.diagnostics) {
    if (d.severity > 2) continue;
    const where = d.candidateRange
      ? `candidate ${d.candidateRange.start.line}:${d.candidateRange.start.character}`
      : `document ${d.range.start.line}:${d.range.start.character}`;
    const line = `[${d.severity === 1 ? "error" : "warning"} at ${where}] ${d.message.replace(/\n/g, "\n    ")}`;
    if (seen.has(line)) continue;
    seen.add(line);
    diags.push(line);
  }
  const shownFirstLines = new Set(verdict.diagnostics.map((d) => firstLine(d.message)));
  let detail = "";
  if (verdict.kind === "failed") {
    if (!shownFirstLines.has(verdict.reason) || diags.length === 0) detail = verdict.reason;
  } else if (verdict.kind === "rejected" || verdict.kind === "crashed") detail = verdict.reason;
  else if (verdict.kind === "incomplete")
    detail = `${verdict.reason}${verdict.goalsLeft ? `, ${verdict.goalsLeft} goal(s) left` : ""}`;
  else if (verdict.kind === "timeout") detail = `no result within ${verdict.timeoutMs} ms`;
  else if (verdict.kind === "proved" && !verdict.axiomsChecked)
    detail = "axioms not checked: `#print axioms` needs a name, and this declaration has none";
  else {
    // Verdict kinds added later (e.g. environment failures) still show their reason.
    const other = verdict as { reason?: unknown };
    if (typeof other.reason === "string") detail = other.reason;
  }
  return [head, ...(detail ? [detail] : []), ...diags].join("\n  ");
}
