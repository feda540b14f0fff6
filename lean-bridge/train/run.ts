/**
 * One running trainer, from a successful spawn to its end: turns its notifications (and the verdicts the run's
 * verifier service answers it with) into events, asks for a checkpoint on stop, and settles the session's `done`
 * exactly once, whether the trainer finished, stopped, failed, or died without a word (then the host says so,
 * with the trainer's last stderr lines and how to resume). The report is rendered on every ending.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { ResponseError } from "vscode-jsonrpc/node";
import {
  Initialize,
  Shutdown,
  TRAINER_ERROR_CODE,
  TrainCheckpoint,
  TrainDone,
  TrainEval,
  TrainLog,
  TrainProgress,
  TrainSample,
  TrainStop,
  type BatchVerdict,
  type InitializeParams,
  type InitializeResult,
  type TrainDoneParams,
  type NoveltyScores,
  type TrainEvalParams,
} from "../protocol/trainer";
import { renderReport } from "./report";
import type { RunService } from "./runService";
import type { TrainingEvents, TrainingOutcome, TrainingPhase, TrainingSession } from "./sessionTypes";
import { describeExit, type TrainerProcess } from "./trainerProcess";
import type { Verifier } from "../verify/verifier";
import { latestCheckpoint } from "./checkpoints";

/** After train/done, how long the trainer may take to answer shutdown and exit. */
const SHUTDOWN_GRACE_MS = 15_000;

type Settle<T> = { kind: "ok"; value: T } | { kind: "timeout" } | { kind: "error"; error: unknown };

/** Waits for `work` at most `ms`; never rejects. */
function within<T>(work: Promise<T>, ms: number): Promise<Settle<T>> {
  return new Promise((resolveSettle) => {
    const timer = setTimeout(() => resolveSettle({ kind: "timeout" }), ms);
    work.then(
      (value) => {
        clearTimeout(timer);
        resolveSettle({ kind: "ok", value });
      },
      (error: unknown) => {
        clearTimeout(timer);
        resolveSettle({ kind: "error", error });
      },
    );
  });
}

/** Calls an event handler; a throwing handler must not break the run. */
export function emit<A>(handler: ((arg: A) => void) | undefined, arg: A): void {
  try {
    handler?.(arg);
  } catch {
    // The caller's UI failed; training goes on.
  }
}

/** One running trainer: turns its messages into events, and settles `done` exactly once. */
export class TrainerRun {
  private readonly evals: TrainEvalParams[] = [];
  private lastCheckpoint: string | null = null;
  private doneNotice: TrainDoneParams | undefined;
  private readonly doneReceived: Promise<TrainDoneParams>;
  private resolveDoneReceived!: (d: TrainDoneParams) => void;
  private stopRequested = false;
  /** Set by the first `environment` verdict: the workspace, not the model, is broken; the run stops. */
  private environmentFailure: string | undefined;
  private stopping: Promise<void> | undefined;
  private readonly startedAt = performance.now();
  private outcome: Promise<TrainingOutcome> | undefined;

  constructor(
    private readonly runDir: string,
    private readonly trainer: TrainerProcess,
    private readonly pool: Verifier,
    /** The run's verifier service: it stops with the run (its answers reach `observe`). */
    private readonly service: RunService,
    private readonly events: TrainingEvents,
    private readonly phase: (p: TrainingPhase, detail?: string) => void,
    private readonly stopTimeoutMs: number,
  ) {
    this.doneReceived = new Promise((r) => (this.resolveDoneReceived = r));
  }

  wire(): void {
    const c = this.trainer.connection;
    c.onNotification(TrainProgress, (p) => emit(this.events.onProgress, p));
    c.onNotification(TrainSample, (s) => emit(this.events.onSample, s));
    c.onNotification(TrainCheckpoint, (cp) => {
      this.lastCheckpoint = cp.path;
      emit(this.events.onCheckpoint, cp);
    });
    c.onNotification(TrainLog, (l) => emit(this.events.onLog, l));
    c.onNotification(TrainEval, (e) => {
      this.evals.push(e);
      emit(this.events.onEval, e);
    });
    c.onNotification(TrainDone, (d) => {
      this.doneNotice ??= d;
      this.resolveDoneReceived(d);
    });
    c.onError(([error]) =>
      emit(this.events.onLog, { level: "warning", message: `trainer protocol error: ${error.message}` }),
    );
  }

