/**
 * A Kimina Lean Server as the verifier (`--verifier kimina:URL`). The same layer stands in front of it as in
 * front of the pool (prepareCheck: the policy, the check document that keeps the statement, refuses tampering
 * and appends `set_option pp.fullNames true in #print axioms _root_.<name>`), and its answer is classified by
 * the same classify.ts: Kimina itself checks neither axioms nor that the statement was kept. What Kimina
 * cannot answer, the verdicts go without: Lean's list of the document's declarations (the pool's second
 * confirmation that the candidate introduced nothing; here the policy and the re-parse stand alone) and the
 * goals before and after the candidate (so no partial credit: Kimina's messages carry no Lean tags, so
 * unsolved goals are an error like any other, `failed`). A REPL failure is retried alone on a fresh REPL and
 * charged to the candidate when it comes back while the file without the candidate checks (`check` below);
 * so is the whole server going down while it held the check, once it is back (`afterServerLoss`).
 * Verdicts name "Kimina Lean Server", never Lean.
 */
import { DEFAULT_ALLOWED_AXIOMS, classify, legacyNativeAxiomsExist } from "../verify/classify";
import { GOAL_PROBE, judgeGoalAtHole } from "../verify/goalAtHole";
import { NOOP_PROBE, judgeWithNoop } from "../verify/noopProbe";
import { SHAPE_PROBE, judgeHoleShape, type HoleShape } from "../verify/holeShape";
import { DEFAULT_POLICY, type CandidatePolicy } from "../verify/policy";
import { prepareCheck } from "../verify/prepareCheck";
import { judgeStatement, type StatementCheck } from "../verify/statementCheck";
import { TaskFiles } from "../verify/taskFiles";
import { KernelGateStage, type KernelGateConfig } from "../verify/gateStage";
import { featuresOfToolchain } from "../verify/toolchain";
import { DEFAULT_CACHE_BYTES, VerdictCache, verdictKey } from "../verify/verdictCache";
import type { CheckDocument } from "../verify/checkDocument";
import type { Verdict, VerdictOutcome, VerifierIdentity } from "../verify/verdict";
import type { Verifier, VerifyTask } from "../verify/verifier";
import { KiminaClient, type KiminaAnswer, type KiminaClientOptions } from "./client";
import { toDiagnostics } from "./messages";
import { kiminaRereads } from "./positions";

export interface KiminaVerifierOptions extends KiminaClientOptions {
  projectRoot: string;
  policy?: CandidatePolicy;
  allowedAxioms?: string[];
  /**
   * The kernel gate for proved candidates (gateStage.ts). Kimina's API answers with messages only, so its
   * server cannot replay anything: the gate runs on this machine (`lake` in `projectRoot`), compiling the same
   * check document Kimina checked; without local Lean there is none and proofs stand on Kimina's word.
   */
  kernelGate?: KernelGateConfig;
}

export class KiminaVerifier implements Verifier {
  readonly identity: VerifierIdentity;
  readonly stats = { checks: 0, cacheHits: 0, restarts: 0, timeouts: 0, crashes: 0 };
  readonly memoryBudgetMb = 0;
  readonly serverStderr = "";
  readonly client: KiminaClient;
  readonly kernelGate: KernelGateStage | undefined;
  private readonly files: TaskFiles;
  private readonly cache = new VerdictCache(DEFAULT_CACHE_BYTES);
  /** Kimina runs its own Lean, whose version we are not told: the check document assumes none. */
  private readonly features = featuresOfToolchain(undefined);
  private readonly settings: unknown;

  constructor(private readonly options: KiminaVerifierOptions) {
    this.client = new KiminaClient(options);
    this.files = new TaskFiles(options.projectRoot);
    this.identity = {
      kind: "kimina",
      version: this.client.url,
      label: `Kimina Lean Server (${this.client.url})`,
    };
    this.settings = {
      policy: options.policy ?? DEFAULT_POLICY,
      allowedAxioms: [...(options.allowedAxioms ?? DEFAULT_ALLOWED_AXIOMS)].sort(),
    };
    const gate = options.kernelGate;
    this.kernelGate =
      gate && gate.mode.kind !== "off" ? new KernelGateStage(gate, this.identity, this.settings) : undefined;
  }

