/**
 * The verifier pool: K documents ("slots") on one Lean server for one project root. It ties together the
 * parts that each do one job: the scheduler (which slot checks what), the verdict cache (identical checks
 * cost one), the supervisor (a live server, restarted when it dies), the memory budget (how many slots),
 * and checkOnSlot (one check on one slot). One hung or crashed check is cut off by its own timeout and
 * never blocks the other slots.
 */
import { sweepWorker } from "../server/strays";
import { LeanServer, START_TIMEOUT_MS, type LaunchSpec } from "../server/leanServer";
import { ServerSupervisor } from "../server/supervisor";
import { buildCheckDocument, locateHole, type CheckDocument } from "./checkDocument";
import { checkOnSlot, stderrTail } from "./checkOnSlot";
import { DEFAULT_ALLOWED_AXIOMS, legacyNativeAxiomsExist } from "./classify";
import { KernelGateStage, type KernelGateConfig } from "./gateStage";
import { GOAL_PROBE, judgeGoalAtHole } from "./goalAtHole";
import { SHAPE_PROBE, judgeHoleShape, type HoleShape } from "./holeShape";
import { identify } from "./identity";
import {
  IMPORTS_TAMPERED_ACTION,
  IMPORTS_TAMPERED_RULE,
  ImportFingerprint,
  type ImportCheck,
} from "./importFingerprint";
import { NOOP_PROBE, judgeWithNoop } from "./noopProbe";
import { defaultMemoryBudgetMb, effectiveSlots } from "./memoryBudget";
import { DEFAULT_POLICY, type CandidatePolicy } from "./policy";
import { HoleQueues, SlotScheduler } from "./scheduler";
import { TaskFiles } from "./taskFiles";
import { prepareCheck } from "./prepareCheck";
import type { PrefixModules } from "./prefixModules";
import { judgeStatement, type StatementCheck } from "./statementCheck";
import type { Verifier, VerifyTask } from "./verifier";
import { featuresOfToolchain, type LeanFeatures } from "./toolchain";
import { DEFAULT_CACHE_BYTES, VerdictCache, verdictKey } from "./verdictCache";
import { isMasked, type Verdict, type VerdictOutcome, type VerifierIdentity } from "./verdict";

export { effectiveSlots } from "./memoryBudget";
export { identify } from "./identity";

export interface PoolOptions {
  projectRoot: string;
  launch: LaunchSpec;
  /** Slots wanted; the memory budget may allow fewer. */
  slots: number;
  timeoutMs: number;
  /** Memory one Lean worker may use (its -M), MB. */
  memoryPerWorkerMb: number;
  /**
   * Kill what a candidate's code left running in the server's sandbox after each check (server/strays.ts): set
   * where the server runs in the sandbox, whose orphans stay in the server's process tree (about 3 ms a check).
   */
  sweepStrays?: boolean;
  /** Memory all workers together may use, MB (default: three quarters of this machine's). */
  memoryBudgetMb?: number;
  policy?: CandidatePolicy;
  allowedAxioms?: string[];
  /** Bytes of verdicts the cache may hold (default 64 MiB). */
  cacheBytes?: number;
  /**
   * The project's `lean-toolchain` text: the verdicts' identity, and which Lean behaviours the check
   * document relies on (toolchain.ts).
   */
  toolchain?: string;
  /** How long a start (or restart) may wait for the server's answer to initialize, ms (default 120 s). */
  initTimeoutMs?: number;
  /**
   * The kernel gate for proved candidates (gateStage.ts), given the verifier's identity once the server said
   * what it is (the simulator's model or real Lean's); none: proofs stand on the server's word.
   */
  kernelGate?: (identity: VerifierIdentity) => KernelGateConfig | undefined;
  /**
   * The prefix-import form's modules (prefixForm.ts), where this verifier's Lean can compile them and its
   * server searches their folder: checks deep in a long file then elaborate only their own declaration.
   */
  prefixes?: PrefixModules;
  /** Who the verifier is, when its launcher knows better than the server's name (the embedded Lean). */
  identity?: VerifierIdentity;
  /**
   * Why a file (relative to the project root) cannot be judged by this verifier, or undefined when it can: its
   * holes get `environment` with that reason, unchecked (the embedded Lean and a file that needs Init).
   */
  refuseFile?: (file: string) => { reason: string; action: string } | undefined;
  /**
   * The fingerprint of the workspace's compiled imports (importFingerprint.ts): `start` takes one of the
   * project root once the server is up unless one is given; `false`: none (in-memory tests).
   */
  imports?: ImportFingerprint | false;
}

