/**
 * Which proofs go through the kernel gate (kernelGate.ts), and running it for the verifiers (the pool and the
 * Kimina verifier share this stage). The mode is the verifier's `--kernel-gate`: `all`, `off`, `share:X` (a
 * random share X of the proved candidates), or `auto` (the default): every proof while the gate costs under
 * twice a check, measured as the verifier runs, and above that a share sized to keep the gate's time per
 * proved candidate near two checks', never under MIN_AUTO_SHARE. Some proofs are gated whatever the share:
 * those of imported statements (`fim-rlvr import` tasks, the statements the model could not have proved by
 * any honest means when false), and any candidate whose document the gate already refuted (a cached refutation
 * answers for every copy). Once the gate has refuted any proof, every later one is gated (`escalated`); the
 * refutations are recorded in PROJECT/.fim-rlvr/refutations.jsonl (refutationLog.ts) and read when the stage
 * starts, so the escalation survives a restart. A gate that cannot run here (its self-test, asked before the
 * first draw) leaves no proof to the server's word: every proof gets its `environment` verdict, masked, so
 * `share` and `auto` never pay a proof they did not draw while the gate is away. The draw is random (node's
 * crypto), never a function of the candidate's text, so a candidate cannot choose to be left out. Gate reports
 * are cached by document; those that say nothing about the candidate (the gate out of time, or unavailable)
 * are not.
 */
import { randomInt } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Range } from "vscode-languageserver-protocol";
import { LineIndex } from "../text/positions";
import { SHAPE_PROBE } from "./holeShape";
import { statementReference, type CheckDocument } from "./checkDocument";
import { judgeWithGate, type GateReport, type GateRequest, type KernelGateBackend } from "./kernelGate";
import { IMPORTED_STATEMENTS_DIR, IMPORT_NAMESPACE } from "../util/projectLayout";
import { nameParts } from "./policyWords";
import type { VerdictOutcome, VerifierIdentity } from "./verdict";
import { verdictKey } from "./verdictCache";
import { appendRefutation, countRefutations } from "./refutationLog";

/** `--kernel-gate`: which proved candidates the kernel gate confirms. */
export type KernelGateMode =
  | { kind: "all" }
  | { kind: "off" }
  /** A random share of the proved candidates, 0 < share ≤ 1. */
  | { kind: "share"; share: number }
  /** Every one while the gate costs under AUTO_COST_RATIO checks, a share sized to that ratio above it. */
  | { kind: "auto" };

export const DEFAULT_KERNEL_GATE: KernelGateMode = { kind: "auto" };

/**
 * `auto` gates everything while one gate costs less than this many checks: the budget that keeps the gate from
 * costing more than checking itself, twice over at most.
 */
export const AUTO_COST_RATIO = 2;
/** `auto` never gates fewer than this share of the proved candidates, however costly the gate. */
export const MIN_AUTO_SHARE = 0.1;
/** `auto` gates every proof until this many gate runs have been timed (its estimate needs a few). */
export const AUTO_WARMUP_RUNS = 8;

/** Reads `--kernel-gate`: `all`, `off`, `auto` or `share:X` with 0 < X ≤ 1. */
export function parseKernelGateMode(text: string): KernelGateMode | { kind: "error"; message: string } {
  const t = text.trim();
  if (t === "all" || t === "off" || t === "auto") return { kind: t };
  const m = /^share:([0-9]*\.?[0-9]+)$/.exec(t);
  const share = m ? Number(m[1]) : NaN;
  if (m && share > 0 && share <= 1) return share === 1 ? { kind: "all" } : { kind: "share", share };
  return {
    kind: "error",
    message: `--kernel-gate ${text}: expected all, off, auto, or share:X with 0 < X ≤ 1 (e.g. share:0.25)`,
  };
}

/** `--kernel-gate`'s text for a mode: what parseKernelGateMode reads back as the same mode. */
export function kernelGateModeText(mode: KernelGateMode): string {
  return mode.kind === "share" ? `share:${mode.share}` : mode.kind;
}

/** Whether a check document's declaration is an imported statement (a `fim-rlvr import` task). */
export function isImportedStatement(file: string, checkedName: string): boolean {
  const path = file.split(/[\\/]/).join("/");
  // Imports by earlier versions wrote under PROJECT/FimRlvrImported/: such files still exist in older projects.
  return (
    nameParts(checkedName)[0] === IMPORT_NAMESPACE ||
    path.startsWith(IMPORTED_STATEMENTS_DIR + "/") ||
    path.startsWith(IMPORT_NAMESPACE + "/")
  );
}

/** Running means of a check's and a gate run's time, for `auto`. */
export class GateCosts {
  private checkMs = 0;
  private checks = 0;
  private gateMs = 0;
  private gates = 0;

  noteCheck(ms: number): void {
    this.checkMs += ms;
    this.checks++;
  }

  noteGate(ms: number): void {
    this.gateMs += ms;
    this.gates++;
  }

  get meanCheckMs(): number {
    return this.checks ? this.checkMs / this.checks : 0;
  }

  get meanGateMs(): number {
    return this.gates ? this.gateMs / this.gates : 0;
  }