  get slotCount(): number {
    return this.client.batchSize * this.client.concurrency;
  }

  get timeoutMs(): number {
    return this.options.timeoutMs;
  }

  /** A working server answers a request within its deadline (a check is one request's snippet). */
  get checkBoundMs(): number {
    // A proved candidate's verification is two requests: its own and the hole's no-op (noopProbe.ts); then the gate.
    return 2 * this.client.requestDeadlineMs + (this.kernelGate?.boundMs ?? 0);
  }

  async verify(task: VerifyTask, candidate: string): Promise<Verdict> {
    const started = performance.now();
    const outcome = await this.outcome(task, candidate, true);
    // A proof pays only where the hole needs a middle: asked once per hole with `skip` (noopProbe.ts).
    let judged =
      outcome.outcome.kind === "proved"
        ? judgeWithNoop(outcome.outcome, (await this.outcome(task, NOOP_PROBE, false)).outcome)
        : outcome.outcome;
    if (judged.kind === "proved" && this.kernelGate && outcome.doc && outcome.path !== undefined) {
      const policy = this.options.policy ?? DEFAULT_POLICY;
      judged = await this.kernelGate.confirm({
        file: outcome.path,
        doc: outcome.doc,
        proved: judged,
        allowedAxioms: this.options.allowedAxioms ?? DEFAULT_ALLOWED_AXIOMS,
        allowNative: policy.allowNative === true,
        legacyNativeExists: legacyNativeAxiomsExist(this.features),
      });
    }
    return {
      ...judged,
      elapsedMs: Math.round((performance.now() - started) * 10) / 10,
      verifier: this.identity,
      ...(outcome.cached ? { cached: true } : {}),
    } as Verdict;
  }

  private async outcome(
    task: VerifyTask,
    candidate: string,
    checkPolicy: boolean,
  ): Promise<{ outcome: VerdictOutcome; cached: boolean; doc?: CheckDocument; path?: string }> {
    const prepared = prepareCheck(this.files, task, candidate, {
      policy: this.options.policy ?? DEFAULT_POLICY,
      features: this.features,
      checkPolicy,
    });
    if (prepared.kind === "rejected")
      return {
        outcome: { kind: "rejected", rule: prepared.rule, reason: prepared.reason, diagnostics: [] },
        cached: false,
      };
    // Kimina's REPL must read the lines Lean reads (positions.ts).
    const reread = kiminaRereads(prepared.doc);
    if (reread) return { outcome: reread, cached: false };
    const key = verdictKey({
      identity: this.identity,
      settings: checkPolicy ? this.settings : { probe: candidate, settings: this.settings },
      file: prepared.path,
      hole: task.hole,
      documentText: prepared.doc.text,
    });
    const { outcome, cached } = await this.cache.getOrCheck(key, async () => {
      const checkStarted = performance.now();
      const checked = await this.check(prepared.doc);
      if (checkPolicy) this.kernelGate?.noteCheck(performance.now() - checkStarted);
      return checked;
    });
    if (cached) this.stats.cacheHits++;
    return { outcome, cached, doc: prepared.doc, path: prepared.path };
  }