/** Attempts of one check: a crash is retried once on a fresh worker (see `check`). */
const CHECK_ATTEMPTS = 2;

export type PoolStart =
  { kind: "ok"; pool: VerifierPool } | { kind: "error"; message: string; stderr: string };

/** How many of the holes checked last the gate is told of when a prefix module has been compiled. */
const RECENT_HOLES = 16;

export class VerifierPool implements Verifier {
  private readonly supervisor: ServerSupervisor;
  private readonly scheduler: SlotScheduler;
  private readonly cache: VerdictCache;
  private readonly files: TaskFiles;
  /** The settings that change verdicts, part of every cache key. */
  private readonly verdictSettings: unknown;
  readonly identity: VerifierIdentity;
  /** What the project's Lean does where releases differ. */
  readonly features: LeanFeatures;
  /** Counters for progress reports and benchmarks. */
  readonly stats = {
    checks: 0,
    cacheHits: 0,
    restarts: 0,
    timeouts: 0,
    crashes: 0,
    tampered: 0,
    straysKilled: 0,
  };
  /** The kernel gate proofs go through (undefined: the server's word alone). */
  readonly kernelGate: KernelGateStage | undefined;

  private constructor(
    server: LeanServer,
    private readonly options: PoolOptions,
    slotCount: number,
    restartable: boolean,
    /** Memory all workers together may use, MB: the option, or the machine's default when none was given. */
    readonly memoryBudgetMb: number,
  ) {
    this.supervisor = new ServerSupervisor(
      server,
      restartable ? (signal) => LeanServer.start(options.launch, options.initTimeoutMs, signal) : undefined,
    );
    this.scheduler = new SlotScheduler(options.projectRoot, slotCount);
    this.files = new TaskFiles(options.projectRoot);
    this.cache = new VerdictCache(options.cacheBytes ?? DEFAULT_CACHE_BYTES);
    this.identity = options.identity ?? identify(server, options.toolchain);
    this.features = featuresOfToolchain(options.toolchain);
    this.verdictSettings = {
      policy: options.policy ?? DEFAULT_POLICY,
      allowedAxioms: [...(options.allowedAxioms ?? DEFAULT_ALLOWED_AXIOMS)].sort(),
    };
    const gate = options.kernelGate?.(this.identity);
    this.kernelGate =
      gate && gate.mode.kind !== "off"
        ? new KernelGateStage(gate, this.identity, this.verdictSettings)
        : undefined;
    // A hole's checks turn to the prefix form once its module is compiled, and so does the header its proofs'
    // gate runs begin with: the gate is told of it then, ahead of the next check (KernelGateStage.prepare).
    if (this.kernelGate) options.prefixes?.onCompiled(() => this.prepareRecentHoles());
  }

  /** The holes checked lately (the last RECENT_HOLES), by file and hole, for the gate's `prepare`. */
  private readonly recentHoles = new Map<string, VerifyTask>();

  /** Each recent hole's check document as it would be now (the verifier's no-op in the hole), to the gate. */
  private prepareRecentHoles(): void {
    for (const task of this.recentHoles.values()) {
      const prepared = prepareCheck(this.files, task, NOOP_PROBE, {
        policy: this.options.policy ?? DEFAULT_POLICY,
        features: this.features,
        prefixes: this.options.prefixes,
        prefixLookOnly: true,
        checkPolicy: false,
      });
      if (prepared.kind === "ok") this.kernelGate?.prepare(prepared.doc);
    }
  }

  static async start(options: PoolOptions): Promise<PoolStart> {
    const started = await LeanServer.start(options.launch, options.initTimeoutMs);
    if (started.kind === "failed") return { kind: "error", message: started.message, stderr: started.stderr };
    // After the server's start (Lake may refresh its own configuration then), before any candidate.
    const imports = options.imports ?? ImportFingerprint.take(options.projectRoot);
    options = { ...options, imports };
    const budget = options.memoryBudgetMb ?? defaultMemoryBudgetMb();
    const slots = effectiveSlots(options.slots, options.memoryPerWorkerMb, budget);
    return { kind: "ok", pool: new VerifierPool(started.server, options, slots, true, budget) };
  }