  /**
   * Verdicts of a batch the run's service answered: the figures the host shows (checks/s, cache hits), and the
   * stop on a broken Lean environment.
   */
  observe(verdicts: readonly BatchVerdict[]): void {
    this.watchEnvironment(verdicts);
    this.logHacks(verdicts);
    const stats = this.pool.stats;
    const seconds = Math.max(1e-3, (performance.now() - this.startedAt) / 1000);
    emit(this.events.onVerifierStats, {
      checks: stats.checks,
      cacheHits: stats.cacheHits,
      checksPerSecond: (stats.checks + stats.cacheHits) / seconds,
    });
  }

  /** Proofs the kernel gate refuted so far in this run (reward 0, never masked). */
  private hacks = 0;

  /**
   * A candidate the kernel gate caught (Lean's server proved it, the kernel refutes it): reward 0 and trained
   * on, never masked; each is said in the log, with its task and why, so a run that learns a hack shows it.
   */
  private logHacks(verdicts: readonly BatchVerdict[]): void {
    for (const v of verdicts.filter((x) => x.hack === true)) {
      this.hacks++;
      emit(this.events.onLog, {
        level: "warning",
        message: `hack caught by the kernel gate (${this.hacks} so far this run), task ${v.taskId}: ${v.diagnostics[0]?.message ?? v.rule ?? "kernel-replay-failed"}`,
      });
    }
  }

  /**
   * An `environment` verdict means Lean could not check anything in this workspace (imports out of date, a
   * header it cannot load): every later check would fail the same way, and training on those zeros would
   * teach the model nothing. Say it once, and stop with a checkpoint; the outcome tells what to do.
   */
  private watchEnvironment(verdicts: readonly BatchVerdict[]): void {
    if (this.environmentFailure !== undefined) return;
    const broken = verdicts.find((v) => v.kind === "environment");
    if (!broken) return;
    this.environmentFailure = broken.diagnostics[0]?.message ?? "the Lean environment failed";
    emit(this.events.onLog, {
      level: "error",
      message: `the Lean environment is broken, so training stops (a checkpoint is kept): ${this.environmentFailure}`,
    });
    void this.stop();
  }

  async initialize(
    params: InitializeParams,
    timeoutMs: number,
  ): Promise<{ kind: "ok"; result: InitializeResult } | { kind: "error"; message: string; hint: string }> {
    const answer = await Promise.race([
      within(this.trainer.connection.sendRequest(Initialize, params), timeoutMs),
      this.trainer.exited.then((exit) => ({ kind: "exited" as const, exit })),
    ]);
    if (answer.kind === "ok") return { kind: "ok", result: answer.value };
    if (
      answer.kind === "error" &&
      answer.error instanceof ResponseError &&
      answer.error.code === TRAINER_ERROR_CODE
    )
      return { kind: "error", message: answer.error.message, hint: hintFor(answer.error.message) };
    const stderr = this.stderrSummary();
    if (answer.kind === "exited" || this.trainer.exit) {
      const exit =
        this.trainer.exit ?? (answer.kind === "exited" ? answer.exit : { code: null, signal: null });
      return {
        kind: "error",
        message: `the trainer exited while starting (${describeExit(exit)})${stderr}`,
        hint: hintFor(this.trainer.stderrTail),
      };
    }
    if (answer.kind === "timeout")
      return {
        kind: "error",
        message: `the trainer did not answer initialize within ${Math.round(timeoutMs / 1000)} s${stderr}`,
        hint: "See RUN_DIR/trainer.stderr.log for what it was doing.",
      };
    const error = answer.error;
    return {
      kind: "error",
      message: `the trainer refused initialize: ${error instanceof Error ? error.message : String(error)}${stderr}`,
      hint: "This is a bug in the host or the trainer; RUN_DIR/trainer.stderr.log has the trainer's side.",
    };
  }