  /**
   * One check. A failure of Kimina's REPL on it (an `error` other than a timeout, a REPL message, a 5xx, no
   * answer) is never a masked verdict the candidate could choose by crashing its REPL on purpose: the check
   * is asked again, alone, on a fresh REPL; if that fails too, the document without the candidate (the
   * file up to the checked declaration) is asked on a fresh REPL. Kimina answering that but not the
   * candidate's document twice makes the crash the candidate's (`cause: "candidate"`, a failure trained on);
   * only a server that fails without the candidate too makes it the infrastructure's (masked). The whole
   * server going down while it held the check is handled the same way (`afterServerLoss`).
   */
  private async check(doc: CheckDocument): Promise<VerdictOutcome> {
    this.stats.checks++;
    const firstAnswer = await this.client.check(doc.text);
    if (firstAnswer.kind === "lost") return this.afterServerLoss(doc, firstAnswer.reason);
    if (firstAnswer.kind === "failed" && firstAnswer.unreachable) return this.unreachable(firstAnswer.reason);
    const first = this.read(doc, firstAnswer);
    if (first.kind === "ok") return first.outcome;
    const againAnswer = await this.client.check(doc.text, { fresh: true });
    if (againAnswer.kind === "lost") return this.afterServerLoss(doc, againAnswer.reason);
    const again = this.read(doc, againAnswer);
    if (again.kind === "ok") return again.outcome;
    return this.chargeUnlessControlFails(doc, again.reason, "on a fresh REPL");
  }

  /**
   * The server went down while it held this check (with others, perhaps): not yet anyone's fault. Once it
   * answers again (the client waits for it through refused connections), the check is asked alone, with
   * nothing else in flight. Down again with only this check on it, while the file without the candidate
   * checks: the candidate brought the server down, a failure (`cause: "candidate"`), so killing the server
   * never buys a masked outcome. A server that does not come back is the infrastructure's (masked), with
   * what to do.
   */
  private async afterServerLoss(doc: CheckDocument, reason: string): Promise<VerdictOutcome> {
    const retry = await this.client.check(doc.text, { alone: true });
    if (retry.kind === "failed" && retry.unreachable)
      return this.unreachable(`${reason}; then ${retry.reason}`);
    if (retry.kind !== "lost") {
      const read = this.read(doc, retry);
      if (read.kind === "ok") return read.outcome;
      return this.chargeUnlessControlFails(doc, read.reason, "alone after the server came back");
    }
    return this.chargeUnlessControlFails(
      doc,
      `${retry.reason} (twice: the second time it was the only check on the server)`,
      "alone after the server came back",
    );
  }

  /** A failure that came back on a retry: the candidate's if the file without it checks, else the infrastructure's. */
  private async chargeUnlessControlFails(
    doc: CheckDocument,
    reason: string,
    retried: string,
  ): Promise<VerdictOutcome> {
    this.stats.crashes++;
    const control = await this.client.check(controlDocument(doc), { alone: true });
    if (control.kind === "failed" && control.unreachable)
      return this.unreachable(`${reason}; then ${control.reason}`);
    const healthy =
      control.kind === "result" &&
      !control.result.error &&
      control.result.response != null &&
      !("message" in control.result.response);
    return {
      kind: "crashed",
      reason: healthy
        ? `${reason} (it failed again ${retried}, while the Kimina Lean Server checked the file without the candidate: the candidate's failure)`
        : `${reason} (the Kimina Lean Server failed on the file without the candidate too)`,
      cause: healthy ? "candidate" : "infrastructure",
      diagnostics: [],
    };
  }

  /** The server refuses connections through every retry: down, and not the candidate's doing (masked). */
  private unreachable(reason: string): VerdictOutcome {
    this.stats.crashes++;
    return {
      kind: "crashed",
      reason: `${reason}. The Kimina Lean Server at ${this.client.url} is down and did not come back: restart it (its log says why it stopped; a memory limit per REPL keeps one check from taking it down), then run again`,
      cause: "infrastructure",
      diagnostics: [],
    };
  }