  /** Wraps an already connected server (in-memory tests); it is not restarted when it dies. */
  static fromServer(server: LeanServer, options: PoolOptions): VerifierPool {
    const budget = options.memoryBudgetMb ?? defaultMemoryBudgetMb();
    return new VerifierPool(server, options, Math.max(1, options.slots), false, budget);
  }

  /** The prefix-import form's modules, where this verifier compiles them (the embedded Lean). */
  get prefixes(): PrefixModules | undefined {
    return this.options.prefixes;
  }

  get slotCount(): number {
    return this.scheduler.slots.length;
  }

  /** The time limit of one check, ms. */
  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /**
   * The longest one verification can take on a verifier that works, ms: its time limit on every attempt, and a
   * server (re)start before each, for the candidate's check and the hole's no-op check. What a caller waiting on many checks must allow (the trainer's batch deadline), queueing
   * for a slot aside.
   */
  get checkBoundMs(): number {
    // A proved candidate's verification is two checks: its own and the hole's no-op (noopProbe.ts); then the gate.
    const checks =
      2 * CHECK_ATTEMPTS * (this.options.timeoutMs + (this.options.initTimeoutMs ?? START_TIMEOUT_MS));
    return checks + (this.kernelGate?.boundMs ?? 0);
  }

  async verify(task: VerifyTask, candidate: string): Promise<Verdict> {
    // Imports found changed: the verifier has stopped, and says why to every candidate without checking it.
    const known = this.options.imports ? this.options.imports.found : undefined;
    if (known) return this.tamperedVerdict(known, 0);
    return this.guardImports(await this.verifyUnguarded(task, candidate));
  }

  /**
   * A verdict that pays or is masked, returned only after a sweep of the imports that started once its Lean
   * processes had ended found them as they were at start; once any changed, every verdict is `rejected`
   * (IMPORTS_TAMPERED_RULE), so none computed on a poisoned import pays or can be chosen as masked. A failure
   * that pays nothing needs no sweep.
   */
  private async guardImports(verdict: Verdict): Promise<Verdict> {
    const imports = this.options.imports;
    if (!imports) return verdict;
    const pays = verdict.kind === "proved" || verdict.kind === "incomplete";
    const found = pays || isMasked(verdict) ? await imports.checkedSince(performance.now()) : imports.found;
    if (!found || found.kind !== "tampered") return verdict;
    return this.tamperedVerdict(found, verdict.elapsedMs);
  }

  private tamperedVerdict(found: ImportCheck & { kind: "tampered" }, elapsedMs: number): Verdict {
    this.stats.tampered++;
    return {
      kind: "rejected",
      rule: IMPORTS_TAMPERED_RULE,
      reason: `${found.message}. What to do: ${IMPORTS_TAMPERED_ACTION}`,
      diagnostics: [],
      elapsedMs,
      verifier: this.identity,
    };
  }

