/**
 * The outcome of checking one candidate for one hole. Every verdict says which verifier produced it, so a
 * reward from the simulator can never pass for a reward from Lean.
 */
import type { Range } from "vscode-languageserver-protocol";
import type { DiagnosticSeverity } from "vscode-languageserver-protocol";
import { isMaskedVerdict, type ConfirmedBy, type VerdictCause } from "../protocol/trainer";

export type { ConfirmedBy, VerdictCause } from "../protocol/trainer";

/**
 * The `rejected` rule of a candidate the kernel gate refuted after Lean's server had proved it: a declaration it
 * depends on fails the kernel's replay, it rests on an axiom outside the allow-list (one declared in the check
 * document included), or the document does not compile, or the gate cannot finish, in a fresh Lean process
 * (kernelGate.ts). Reward 0, never masked: counted and logged as a hack.
 */
export const KERNEL_GATE_RULE = "kernel-replay-failed";

export interface VerifierIdentity {
  kind: "lean" | "simulator" | "kimina";
  /** The Lean toolchain (e.g. "leanprover/lean4:v4.24.0") or the simulator's version. */
  version: string;
  /** What users see, e.g. "Lean leanprover/lean4:v4.24.0" or "simulator (not Lean)". */
  label: string;
}

export interface CandidateDiagnostic {
  severity: DiagnosticSeverity;
  message: string;
  /** The range in the check document. */
  range: Range;
  /** The same range relative to the candidate text (line 0 = the candidate's first line), or null when outside it. */
  candidateRange: Range | null;
  code?: string | number;
}

interface VerdictBase {
  elapsedMs: number;
  verifier: VerifierIdentity;
  diagnostics: CandidateDiagnostic[];
  /** True when the verdict came from the cache rather than a fresh check. */
  cached?: boolean;
}

export type Verdict =
  | (VerdictBase & {
      kind: "proved";
      /** The axioms `#print axioms` reported for exactly the checked declaration (all on the allow-list). */
      axioms: string[];
      /**
       * Always true: every hole is axiom-checked or not proved (anonymous declarations are checked under a
       * name the verifier gives them). Kept so older readers of the field see the truth.
       */
      axiomsChecked: true;
      /**
       * What confirmed the proof: "server" (the check's Lean server alone) or "kernel-replay" (the kernel gate
       * too, kernelGate.ts). Every verifier sets it; absent only in verdicts made before the gate existed.
       */
      confirmedBy?: ConfirmedBy;
    })
  | (VerdictBase & { kind: "failed"; reason: string })
  | (VerdictBase & {
      kind: "incomplete";
      reason: "unsolved-goals" | "sorry";
      /** Goals Lean reports left after the candidate (0 for `sorry`). */
      goalsLeft: number;
      /**
       * Goals at the hole's start, as Lean's `$/lean/plainGoal` showed them; absent when Lean did not
       * answer. Partial credit needs it: only fewer goals than at the hole count as progress.
       */
      goalsAtHole?: number;
      /**
       * Goals Lean shows right after the candidate's last tactic (`$/lean/plainGoal` at its end), before the
       * rest of the proof runs; absent when Lean did not answer.
       */
      goalsAfterCandidate?: number;
    })
  /**
   * The workspace, not the candidate, failed: imports out of date, `lake setup-file` failed, an error in the
   * file's header. Never cached, never rewarded, never counted against the model; `action` says what to do.
   */
  | (VerdictBase & { kind: "environment"; reason: string; action: string })
  | (VerdictBase & { kind: "rejected"; rule: string; reason: string })
  /**
   * No answer within the check's limit. cause candidate: Lean was elaborating the checked declaration when
   * time ran out (a failure, trained on); infrastructure: it never got there (masked). See isMasked.
   */
  | (VerdictBase & { kind: "timeout"; timeoutMs: number; cause: VerdictCause })
  /** cause candidate: the worker crashed on this candidate twice, the second time on a fresh worker. */
  | (VerdictBase & { kind: "crashed"; reason: string; cause: VerdictCause });

export type VerdictKind = Verdict["kind"];

/** A verdict before the pool stamps it with time and verifier (distributes over the union). */
export type VerdictOutcome = Verdict extends infer V
  ? V extends Verdict
    ? Omit<V, "elapsedMs" | "verifier">
    : never
  : never;

/**
 * Whether training leaves this verdict out of the loss (protocol/trainer.ts holds the one definition):
 * environment, and a timeout or crash of the infrastructure. A candidate's own timeout or crash is a failure.
 */
export function isMasked(verdict: Pick<Verdict, "kind"> & { cause?: VerdictCause }): boolean {
  return isMaskedVerdict(verdict);
}

/** Whether the kernel gate caught this candidate: a proof by Lean's server that the kernel refutes (a hack). */
export function isKernelGateFailure(verdict: Pick<Verdict, "kind"> & { rule?: string }): boolean {
  return verdict.kind === "rejected" && verdict.rule === KERNEL_GATE_RULE;
}