  /** Kimina's answer as an outcome, or why Kimina failed on it. */
  private read(
    doc: CheckDocument,
    answer: KiminaAnswer,
  ): { kind: "ok"; outcome: VerdictOutcome } | { kind: "broken"; reason: string } {
    // Kimina ran the check past its limit: the candidate's own time (fail closed, never a masked outcome).
    const timedOut = (): { kind: "ok"; outcome: VerdictOutcome } => {
      this.stats.timeouts++;
      return {
        kind: "ok",
        outcome: { kind: "timeout", timeoutMs: this.options.timeoutMs, cause: "candidate", diagnostics: [] },
      };
    };
    if (answer.kind === "timeout") return timedOut();
    if (answer.kind === "failed" || answer.kind === "lost") return { kind: "broken", reason: answer.reason };
    const result = answer.result;
    if (result.error) {
      if (/timed out/i.test(result.error)) return timedOut();
      return { kind: "broken", reason: `the Kimina Lean Server could not check it: ${result.error}` };
    }
    const response = result.response;
    if (!response)
      return { kind: "broken", reason: "the Kimina Lean Server answered neither a response nor an error" };
    if ("message" in response)
      return { kind: "broken", reason: `Kimina's Lean REPL failed: ${response.message}` };
    const diagnostics = toDiagnostics(response.messages ?? [], doc.text);
    return {
      kind: "ok",
      outcome: classify(
        doc,
        diagnostics,
        false,
        this.options.allowedAxioms ?? DEFAULT_ALLOWED_AXIOMS,
        (this.options.policy ?? DEFAULT_POLICY).allowNative,
        // Kimina's Lean version is not known: the legacy native axioms are not trusted (classify.ts).
        legacyNativeAxiomsExist(this.features),
      ),
    };
  }

  async verifyMany(
    items: readonly { task: VerifyTask; candidate: string }[],
    onProgress?: (done: number, total: number, verdict: Verdict) => void,
    signal?: AbortSignal,
  ): Promise<Verdict[]> {
    let done = 0;
    const results: Verdict[] = new Array<Verdict>(items.length);
    await Promise.all(
      items.map(async (item, k) => {
        if (signal?.aborted) return;
        results[k] = await this.verify(item.task, item.candidate);
        onProgress?.(++done, items.length, results[k]!);
      }),
    );
    return results;
  }

  private async probeAll<R>(
    probe: string,
    tasks: readonly VerifyTask[],
    judge: (doc: CheckDocument | undefined, outcome: VerdictOutcome) => R,
    onProgress?: (done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<R[]> {
    let done = 0;
    return Promise.all(
      tasks.map(async (task) => {
        if (signal?.aborted)
          return judge(undefined, {
            kind: "crashed",
            reason: "cancelled",
            cause: "infrastructure",
            diagnostics: [],
          });
        const { outcome, doc } = await this.outcome(task, probe, false);
        onProgress?.(++done, tasks.length);
        return judge(doc, outcome);
      }),
    );
  }

  checkHoleShapes(
    tasks: readonly VerifyTask[],
    onProgress?: (done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<HoleShape[]> {
    return this.probeAll(
      SHAPE_PROBE,
      tasks,
      (doc, outcome): HoleShape =>
        doc
          ? judgeHoleShape(doc, outcome)
          : { kind: "inconclusive", reason: "reason" in outcome ? String(outcome.reason) : outcome.kind },
      onProgress,
      signal,
    );
  }

  checkStatements(
    tasks: readonly VerifyTask[],
    onProgress?: (done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<StatementCheck[]> {
    return this.probeAll(SHAPE_PROBE, tasks, (_doc, outcome) => judgeStatement(outcome), onProgress, signal);
  }

  goalsAtHoles(
    tasks: readonly VerifyTask[],
    onProgress?: (done: number, total: number) => void,
    signal?: AbortSignal,
  ): Promise<(string | undefined)[]> {
    return this.probeAll(
      GOAL_PROBE,
      tasks,
      (doc, outcome) => (doc ? judgeGoalAtHole(doc, outcome) : undefined),
      onProgress,
      signal,
    );
  }

  stop(): Promise<void> {
    this.client.close();
    this.kernelGate?.stop();
    return Promise.resolve();
  }
}

/**
 * The check document without the candidate: the file up to the checked declaration (its header and the
 * declarations above), which every check of the file runs too. `#check Nat` keeps it from being empty.
 */
export function controlDocument(doc: CheckDocument): string {
  return `${doc.text.slice(0, doc.declarationStart)}\n#check Nat\n`;
}