  private async verifyUnguarded(task: VerifyTask, candidate: string): Promise<Verdict> {
    const started = performance.now();
    const finish = (outcome: VerdictOutcome, cached = false): Verdict =>
      ({
        ...outcome,
        elapsedMs: Math.round((performance.now() - started) * 10) / 10,
        verifier: this.identity,
        ...(cached ? { cached } : {}),
      }) as Verdict;
    const refused = this.options.refuseFile?.(task.file);
    if (refused) return finish({ kind: "environment", ...refused, diagnostics: [] });
    const prepared = prepareCheck(this.files, task, candidate, {
      policy: this.options.policy ?? DEFAULT_POLICY,
      features: this.features,
      prefixes: this.options.prefixes,
    });
    if (prepared.kind === "rejected")
      return finish({ kind: "rejected", rule: prepared.rule, reason: prepared.reason, diagnostics: [] });
    if (this.kernelGate && this.options.prefixes) {
      const hole = `${task.file}\0${JSON.stringify(task.hole)}`;
      this.recentHoles.delete(hole);
      this.recentHoles.set(hole, task);
      if (this.recentHoles.size > RECENT_HOLES)
        this.recentHoles.delete(this.recentHoles.keys().next().value!);
    }
    const key = verdictKey({
      identity: this.identity,
      settings: this.verdictSettings,
      file: prepared.path,
      hole: task.hole,
      documentText: prepared.doc.text,
    });
    const { outcome, cached } = await this.cache.getOrCheck(key, () => this.timedCheck(prepared.doc));
    if (cached) this.stats.cacheHits++;
    // Only a proof pays the question whether the hole needs a middle at all, once per hole (noopProbe.ts).
    if (outcome.kind !== "proved") return finish(outcome, cached);
    const judged = judgeWithNoop(outcome, await this.noopOutcome(task));
    if (judged.kind !== "proved" || !this.kernelGate) return finish(judged, cached);
    // The last word: the kernel, in processes where no candidate code runs (kernelGate.ts).
    const policy = this.options.policy ?? DEFAULT_POLICY;
    const confirmed = await this.kernelGate.confirm({
      file: prepared.path,
      doc: prepared.doc,
      proved: judged,
      allowedAxioms: this.options.allowedAxioms ?? DEFAULT_ALLOWED_AXIOMS,
      allowNative: policy.allowNative === true,
      legacyNativeExists: legacyNativeAxiomsExist(this.features),
    });
    return finish(confirmed, cached);
  }

  /** A candidate's check, timed for the gate's `auto` share (a check is what the gate's cost is measured in). */
  private async timedCheck(doc: CheckDocument): Promise<VerdictOutcome> {
    const started = performance.now();
    this.kernelGate?.prepare(doc);
    const outcome = await this.check(doc);
    this.kernelGate?.noteCheck(performance.now() - started);
    return outcome;
  }

  /**
   * The hole checked with the verifier's no-op (`skip`) in it, never a candidate's text: cached per hole
   * apart from candidates' verdicts (its key holds everything but the candidate), so a hole costs it once.
   */
  private async noopOutcome(task: VerifyTask): Promise<VerdictOutcome> {
    const prepared = prepareCheck(this.files, task, NOOP_PROBE, {
      policy: this.options.policy ?? DEFAULT_POLICY,
      features: this.features,
      prefixes: this.options.prefixes,
      checkPolicy: false,
    });
    if (prepared.kind === "rejected")
      return { kind: "rejected", rule: prepared.rule, reason: prepared.reason, diagnostics: [] };
    // Only whether Lean proves it matters: no goal counts are asked for.
    return this.probeOutcome(prepared.path, task, prepared.doc, { noopProbe: NOOP_PROBE }, false);
  }

  /**
   * A check of the verifier's own text in the hole (a probe, never a candidate's), cached apart from
   * candidates' verdicts: `probe` names it in the cache key.
   */
  private async probeOutcome(
    file: string,
    task: VerifyTask,
    doc: CheckDocument,
    probe: Record<string, string>,
    measureGoals = true,
  ): Promise<VerdictOutcome> {
    const key = verdictKey({
      identity: this.identity,
      settings: { ...probe, verdictSettings: this.verdictSettings },
      file,
      hole: task.hole,
      documentText: doc.text,
    });
    const { outcome, cached } = await this.cache.getOrCheck(key, () => this.check(doc, measureGoals));
    if (cached) this.stats.cacheHits++;
    return outcome;
  }