  private stderrSummary(): string {
    const lines = this.trainer.stderrTail.trim().split("\n").filter(Boolean).slice(-12);
    return lines.length ? `\nThe trainer's last stderr lines:\n  ${lines.join("\n  ")}` : "";
  }

  /** Ends a trainer that failed to start; the verifier too. */
  async abandon(): Promise<void> {
    this.trainer.kill();
    await this.trainer.dispose(1_000);
    await this.service.stop();
    await this.pool.stop();
  }

  session(): TrainingSession {
    const done = this.finish();
    return {
      runDir: this.runDir,
      done,
      stop: async () => {
        await this.stop();
        await done;
      },
    };
  }

  private stop(): Promise<void> {
    this.stopping ??= (async () => {
      if (this.doneNotice || this.trainer.exit) return;
      this.stopRequested = true;
      this.phase("stopping");
      const answer = await Promise.race([
        within(this.trainer.connection.sendRequest(TrainStop, {}), this.stopTimeoutMs),
        this.trainer.exited.then(() => ({ kind: "exited" as const })),
      ]);
      if (answer.kind === "ok") {
        this.lastCheckpoint = answer.value.checkpoint ?? this.lastCheckpoint;
        // Raced inside `within`, so that a trainer that exits without train/done clears the timer (a pending
        // timer would keep the host alive for the whole stop timeout after the run had ended).
        const done = await within(Promise.race([this.doneReceived, this.trainer.exited]), this.stopTimeoutMs);
        if (done.kind === "timeout") this.trainer.kill();
      } else if (answer.kind !== "exited") {
        emit(this.events.onLog, {
          level: "warning",
          message: `the trainer did not checkpoint within ${Math.round(this.stopTimeoutMs / 1000)} s of the stop request; it was killed`,
        });
        this.trainer.kill();
      }
    })();
    return this.stopping;
  }

  /** The single outcome: after train/done (then shutdown) or after the process ended without it. */
  private finish(): Promise<TrainingOutcome> {
    this.outcome ??= (async (): Promise<TrainingOutcome> => {
      const first = await Promise.race([
        this.doneReceived.then((d) => ({ kind: "done" as const, d })),
        this.trainer.exited.then((exit) => ({ kind: "exited" as const, exit })),
      ]);
      if (first.kind === "done") {
        // Ask it to exit; a trainer that does not is killed after a grace period.
        void within(this.trainer.connection.sendRequest(Shutdown), SHUTDOWN_GRACE_MS);
      }
      const exit = await this.trainer.dispose(SHUTDOWN_GRACE_MS);
      await this.service.stop();
      await this.pool.stop();
      const done = this.doneNotice;
      const reportPath = this.report();
      if (done?.status === "completed")
        return {
          kind: "completed",
          runDir: this.runDir,
          evals: evalsWithEarlier(this.runDir, this.evals),
          reportPath,
        };
      if (this.environmentFailure !== undefined)
        return {
          kind: "failed",
          runDir: this.runDir,
          message: `training stopped: the Lean environment is broken (not the model's fault): ${this.environmentFailure}`,
          hint: `Fix the workspace (usually \`lake build\` in the project), then run the same command with --resume to continue from ${this.lastCheckpoint ?? latestCheckpoint(this.runDir) ?? "the start"}.`,
        };
      if (done?.status === "stopped" || (this.stopRequested && !done))
        return {
          kind: "stopped",
          runDir: this.runDir,
          checkpoint: this.lastCheckpoint ?? latestCheckpoint(this.runDir),
          reportPath,
        };
      const checkpoint = latestCheckpoint(this.runDir);
      const resumeHint = checkpoint
        ? `Run the same command again with --resume to continue from ${checkpoint}.`
        : "No checkpoint was written yet; run the same command again to start afresh.";
      if (done?.status === "failed")
        return {
          kind: "failed",
          runDir: this.runDir,
          message: `training failed: ${done.message}`,
          hint: `${hintFor(done.message)} ${resumeHint}`.trim(),
        };
      return {
        kind: "failed",
        runDir: this.runDir,
        message: `the trainer process ended unexpectedly (${describeExit(exit)})${this.stderrSummary()}`,
        hint: `${hintFor(this.trainer.stderrTail)} ${resumeHint} Its full stderr is in ${join(this.runDir, "trainer.stderr.log")}.`.trim(),
      };
    })();
    return this.outcome;
  }