  get gateRuns(): number {
    return this.gates;
  }

  /** The share `auto` gates now: 1 until measured, 1 while under the ratio, else the ratio's share. */
  autoShare(): number {
    if (this.gates < AUTO_WARMUP_RUNS || this.checks === 0) return 1;
    const ratio = this.meanGateMs / Math.max(1e-3, this.meanCheckMs);
    if (ratio <= AUTO_COST_RATIO) return 1;
    return Math.max(MIN_AUTO_SHARE, AUTO_COST_RATIO / ratio);
  }
}

/** The share of proved candidates a mode gates now. */
export function shareOf(mode: KernelGateMode, costs: GateCosts): number {
  switch (mode.kind) {
    case "all":
      return 1;
    case "off":
      return 0;
    case "share":
      return mode.share;
    case "auto":
      return costs.autoShare();
  }
}

/** A uniform draw in [0, 1) from node's crypto: no candidate's text reaches it. */
export function cryptoDraw(): number {
  return randomInt(0, 2 ** 32) / 2 ** 32;
}

export interface KernelGateConfig {
  backend: KernelGateBackend;
  mode: KernelGateMode;
  /** Time limit of one gate run (compiling and replaying one document), ms. */
  timeoutMs: number;
  /** Gate runs at once (each is a Lean process as large as a worker). */
  concurrency: number;
  /** Draws in [0, 1) for `share`/`auto` (tests pass their own). */
  draw?: () => number;
  /**
   * The project's refutation record (refutationLog.ts, PROJECT/.fim-rlvr/refutations.jsonl): read at start
   * (any refutation in it escalates), appended to on each refutation. Absent: kept in memory only.
   */
  refutationLog?: string;
}

/** Counters of the gate, for logs and benchmarks. */
export interface KernelGateStats {
  /** Proved candidates the gate ran on (cache hits included). */
  gated: number;
  /** Proved candidates left to the server's word (the share's draw, or `off`). */
  passedOver: number;
  confirmed: number;
  /** Proofs the gate refuted: hacks, counted once per verdict. */
  refuted: number;
  /** Gate runs (not answered from the cache), and their total time, ms. */
  runs: number;
  runMs: number;
}

/** What the stage needs to know of one proved candidate. */
export interface GateInput {
  file: string;
  doc: CheckDocument;
  proved: VerdictOutcome;
  allowedAxioms: readonly string[];
  allowNative: boolean;
  legacyNativeExists: boolean;
}

/** The hole in a gate report's key: none (see `confirm`). */
const NO_HOLE: Range = { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };

/** Reports worth keeping: a verdict on the document. A gate out of time, dead or unavailable may answer otherwise next time. */
function cacheable(report: GateReport): boolean {
  return report.kind === "replayed" || report.kind === "kernel-rejected" || report.kind === "missing";
}

/** What the gate is asked of a check document: its proof, the declaration it checks, the statement's reference. */
function gateRequest(doc: CheckDocument): GateRequest {
  return {
    documentText: doc.text,
    declaration: nameParts(doc.checkedName),
    mayBePrivate: doc.isPrivate || doc.mayBePrivate,
    headerEndLine: doc.headerEndLine,
    declarationLine: new LineIndex(doc.text).positionAt(doc.declarationStart).line,
    // The statement as the file states it, with the verifier's own text as the body.
    referenceText:
      statementReference(doc) ??
      doc.text.slice(0, doc.candidateStart) + SHAPE_PROBE + doc.text.slice(doc.candidateEnd),
  };
}

/** A counting semaphore: at most `limit` gate runs at once. */
class Limiter {
  private active = 0;
  private readonly waiting: (() => void)[] = [];
  constructor(private readonly limit: number) {}

  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    this.active++;
    try {
      return await job();
    } finally {
      this.active--;
      this.waiting.shift()?.();
    }
  }
}

export class KernelGateStage {
  readonly stats: KernelGateStats = { gated: 0, passedOver: 0, confirmed: 0, refuted: 0, runs: 0, runMs: 0 };
  readonly costs = new GateCosts();
  private readonly reports = new LRUCache<string, GateReport>({ max: 4096 });
  private readonly inflight = new Map<string, Promise<GateReport>>();
  private readonly limiter: Limiter;
  /** Refutations the project's record held when the stage started. */
  readonly priorRefutations: number;
  /** The backend's own check, asked once before the first draw (undefined: it can run). */
  private availability: Promise<GateReport | undefined> | undefined;

  /**
   * Whether the gate can run here: undefined when it can, else its `unavailable` report (the backend's
   * self-test, asked once and shared with `confirm`). A verifier asks it at start, to refuse to run without it.
   */
  unavailable(): Promise<GateReport | undefined> {
    this.availability ??= this.config.backend.ready?.(this.config.timeoutMs) ?? Promise.resolve(undefined);
    return this.availability;
  }
  /** A refutation the record could not take, said once. */
  logProblem: string | undefined;

  constructor(
    readonly config: KernelGateConfig,
    private readonly identity: VerifierIdentity,
    /** The verifier's settings that change verdicts, part of every key. */
    private readonly settings: unknown,
  ) {
    this.limiter = new Limiter(Math.max(1, config.concurrency));
    this.priorRefutations = config.refutationLog ? countRefutations(config.refutationLog) : 0;
  }

