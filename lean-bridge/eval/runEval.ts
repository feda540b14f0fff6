/**
 * The evaluation loop: for every selected task, n samples from the model in one request, each verified through
 * the pool; a failed sample gets up to R repair turns with Lean's feedback. Infrastructure failures (a backend
 * error of a transient cause, a verdict whose cause is infrastructure) are retried a bounded number of times and
 * then recorded as `infrastructure`, which pass@k leaves out. A task's lines are appended to results.jsonl in one
 * write when all its samples are final, so results.jsonl only ever holds whole tasks (a torn last line aside).
 *
 * A prompt the model's context cannot hold (`context-length`) ends nothing: the task's own prompt is recorded as
 * infrastructure (it is ours, not the model's), and a repair prompt is asked again with its block shortened
 * (repair.ts `RepairFit`); one that does not fit even then leaves the sample at its last verified turn's outcome,
 * recorded as an unverified final turn with the cause. That outcome is a miss, never left out: a model must not be
 * able to have a failed sample dropped from pass@k by writing an attempt too long to be shown back.
 */
import { appendFileSync } from "node:fs";
import { createHash } from "node:crypto";
import type { Range } from "vscode-languageserver-protocol";
import type {
  BackendErrorCause,
  Candidate,
  GenerateResult,
  ModelBackend,
  PromptParts,
  SamplingSettings,
} from "../models/backend";
import type { Verdict } from "../verify/verdict";
import { outcomeOf, retryable, verdictCause } from "./outcomes";
import type { EvalIdentity, ResultLine } from "./records";
import { REPAIR_FITS, repairParts, repairVerdict, type RepairFit } from "./repair";

export interface EvalTask {
  id: string;
  file: string;
  kind: string;
  split: string;
  novel: boolean | null;
  /** How the dataset holds the task out ("instance", "family"), or null where it does not say. */
  heldOut: "instance" | "family" | null;
  range: Range;
  parts: PromptParts;
  /** The task's own proof (scripted test models answer with it; never shown to a real model). */
  middle: string;
}

/** Backend failures that no retry fixes: the evaluation stops and says what to do. */
const FATAL_CAUSES: readonly BackendErrorCause[] = [
  "auth",
  "model-not-found",
  "unsupported-parameter",
  "model-files",
  "prompt",
];

export interface EvalLoopOptions {
  backend: ModelBackend;
  verify(task: EvalTask, candidate: string): Promise<Verdict>;
  tasks: readonly EvalTask[];
  n: number;
  sampling: Omit<SamplingSettings, "seed">;
  run: EvalIdentity;
  resultsPath: string;
  /** Tasks worked on at once. */
  concurrency: number;
  /** Extra attempts for a transient backend failure, and for a verdict whose cause is infrastructure. */
  retries: number;
  signal: AbortSignal;
  onTaskDone?(lines: readonly ResultLine[]): void;
}

export type EvalLoopResult =
  | { kind: "done" }
  | { kind: "aborted" }
  | { kind: "backend-failed"; cause: BackendErrorCause; message: string; hint: string };

/** The seed of one request, derived from the run's seed so that a resumed run asks exactly what it would have. */
export function requestSeed(seed: number, taskId: string, turn: number, sample: number): number {
  const digest = createHash("sha256").update(`${seed}\0${taskId}\0${turn}\0${sample}`).digest();
  return digest.readUInt32BE(0) & 0x7fffffff;
}

/**
 * One run of the loop: its options, and whether the model has answered any request yet. A model that was never
 * reached is not a run of infrastructure failures to leave out of pass@k but a wrong endpoint or one not started:
 * the evaluation stops at the first request that fails to connect through all its retries, and says so.
 */
type LoopRun = EvalLoopOptions & { modelAnswered: boolean };

class Fatal {
  constructor(readonly result: Extract<EvalLoopResult, { kind: "backend-failed" }>) {}
}
class Aborted {}

