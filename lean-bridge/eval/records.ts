/**
 * The files `fim-rlvr eval` writes into EVAL_DIR: results.jsonl (one line per candidate and turn, each carrying
 * the run's identity) and summary.json (the figures). The field names are a contract (README, "Evaluating a
 * model"): later tools and `eval --compare` read them.
 */
import type { CandidateDiagnostic, VerdictKind, VerifierIdentity } from "../verify/verdict";
import type { Outcome } from "./outcomes";
import type { PassAtKFigure } from "./passAtK";

/** What decides the figures: recorded on every result line and in the summary; `--resume` must match it. */
export interface EvalIdentity {
  /** The model spec as given (never a key), the backend, the model's name and, when known, a digest of its files. */
  model: { spec: string; backend: string; name: string; digest?: string };
  /** The resolved prompt style (`qwen`, `chat`, `instruction`…) and the options asked for. */
  prompt: { style: string; asked: string; showGoal: boolean; maxPromptTokens: number };
  sampling: { n: number; temperature: number; topP: number; maxNewTokens: number };
  /** The base seed; each request's seed is derived from it, the task and the turn (`requestSeed`). */
  seed: number;
  /** Repair turns allowed after a failed candidate. */
  repair: number;
  /** The verifier: Lean with its toolchain, or the simulator (named as such, never as Lean). */
  verifier: VerifierIdentity;
  /** The dataset: its folder name, the workspace it was exported from, and SHA-256 of tasks.jsonl + files.jsonl. */
  dataset: { id: string; workspace: string | null; sha256: string };
  /** Which tasks: the split and hole kinds. */
  selection: { split: string; kinds: string[] };
}

/** One line of results.jsonl: one candidate of one sample at one turn. */
export interface ResultLine {
  task_id: string;
  file: string;
  kind: string;
  split: string;
  /** The dataset's de-duplication mark: true novel, false memorised, null unknown. */
  novel: boolean | null;
  /**
   * How the dataset holds the task out: "instance" (a declaration of a family training has), "family" (a family
   * training never sees), null where it does not say (absent on lines written before it was recorded).
   */
  held_out?: "instance" | "family" | null;
  /** Which of the n samples (0-based). */
  sample: number;
  /** 0 for the first attempt, 1..R for repair turns. */
  turn: number;
  /** True on the sample's last turn: the line pass@k counts. */
  final: boolean;
  candidate: string;
  /** What the model wrote, before cleaning. */
  raw: string;
  outcome: Outcome;
  /** The verifier's verdict (null when the backend failed and nothing was verified). */
  verdict: {
    kind: VerdictKind;
    cause?: "candidate" | "infrastructure";
    reason?: string;
    elapsedMs: number;
    cached: boolean;
    diagnostics: CandidateDiagnostic[];
  } | null;
  /**
   * When the backend failed: its cause and message. The outcome is infrastructure, except for a repair turn whose
   * prompt the model's context could not hold even shortened (cause `context-length`): that line carries the
   * sample's last verified outcome, a miss.
   */
  backendError?: { cause: string; message: string };
  /**
   * A repair turn's prompt shortened to fit the model's context: the level (repair.ts `RepairFit`, 1–6; absent
   * when the prompt was the training one).
   */
  repair_fit?: number;
  /** Attempts the infrastructure needed (1 when nothing was retried). */
  attempts: number;
  latency_ms: number;
  prompt_tokens: number | null;
  completion_tokens: number | null;
  /** The seed of the request that produced this candidate. */
  seed: number;
  run: EvalIdentity;
}

export interface OutcomeCounts {
  samples: number;
  /** Samples pass@k counts (infrastructure left out). */
  counted: number;
  outcomes: Record<Outcome, number>;
}

/** pass@k figures of one group of tasks (keys are the k values). */
export interface GroupFigures extends OutcomeCounts {
  tasks: number;
  passAtK: Record<string, PassAtKFigure>;
}

export interface EvalSummary {
  format: "fim-rlvr-eval/1";
  run: EvalIdentity;
  ks: number[];
  /** Tasks selected, and how many have all their samples recorded. */
  tasks: { selected: number; done: number };
  /** True when the evaluation stopped before every task was done (Ctrl-C, a backend that cannot go on). */
  partial: boolean;
  overall: GroupFigures;
  byKind: Record<string, GroupFigures>;
  byFile: Record<string, GroupFigures>;
  /** novel / memorised / unknown (tasks the dataset does not mark). */
  byNovelty: Record<string, GroupFigures>;
  /**
   * Held-out instances / families / unknown, as the quick start's summary splits them; empty when no task says
   * (absent in summaries written before it was recorded).
   */
  byHeldOut?: Record<string, GroupFigures>;
  /** Final verdicts by kind (the verifier's words: proved, failed, incomplete, rejected, timeout, crashed, environment). */
  verdicts: Record<string, number>;
  /** Model latency per request, ms (p50/p95 over the candidates that have one). */
  latencyMs: { p50: number | null; p95: number | null; mean: number | null };
  /** Verification time per candidate, ms. */
  verifyMs: { p50: number | null; p95: number | null };
  tokens: { prompt: number; completion: number; known: number };
  /** Proved samples by the turn that proved them (0: the first attempt); only with --repair. */
  provedAtTurn: Record<string, number>;
  /** Backend failures by cause (after retries), recorded apart. */
  backendErrors: Record<string, number>;
  wallSeconds: number;
  writtenAt: string;
}