  private async check(doc: CheckDocument, measureGoals = true): Promise<VerdictOutcome> {
    const stopped: VerdictOutcome = {
      kind: "crashed",
      reason: "the verifier was stopped before this check ran",
      cause: "infrastructure",
      diagnostics: [],
    };
    const slot = await this.scheduler.acquire(doc);
    if (!slot) return stopped;
    try {
      // A crash (of the worker, or of the whole server) is retried once on a fresh one: a crash that comes
      // back is the candidate's doing (deep recursion within the allowed `maxRecDepth`, say), a failure it
      // cannot turn into a masked outcome. Only the first crash of a pair is ever the infrastructure's.
      for (let attempt = 1; ; attempt++) {
        const server = await this.liveServer();
        if (!server)
          return this.supervisor.stopped
            ? stopped
            : {
                kind: "crashed",
                reason: "the Lean server could not be restarted",
                cause: "infrastructure",
                diagnostics: [],
              };
        this.stats.checks++;
        const checked = await checkOnSlot(
          {
            server,
            timeoutMs: this.options.timeoutMs,
            allowedAxioms: this.options.allowedAxioms ?? DEFAULT_ALLOWED_AXIOMS,
            allowNative: (this.options.policy ?? DEFAULT_POLICY).allowNative,
            legacyNativeExists: legacyNativeAxiomsExist(this.features),
            measureGoals,
          },
          slot,
          doc,
        );
        if (checked.outcome.kind === "timeout") this.stats.timeouts++;
        if (checked.outcome.kind === "crashed") this.stats.crashes++;
        // What the candidate's code started from its worker must not outlive its check (server/strays.ts).
        if (this.options.sweepStrays && checked.aftermath !== "server-lost" && server.pid !== undefined) {
          this.stats.straysKilled += sweepWorker(server.pid, slot.uri).killed.length;
        }
        if (checked.aftermath === "recycle") {
          await server.closeDocument(slot.uri);
          slot.text = undefined;
        } else if (checked.aftermath === "server-lost") this.scheduler.forgetAll();
        if (checked.outcome.kind !== "crashed" || this.supervisor.stopped) return checked.outcome;
        if (attempt >= CHECK_ATTEMPTS)
          return {
            ...checked.outcome,
            cause: "candidate",
            reason: `${checked.outcome.reason}\n(it crashed again on a fresh Lean worker, so the candidate is charged with it)`,
          };
      }
    } catch (error) {
      // A bug below us must not leave the caller waiting: report it as a crash that says what broke.
      this.stats.crashes++;
      this.scheduler.forgetAll();
      return {
        kind: "crashed",
        reason: `internal error while checking: ${error instanceof Error ? error.message : String(error)}${stderrTail(this.supervisor.server.stderr)}`,
        cause: "infrastructure",
        diagnostics: [],
      };
    } finally {
      this.scheduler.release(slot);
    }
  }

  /** The live server; a dead one is restarted once (its slots' documents are gone with it). */
  private async liveServer(): Promise<LeanServer | undefined> {
    if (this.supervisor.server.isAlive) return this.supervisor.server;
    this.scheduler.forgetAll();
    const server = await this.supervisor.live();
    this.stats.restarts = this.supervisor.restarts;
    return server;
  }

  /**
   * Whether the hole is a whole tactic sequence as Lean reads it: checked with `sorry` in its place
   * (holeShape.ts). This mode never takes a candidate's text, so the policy that refuses `sorry` in
   * candidates is not bypassed; its verdicts are cached apart from candidates'.
   */
  async checkHoleShape(task: VerifyTask): Promise<HoleShape> {
    const loaded = this.files.load(task.file, task.text);
    if (loaded.kind === "error") return { kind: "inconclusive", reason: loaded.message };
    const located = locateHole(loaded.file.parsed, loaded.file.index, task.hole);
    if (located.kind === "bad-hole") return { kind: "inconclusive", reason: located.message };
    const built = buildCheckDocument(loaded.file.parsed, located.hole, SHAPE_PROBE);
    if (built.kind !== "ok") return { kind: "not-whole", reason: built.message };
    const outcome = await this.probeOutcome(loaded.file.path, task, built.doc, { shapeProbe: SHAPE_PROBE });
    return judgeHoleShape(built.doc, outcome);
  }

  /**
   * The goal state at the hole as Lean prints it (goalAtHole.ts), undefined where Lean gives none. Like
   * `checkHoleShape`, it puts the verifier's own text in the hole (`done`), never a candidate's, and its
   * verdicts are cached apart from candidates'.
   */
  async goalAtHole(task: VerifyTask): Promise<string | undefined> {
    const loaded = this.files.load(task.file, task.text);
    if (loaded.kind === "error") return undefined;
    const located = locateHole(loaded.file.parsed, loaded.file.index, task.hole);
    if (located.kind === "bad-hole") return undefined;
    const built = buildCheckDocument(loaded.file.parsed, located.hole, GOAL_PROBE);
    if (built.kind !== "ok") return undefined;
    const outcome = await this.probeOutcome(loaded.file.path, task, built.doc, { goalProbe: GOAL_PROBE });
    return judgeGoalAtHole(built.doc, outcome);
  }

