/**
 * What the commands need of a verifier, whichever server checks: the pool over a Lean language server (or
 * the simulator), or a Kimina Lean Server (kimina/verifier.ts). Both put the same policy and check document
 * in front of Lean and classify its answer the same way; verdicts name the verifier that made them.
 */
import type { Range } from "vscode-languageserver-protocol";
import type { KernelGateStage } from "./gateStage";
import type { HoleShape } from "./holeShape";
import type { StatementCheck } from "./statementCheck";
import type { Verdict, VerifierIdentity } from "./verdict";

/** One hole to check: the file it is in, where, and the file's text when the caller has it. */
export interface VerifyTask {
  /** Path of the Lean file, relative to the project root. */
  file: string;
  /** LSP range: 0-based lines, UTF-16 characters. */
  hole: Range;
  /** The file's text, when the caller already has it (otherwise it is read from disk). */
  text?: string;
}

export interface VerifierStatsCounters {
  checks: number;
  cacheHits: number;
  restarts: number;
  timeouts: number;
  crashes: number;
}

export interface Verifier {
  readonly identity: VerifierIdentity;
  readonly stats: VerifierStatsCounters;
  /** Checks run at once. */
  readonly slotCount: number;
  /** The time limit of one check, ms. */
  readonly timeoutMs: number;
  /**
   * The longest one verification can take on a verifier that works (a proved candidate's includes the hole's
   * no-op check, noopProbe.ts), ms, queueing for a slot aside: what a caller
   * waiting on many checks must allow (the trainer's batch deadline, `initialize.verifierBudget`).
   */
  readonly checkBoundMs: number;
  /** Memory all Lean workers together may use, MB (0 when the verifier does not manage workers). */
  readonly memoryBudgetMb: number;
  /** What the server said on stderr (empty for a remote verifier). */
  readonly serverStderr: string;
  /** The kernel gate its proofs go through (gateStage.ts); absent: proofs stand on the server's word. */
  readonly kernelGate?: KernelGateStage;
  verify(task: VerifyTask, candidate: string): Promise<Verdict>;
  verifyMany(
    items: readonly { task: VerifyTask; candidate: string }[],
    onProgress?: (done: number, total: number, verdict: Verdict) => void,
    signal?: AbortSignal,
  ): Promise<Verdict[]>;
  /** Whether each hole is a whole tactic sequence to Lean (`sorry` in its place; holeShape.ts). */
  checkHoleShapes(
    tasks: readonly VerifyTask[],
    onProgress?: (done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<HoleShape[]>;
  /** Whether each hole's declaration elaborates with `sorry` as the hole (statementCheck.ts). */
  checkStatements(
    tasks: readonly VerifyTask[],
    onProgress?: (done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<StatementCheck[]>;
  /** The goal state at each hole as Lean prints it, undefined where it gives none (goalAtHole.ts). */
  goalsAtHoles(
    tasks: readonly VerifyTask[],
    onProgress?: (done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<(string | undefined)[]>;
  stop(): Promise<void>;
}
