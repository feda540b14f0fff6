/** Pool verdicts as the trainer protocol's BatchVerdict: one conversion for the trainer's host and the service. */
import type { BatchVerdict, CandidateDiagnostic, VerdictKind, VerifierIdentity } from "../protocol/trainer";
import { rewardOf, type RewardMode } from "../verify/rewards";
import { isKernelGateFailure, type Verdict } from "../verify/verdict";

export function batchVerdict(taskId: string, verdict: Verdict, mode: RewardMode): BatchVerdict {
  const reward = rewardOf(verdict, mode);
  const diagnostics: CandidateDiagnostic[] = verdict.diagnostics.map((d) => ({
    severity: d.severity,
    message: d.message,
    candidateRange: d.candidateRange,
  }));
  // Verdicts without a Lean message (rejected, timeout, crashed, environment) still say why, and what to do.
  const reason = "reason" in verdict && typeof verdict.reason === "string" ? verdict.reason : undefined;
  const action = "action" in verdict && typeof verdict.action === "string" ? ` (${verdict.action})` : "";
  if (diagnostics.length === 0 && reason && verdict.kind !== "proved")
    diagnostics.push({ severity: 1, message: reason + action, candidateRange: null });
  return {
    taskId,
    kind: verdict.kind,
    reward: reward.reward,
    rewardMetrics: reward.metrics,
    diagnostics,
    elapsedMs: verdict.elapsedMs,
    cached: verdict.cached === true,
    verifier: verdict.verifier,
    ...(verdict.kind === "timeout" || verdict.kind === "crashed" ? { cause: verdict.cause } : {}),
    ...(verdict.kind === "proved" ? { confirmedBy: verdict.confirmedBy ?? "server" } : {}),
    ...(verdict.kind === "rejected" ? { rule: verdict.rule } : {}),
    ...(isKernelGateFailure(verdict) ? { hack: true } : {}),
  };
}

/**
 * A verdict that was not produced by a check (bad item, service gone, verifier stopped), with its message. A
 * timeout or crash here is never the candidate's doing: its cause is the infrastructure.
 */
export function bareVerdict(
  taskId: string,
  kind: VerdictKind,
  message: string,
  verifier: VerifierIdentity,
): BatchVerdict {
  return {
    taskId,
    kind,
    reward: 0,
    rewardMetrics: {},
    diagnostics: [{ severity: 1, message, candidateRange: null }],
    elapsedMs: 0,
    cached: false,
    verifier,
    ...(kind === "timeout" || kind === "crashed" ? { cause: "infrastructure" as const } : {}),
  };
}