  /** `goalAtHole` for many holes concurrently, results in input order. */
  async goalsAtHoles(
    tasks: readonly VerifyTask[],
    onProgress?: (done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<(string | undefined)[]> {
    const items = tasks.map((task) => ({ task }));
    return this.runMany(items, (item) => this.goalAtHole(item.task), onProgress, signal);
  }

  /**
   * Verifies many candidates concurrently, results in input order. Work is queued per hole (see
   * HoleQueues), so a GRPO group is checked by one slot whose document already holds that declaration.
   */
  async verifyMany(
    items: readonly { task: VerifyTask; candidate: string }[],
    onProgress?: (done: number, total: number, verdict: Verdict) => void,
    signal?: AbortSignal,
  ): Promise<Verdict[]> {
    return this.runMany(items, (item) => this.verify(item.task, item.candidate), onProgress, signal);
  }

  /** `checkHoleShape` for many holes concurrently, results in input order. */
  async checkHoleShapes(
    tasks: readonly VerifyTask[],
    onProgress?: (done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<HoleShape[]> {
    const items = tasks.map((task) => ({ task }));
    return this.runMany(items, (item) => this.checkHoleShape(item.task), onProgress, signal);
  }

  private async runMany<I extends { task: VerifyTask }, R>(
    items: readonly I[],
    run: (item: I) => Promise<R>,
    onProgress?: (done: number, total: number, result: R) => void,
    signal?: AbortSignal,
  ): Promise<R[]> {
    const results: R[] = new Array<R>(items.length);
    const queues = new HoleQueues(items, (k) => this.headerOf(items[k]!.task));
    let done = 0;
    const worker = async () => {
      let current: string | undefined;
      for (;;) {
        if (signal?.aborted) return; // Results stay unset: the caller asked to stop.
        const next = queues.take(current);
        if (!next) return;
        const [key, k] = next;
        current = key;
        results[k] = await run(items[k]!);
        done++;
        onProgress?.(done, items.length, results[k]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(items.length, this.slotCount) }, worker));
    return results;
  }

  /** The text of a task file's header (imports), so a batch keeps each slot within one header (HoleQueues). */
  private headerOf(task: VerifyTask): string | undefined {
    const loaded = this.files.load(task.file, task.text);
    return loaded.kind === "ok" ? loaded.file.text.slice(0, loaded.file.parsed.headerEnd) : undefined;
  }

  get serverStderr(): string {
    return this.supervisor.server.stderr;
  }

  /**
   * Stops the server (and a restart under way) and settles every pending check. Always returns; safe to
   * call at any moment, any number of times, concurrently.
   */
  async stop(): Promise<void> {
    this.options.prefixes?.stop();
    this.scheduler.close();
    this.kernelGate?.stop();
    await this.supervisor.stop();
  }

  /**
   * The statement pre-check of `fim-rlvr import`: the hole's declaration checked with `sorry` as the hole,
   * the same probe and the same cached Lean check as `checkHoleShape` (only the judgment differs:
   * statementCheck.ts looks at the whole declaration). Never takes a candidate's text.
   */
  async checkStatement(task: VerifyTask): Promise<StatementCheck> {
    const prepared = prepareCheck(this.files, task, SHAPE_PROBE, {
      policy: this.options.policy ?? DEFAULT_POLICY,
      features: this.features,
      prefixes: this.options.prefixes,
      checkPolicy: false,
    });
    if (prepared.kind === "rejected") return { kind: "inconclusive", reason: prepared.reason };
    const outcome = await this.probeOutcome(prepared.path, task, prepared.doc, { shapeProbe: SHAPE_PROBE });
    return judgeStatement(outcome);
  }

  /** `checkStatement` for many holes concurrently, results in input order. */
  async checkStatements(
    tasks: readonly VerifyTask[],
    onProgress?: (done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<StatementCheck[]> {
    const items = tasks.map((task) => ({ task }));
    return this.runMany(items, (item) => this.checkStatement(item.task), onProgress, signal);
  }
}