export async function runEvalLoop(loopOptions: EvalLoopOptions): Promise<EvalLoopResult> {
  const options: LoopRun = { ...loopOptions, modelAnswered: false };
  const queue = [...options.tasks];
  let fatal: Fatal | undefined;
  const worker = async (): Promise<void> => {
    for (let task = queue.shift(); task; task = queue.shift()) {
      if (options.signal.aborted || fatal) return;
      let lines: ResultLine[];
      try {
        lines = await evalTask(task, options);
      } catch (error) {
        if (error instanceof Fatal) fatal ??= error;
        else if (!(error instanceof Aborted)) throw error;
        return;
      }
      // Results that came back after Ctrl-C may be cut short (an aborted request, a stopped verifier): only
      // whole tasks from before the signal are kept.
      if (options.signal.aborted) return;
      appendFileSync(options.resultsPath, lines.map((l) => JSON.stringify(l) + "\n").join(""));
      options.onTaskDone?.(lines);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, options.concurrency) }, worker));
  if (fatal) return fatal.result;
  return options.signal.aborted ? { kind: "aborted" } : { kind: "done" };
}

type Generated =
  | { kind: "ok"; candidates: Candidate[]; attempts: number }
  | {
      kind: "infrastructure";
      candidates: Candidate[];
      cause: BackendErrorCause;
      message: string;
      attempts: number;
    };

/** One request, retried while its failure is transient; a failure no retry fixes ends the evaluation. */
async function generate(options: LoopRun, parts: PromptParts, n: number, seed: number): Promise<Generated> {
  let last: Extract<GenerateResult, { kind: "error" }> | undefined;
  for (let attempt = 1; attempt <= 1 + options.retries; attempt++) {
    if (options.signal.aborted) throw new Aborted();
    const result = await options.backend.generate(parts, n, { ...options.sampling, seed }, options.signal);
    if (result.kind === "ok" || result.cause !== "connection") options.modelAnswered = true;
    if (result.kind === "ok" && result.candidates.length >= n)
      return { kind: "ok", candidates: result.candidates.slice(0, n), attempts: attempt };
    if (result.kind === "ok") {
      last = {
        kind: "error",
        cause: "server",
        message: `the model answered ${result.candidates.length} candidate(s) where ${n} were asked for`,
        hint: "",
        partial: result.candidates,
      };
      continue;
    }
    if (result.cause === "aborted" || options.signal.aborted) throw new Aborted();
    if (FATAL_CAUSES.includes(result.cause))
      throw new Fatal({
        kind: "backend-failed",
        cause: result.cause,
        message: result.message,
        hint: result.hint,
      });
    if (result.cause === "context-length")
      // The same prompt will not fit on a retry; the caller may shorten it.
      return {
        kind: "infrastructure",
        candidates: result.partial ?? [],
        cause: result.cause,
        message: result.message,
        attempts: attempt,
      };
    last = result;
  }
  if (last!.cause === "connection" && !options.modelAnswered)
    throw new Fatal({
      kind: "backend-failed",
      cause: "connection",
      message: `the model could not be reached, in ${1 + options.retries} attempts: ${last!.message}`,
      hint: "Start the model's server, or check the URL in --model; then run the same command again.",
    });
  return {
    kind: "infrastructure",
    candidates: last!.partial ?? [],
    cause: last!.cause,
    message: last!.message,
    attempts: 1 + options.retries,
  };
}

/**
 * A repair turn's request: the training prompt first, then the block shortened level by level while the model's
 * context cannot hold it (levels that would send the same prompt again are skipped). `attempts` counts every
 * request; `fit` is the level that was sent last.
 */
async function generateRepair(
  options: LoopRun,
  parts: PromptParts,
  candidate: string,
  verdict: Verdict,
  seed: number,
): Promise<{ generated: Generated; fit: RepairFit }> {
  const feedback = repairVerdict(verdict);
  let requests = 0;
  let sent: string | undefined;
  let last: { generated: Generated; fit: RepairFit } | undefined;
  for (const fit of REPAIR_FITS) {
    const fitted = repairParts(parts, candidate, feedback, fit);
    if (fitted.prefix === sent) continue;
    sent = fitted.prefix;
    const generated = await generate(options, fitted, 1, seed);
    requests += generated.attempts;
    last = { generated: { ...generated, attempts: requests }, fit };
    if (generated.kind === "ok" || generated.cause !== "context-length" || generated.candidates.length > 0)
      return last;
  }
  return last!;
}