  get mode(): KernelGateMode {
    return this.config.mode;
  }

  /** The longest the gate can add to one verification, ms: its own run, and its self-test once. */
  get boundMs(): number {
    return this.config.mode.kind === "off" ? 0 : 2 * this.config.timeoutMs;
  }

  /** Stops what the backend keeps running between proofs (the embedded gate's compile server). */
  stop(): void {
    this.config.backend.stop?.();
  }

  /**
   * A fresh candidate check of `doc` starts: the backend may get ready for its proof meanwhile (the embedded
   * gate imports the document's header, and compiles the statement's reference, once per hole, so that a
   * hole's first proof costs what its later ones do). Only while the gate can run and would gate a proof.
   */
  prepare(doc: CheckDocument): void {
    if (this.config.mode.kind === "off" || !this.availability) return;
    void this.availability.then((unavailable) => {
      if (!unavailable) this.config.backend.prepare?.(gateRequest(doc), this.config.timeoutMs);
    });
  }

  /** A fresh candidate check took `ms` (the measure of "a check" for `auto`). */
  noteCheck(ms: number): void {
    this.costs.noteCheck(ms);
  }

  /**
   * The verdict of a proved candidate: confirmed by the gate, refuted by it, or, when the mode's draw leaves it
   * out, the server's word (`confirmedBy: "server"`). Anything but a proof passes through unchanged.
   */
  async confirm(input: GateInput): Promise<VerdictOutcome> {
    const { proved, doc } = input;
    if (proved.kind !== "proved") return proved;
    const rules = {
      checkedName: doc.checkedName,
      isPrivate: doc.isPrivate,
      mayBePrivate: doc.mayBePrivate,
      allowedAxioms: input.allowedAxioms,
      allowNative: input.allowNative,
      legacyNativeExists: input.legacyNativeExists,
    };
    // Before any draw: a gate that cannot run answers every proof (masked), none passes on the server's word.
    const unavailable = await this.unavailable();
    if (unavailable) {
      this.stats.gated++;
      return judgeWithGate(proved, unavailable, this.config.backend.name, rules);
    }
    // The report is a property of the document and the declaration it checks, not of the hole: the holes of one
    // declaration filled with their own text (export --verify) share one document, and one gate run.
    const key = verdictKey({
      identity: this.identity,
      settings: { gate: this.config.backend.name, settings: this.settings, declaration: doc.checkedName },
      file: input.file,
      hole: NO_HOLE,
      documentText: doc.text,
    });
    const known = this.reports.get(key);
    const must = this.config.mode.kind !== "off" && isImportedStatement(input.file, doc.checkedName);
    const drawn = () => {
      const share = this.escalated ? 1 : shareOf(this.config.mode, this.costs);
      return share >= 1 || (share > 0 && (this.config.draw ?? cryptoDraw)() < share);
    };
    if (!known && !must && !drawn()) {
      this.stats.passedOver++;
      return proved;
    }
    this.stats.gated++;
    const report = known ?? (await this.report(key, input));
    const judged = judgeWithGate(proved, report, this.config.backend.name, rules);
    if (judged.kind === "proved") this.stats.confirmed++;
    else if (judged.kind === "rejected") {
      this.stats.refuted++;
      if (this.config.refutationLog) {
        const problem = appendRefutation(this.config.refutationLog, {
          at: new Date().toISOString(),
          file: input.file,
          declaration: doc.checkedName,
          gate: this.config.backend.name,
          reason: judged.reason,
        });
        if (problem && !this.logProblem) {
          this.logProblem = problem;
          process.stderr.write(`fim-rlvr: ${problem}; the escalation it records holds for this run only\n`);
        }
      }
    }
    return judged;
  }

  /**
   * Whether every proof is gated from now on, whatever the share: once the gate has refuted one proof. A policy
   * under RL that found a hack repeats it, and under a share each copy drawn out would still be paid; a refutation
   * the gate's own trouble caused (its time limit) is as rare as it is worth a look, so it escalates too.
   */
  get escalated(): boolean {
    return this.stats.refuted + this.priorRefutations > 0 && this.config.mode.kind !== "off";
  }

  /** The gate's report on a document: from a run already under way for it, or a new one. */
  private async report(key: string, input: GateInput): Promise<GateReport> {
    const pending = this.inflight.get(key);
    if (pending) return pending;
    const running = this.limiter.run(async () => {
      const started = performance.now();
      const report = await this.config.backend.run(gateRequest(input.doc), this.config.timeoutMs);
      const ms = performance.now() - started;
      this.stats.runs++;
      this.stats.runMs += ms;
      if (report.kind !== "unavailable") this.costs.noteGate(ms);
      // A gate that stopped being able to run answers every later proof, drawn or not.
      else this.availability = Promise.resolve(report);
      if (cacheable(report)) this.reports.set(key, report);
      return report;
    });
    this.inflight.set(key, running);
    try {
      return await running;
    } finally {
      this.inflight.delete(key);
    }
  }
}
