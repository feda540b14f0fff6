/**
 * The outcome of checking one candidate for one hole. Every verdict says which verifier produced it, so a
 * reward from the simulator can never pass for a reward from Lean.
 */
import type { Range } from "../protocol/lsp";
import type { DiagnosticSeverity } from "../protocol/lsp";

export interface VerifierIdentity {
  kind: "lean" | "simulator";
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
      axioms: string[];
      /**
       * False for anonymous declarations (`example`, unnamed instances): `#print axioms` needs a name, so
       * such a proof was checked for errors and `sorry` only, not for axioms like `Lean.ofReduceBool`.
       */
      axiomsChecked: boolean;
    })
  | (VerdictBase & { kind: "failed"; reason: string })
  | (VerdictBase & { kind: "incomplete"; reason: "unsolved-goals" | "sorry"; goalsLeft: number })
  | (VerdictBase & { kind: "rejected"; rule: string; reason: string })
  | (VerdictBase & { kind: "timeout"; timeoutMs: number })
  | (VerdictBase & { kind: "crashed"; reason: string });

export type VerdictKind = Verdict["kind"];

export const VERDICT_KINDS: readonly VerdictKind[] = [
  "proved",
  "failed",
  "incomplete",
  "rejected",
  "timeout",
  "crashed",
];

/** A verdict before the pool stamps it with time and verifier (distributes over the union). */
export type VerdictOutcome = Verdict extends infer V
  ? V extends Verdict
    ? Omit<V, "elapsedMs" | "verifier">
    : never
  : never;
