/**
 * Fill one hole with a model: n candidates from the backend, each checked by the verifier, ranked so that what
 * Lean proves comes first (shortest first), then the best attempts (fewest goals left, then errors) with Lean's
 * messages. Shared by the editor's "Fill Hole with Model" and tests; no `vscode` here.
 */
import type { BackendErrorCause, ModelBackend, PromptParts, SamplingSettings } from "../models/backend";
import { outcomeOf, type Outcome } from "../eval/outcomes";
import type { Verdict } from "../verify/verdict";

export interface FilledCandidate {
  text: string;
  raw: string;
  verdict: Verdict;
  outcome: Outcome;
  /** How many of the n samples wrote this same candidate. */
  count: number;
  latencyMs: number;
}

export type FillResult =
  | { kind: "ok"; candidates: FilledCandidate[]; prompt: string; samples: number }
  | { kind: "cancelled" }
  | { kind: "error"; cause: BackendErrorCause; message: string; hint: string };

const OUTCOME_RANK: Record<Outcome, number> = {
  proved: 0,
  "lean-error": 1,
  sorry: 2,
  timeout: 3,
  infrastructure: 4,
};

/** Goals left after an attempt, when Lean said (fewer is a better attempt); Infinity when unknown. */
function goalsLeft(verdict: Verdict): number {
  return verdict.kind === "incomplete" && verdict.reason === "unsolved-goals" ? verdict.goalsLeft : Infinity;
}

export function rankCandidates(candidates: FilledCandidate[]): FilledCandidate[] {
  return [...candidates].sort(
    (a, b) =>
      OUTCOME_RANK[a.outcome] - OUTCOME_RANK[b.outcome] ||
      goalsLeft(a.verdict) - goalsLeft(b.verdict) ||
      b.count - a.count ||
      a.text.length - b.text.length,
  );
}

export async function fillHole(request: {
  backend: ModelBackend;
  parts: PromptParts;
  n: number;
  sampling: SamplingSettings;
  verify(candidate: string, signal: AbortSignal): Promise<Verdict>;
  signal: AbortSignal;
  /** Called as candidates arrive and are checked (for progress). */
  onProgress?(stage: "generated" | "verified", done: number, total: number): void;
}): Promise<FillResult> {
  const generated = await request.backend.generate(
    request.parts,
    request.n,
    request.sampling,
    request.signal,
  );
  if (request.signal.aborted || (generated.kind === "error" && generated.cause === "aborted"))
    return { kind: "cancelled" };
  if (generated.kind === "error") return generated;
  request.onProgress?.("generated", generated.candidates.length, request.n);
  // The same text twice is checked once (and shown once, with its count).
  const distinct = new Map<string, { raw: string; count: number; latencyMs: number }>();
  for (const c of generated.candidates) {
    if (!c.text.trim()) continue;
    const seen = distinct.get(c.text);
    if (seen) seen.count++;
    else distinct.set(c.text, { raw: c.raw, count: 1, latencyMs: c.latencyMs });
  }
  let verified = 0;
  const checked = await Promise.all(
    [...distinct].map(async ([text, c]): Promise<FilledCandidate> => {
      const verdict = await request.verify(text, request.signal);
      request.onProgress?.("verified", ++verified, distinct.size);
      return {
        text,
        raw: c.raw,
        verdict,
        outcome: outcomeOf(verdict),
        count: c.count,
        latencyMs: c.latencyMs,
      };
    }),
  );
  if (request.signal.aborted) return { kind: "cancelled" };
  return {
    kind: "ok",
    candidates: rankCandidates(checked),
    prompt: generated.prompt,
    samples: generated.candidates.length,
  };
}