  private report(): string {
    const path = join(this.runDir, "report.html");
    try {
      renderReport(this.runDir, path, this.pool.identity);
    } catch (error) {
      emit(this.events.onLog, { level: "warning", message: `could not write ${path}: ${String(error)}` });
    }
    return path;
  }
}

/**
 * This session's evaluations, preceded by the stages an earlier session of the same run measured (a resumed
 * run does not measure "before" again; RUN_DIR/eval.json has it).
 */
export function evalsWithEarlier(runDir: string, evals: readonly TrainEvalParams[]): TrainEvalParams[] {
  let file: Record<
    string,
    { pass_at_1?: unknown; by_kind?: unknown; tasks?: unknown; by_novelty?: unknown } | null
  > = {};
  try {
    file = JSON.parse(readFileSync(join(runDir, "eval.json"), "utf8")) as typeof file;
  } catch {
    return [...evals];
  }
  const earlier: TrainEvalParams[] = [];
  for (const stage of ["before", "sft", "after"] as const) {
    const entry = file[stage];
    if (!entry || evals.some((e) => e.stage === stage) || typeof entry.pass_at_1 !== "number") continue;
    earlier.push({
      stage,
      split: "test",
      passAt1: entry.pass_at_1,
      byKind: (entry.by_kind ?? {}) as Record<string, number>,
      tasks: typeof entry.tasks === "number" ? entry.tasks : 0,
      ...noveltyOf(entry.by_novelty),
    });
  }
  return [...earlier, ...evals];
}

/** eval.json's `by_novelty` ({group: {pass_at_1, tasks}}) as the protocol's `byNovelty`, where it has any. */
function noveltyOf(written: unknown): { byNovelty?: NoveltyScores } {
  if (typeof written !== "object" || written === null) return {};
  const byNovelty: NoveltyScores = {};
  for (const group of ["novel", "memorised", "unknown"] as const) {
    const g = (written as Record<string, { pass_at_1?: unknown; tasks?: unknown } | undefined>)[group];
    if (typeof g?.pass_at_1 === "number" && typeof g.tasks === "number")
      byNovelty[group] = { passAt1: g.pass_at_1, tasks: g.tasks };
  }
  return Object.keys(byNovelty).length ? { byNovelty } : {};
}

/** A hint for well-known trainer failures, read from its message or stderr. */
export function hintFor(text: string): string {
  if (/No module named '?torch/.test(text))
    return "torch is missing: pip install torch==2.13.0 in the trainer's Python (or leave --python out to use the managed environment).";
  if (/No module named '?accelerate/.test(text))
    return "--launcher accelerate needs accelerate in the trainer's Python: pip install accelerate (or leave --python out to use the managed environment), or train with --launcher single.";
  if (/invalid device ordinal/i.test(text))
    return "More trainer processes than GPUs on this machine: give --num-processes at most the number of GPUs (one rank per GPU).";
  if (/No module named '?fim_rlvr/.test(text))
    return "The trainer's sources were not found: the installation is incomplete (trainer/fim_rlvr is missing).";
  if (/CUDA out of memory|OutOfMemoryError/.test(text))
    return "The GPU ran out of memory: lower --batch-size or --group-size, or max_new_tokens in --config.";
  return "";
}
