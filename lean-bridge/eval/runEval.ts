/**
 * The evaluation loop: for every selected task, n samples from the model in one request, each verified through
 * the pool; a failed sample gets up to R repair turns with Lean's feedback. Infrastructure failures (a backend
 * error of a transient cause, a verdict whose cause is infrastructure) are retried a bounded number of times and
 * then recorded as `infrastructure`, which pass@k leaves out. A task's lines are appended to results.jsonl in one
 * write when all its samples are final, so results.jsonl only ever holds whole tasks (a torn last line aside).
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
import { repairParts, repairVerdict } from "./repair";

export interface EvalTask {
  id: string;
  file: string;
  kind: string;
  split: string;
  novel: boolean | null;
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

class Fatal {
  constructor(readonly result: Extract<EvalLoopResult, { kind: "backend-failed" }>) {}
}
class Aborted {}

export async function runEvalLoop(options: EvalLoopOptions): Promise<EvalLoopResult> {
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
async function generate(
  options: EvalLoopOptions,
  parts: PromptParts,
  n: number,
  seed: number,
): Promise<Generated> {
  let last: Extract<GenerateResult, { kind: "error" }> | undefined;
  for (let attempt = 1; attempt <= 1 + options.retries; attempt++) {
    if (options.signal.aborted) throw new Aborted();
    const result = await options.backend.generate(parts, n, { ...options.sampling, seed }, options.signal);
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
    last = result;
  }
  return {
    kind: "infrastructure",
    candidates: last!.partial ?? [],
    cause: last!.cause,
    message: last!.message,
    attempts: 1 + options.retries,
  };
}

async function verifyWithRetry(
  options: EvalLoopOptions,
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

async function evalTask(task: EvalTask, options: EvalLoopOptions): Promise<ResultLine[]> {
  const seed0 = requestSeed(options.run.seed, task.id, 0, 0);
  const first = await generate(options, task.parts, options.n, seed0);
  const base = {
    task_id: task.id,
    file: task.file,
    kind: task.kind,
    split: task.split,
    novel: task.novel,
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

  const sampleLines = async (sample: number): Promise<ResultLine[]> => {
    const lines: ResultLine[] = [];
    let candidate = first.candidates[sample];
    if (!candidate && first.kind === "infrastructure") return [infrastructureLine(sample, 0, first, seed0)];
    let attemptsSoFar = first.attempts;
    let seed = seed0;
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
      });
      if (last) break;
      seed = requestSeed(options.run.seed, task.id, turn + 1, sample);
      const next = await generate(
        options,
        repairParts(task.parts, candidate.text, repairVerdict(verdict)),
        1,
        seed,
      );
      attemptsSoFar = next.attempts;
      candidate = next.candidates[0];
      if (!candidate && next.kind === "infrastructure") {
        // The repair turn's outcome is unknown: the sample is left out rather than counted as a miss.
        lines[lines.length - 1]!.final = false;
        lines.push(infrastructureLine(sample, turn + 1, next, seed));
      }
    }
    return lines;
  };
  const perSample = await Promise.all(Array.from({ length: options.n }, (_, sample) => sampleLines(sample)));
  return perSample.flat();
}