async function verifyWithRetry(
  options: LoopRun,
  task: EvalTask,
  candidate: string,
): Promise<{ verdict: Verdict; attempts: number }> {
  let verdict = await options.verify(task, candidate);
  let attempts = 1;
  while (retryable(verdict) && attempts <= options.retries && !options.signal.aborted) {
    verdict = await options.verify(task, candidate);
    attempts++;
  }
  return { verdict, attempts };
}

function verdictRecord(verdict: Verdict): NonNullable<ResultLine["verdict"]> {
  const reason = (verdict as { reason?: unknown }).reason;
  return {
    kind: verdict.kind,
    ...(verdict.kind === "timeout" || verdict.kind === "crashed" ? { cause: verdictCause(verdict) } : {}),
    ...(typeof reason === "string" ? { reason } : {}),
    elapsedMs: verdict.elapsedMs,
    cached: verdict.cached === true,
    diagnostics: verdict.diagnostics,
  };
}

async function evalTask(task: EvalTask, options: LoopRun): Promise<ResultLine[]> {
  const seed0 = requestSeed(options.run.seed, task.id, 0, 0);
  const first = await generate(options, task.parts, options.n, seed0);
  const base = {
    task_id: task.id,
    file: task.file,
    kind: task.kind,
    split: task.split,
    novel: task.novel,
    held_out: task.heldOut,
    run: options.run,
  };
  const infrastructureLine = (
    sample: number,
    turn: number,
    failed: Extract<Generated, { kind: "infrastructure" }>,
    seed: number,
  ): ResultLine => ({
    ...base,
    sample,
    turn,
    final: true,
    candidate: "",
    raw: "",
    outcome: "infrastructure",
    verdict: null,
    backendError: { cause: failed.cause, message: failed.message },
    attempts: failed.attempts,
    latency_ms: 0,
    prompt_tokens: null,
    completion_tokens: null,
    seed,
  });
  /** A repair turn the model's context could not hold even shortened: the sample stays what its last turn was. */
  const unfitLine = (
    previous: ResultLine,
    failed: Extract<Generated, { kind: "infrastructure" }>,
    seed: number,
  ): ResultLine => ({
    ...infrastructureLine(previous.sample, previous.turn + 1, failed, seed),
    outcome: previous.outcome,
  });

  const sampleLines = async (sample: number): Promise<ResultLine[]> => {
    const lines: ResultLine[] = [];
    let candidate = first.candidates[sample];
    if (!candidate && first.kind === "infrastructure") return [infrastructureLine(sample, 0, first, seed0)];
    let attemptsSoFar = first.attempts;
    let seed = seed0;
    let fit: RepairFit = 0;
    for (let turn = 0; candidate; turn++) {
      const { verdict, attempts } = await verifyWithRetry(options, task, candidate.text);
      const outcome = outcomeOf(verdict);
      const last = outcome === "proved" || outcome === "infrastructure" || turn >= options.run.repair;
      lines.push({
        ...base,
        sample,
        turn,
        final: last,
        candidate: candidate.text,
        raw: candidate.raw,
        outcome,
        verdict: verdictRecord(verdict),
        attempts: Math.max(attemptsSoFar, attempts),
        latency_ms: candidate.latencyMs,
        prompt_tokens: candidate.promptTokens,
        completion_tokens: candidate.completionTokens,
        seed,
        ...(fit > 0 ? { repair_fit: fit } : {}),
      });
      if (last) break;
      seed = requestSeed(options.run.seed, task.id, turn + 1, sample);
      const asked = await generateRepair(options, task.parts, candidate.text, verdict, seed);
      const next = asked.generated;
      fit = asked.fit;
      attemptsSoFar = next.attempts;
      candidate = next.candidates[0];
      if (!candidate && next.kind === "infrastructure") {
        const previous = lines[lines.length - 1]!;
        previous.final = false;
        // A prompt too long even shortened counts as the miss it was; any other failure leaves the repair turn's
        // outcome unknown, and the sample out rather than counted as a miss.
        lines.push(
          next.cause === "context-length"
            ? unfitLine(previous, next, seed)
            : infrastructureLine(sample, turn + 1, next, seed),
        );
      }
    }
    return lines;
  };
  const perSample = await Promise.all(Array.from({ length: options.n }, (_, sample) => sampleLines(sample)));
  return perSample.flat();
}
