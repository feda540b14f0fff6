/**
 * The verifier pool: K documents ("slots") on one Lean server for one project root. A candidate goes to a
 * slot that already holds the same declaration prefix, so the edit Lean sees is only the hole and Lean
 * reuses the elaboration of everything above it. Identical checks are answered from a cache (or share the
 * check already under way), so duplicates in a GRPO group cost nothing. One hung or crashed check is cut
 * off by its own timeout and never blocks the other slots.
 */
import { createHash } from "node:crypto";
import { totalmem } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Range } from "../protocol/lsp";
import { LeanServer, type LaunchSpec } from "../server/leanServer";
import { incrementalChange } from "../text/edits";
import { buildCheckDocument, locateHole, type CheckDocument } from "./checkDocument";
import { classify, DEFAULT_ALLOWED_AXIOMS } from "./classify";
import { Lru } from "./lru";
import { checkCandidate, DEFAULT_POLICY, type CandidatePolicy } from "./policy";
import { TaskFiles } from "./taskFiles";
import type { Verdict, VerdictOutcome, VerifierIdentity } from "./verdict";
import { SIMULATOR_NAME } from "../simulator/server";

export interface VerifyTask {
  /** Path of the Lean file, relative to the project root. */
  file: string;
  /** LSP range: 0-based lines, UTF-16 characters. */
  hole: Range;
  /** The file's text, when the caller already has it (otherwise it is read from disk). */
  text?: string;
}

export interface PoolOptions {
  projectRoot: string;
  launch: LaunchSpec;
  /** Slots wanted; the memory budget may allow fewer. */
  slots: number;
  timeoutMs: number;
  /** Memory one Lean worker may use (its -M), MB. */
  memoryPerWorkerMb: number;
  /** Memory all workers together may use, MB (default: three quarters of this machine's). */
  memoryBudgetMb?: number;
  policy?: CandidatePolicy;
  allowedAxioms?: string[];
  cacheSize?: number;
  /** The toolchain for the verdicts' identity (from lean-toolchain). */
  toolchain?: string;
}

interface Slot {
  index: number;
  uri: string;
  /** The document's current text in the server, or undefined when not open. */
  text: string | undefined;
  version: number;
  busy: boolean;
  lastUsed: number;
}

type CheckOutcome = VerdictOutcome;

export type PoolStart =
  { kind: "ok"; pool: VerifierPool } | { kind: "error"; message: string; stderr: string };

export function effectiveSlots(wanted: number, perWorkerMb: number, budgetMb: number): number {
  return Math.max(1, Math.min(wanted, Math.floor(budgetMb / Math.max(1, perWorkerMb))));
}

function sharedPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let k = 0;
  while (k < n && a.charCodeAt(k) === b.charCodeAt(k)) k++;
  return k;
}

export class VerifierPool {
  private server: LeanServer;
  private restarting: Promise<boolean> | undefined;
  private readonly slots: Slot[];
  private readonly waiting: (() => void)[] = [];
  private readonly cache: Lru<string, CheckOutcome>;
  private readonly inflight = new Map<string, Promise<CheckOutcome>>();
  private readonly files: TaskFiles;
  private clock = 0;
  private stopped = false;
  readonly identity: VerifierIdentity;
  /** Counters for progress reports and benchmarks. */
  readonly stats = { checks: 0, cacheHits: 0, restarts: 0, timeouts: 0, crashes: 0 };

  private constructor(
    server: LeanServer,
    private readonly options: PoolOptions,
    slotCount: number,
  ) {
    this.server = server;
    this.files = new TaskFiles(options.projectRoot);
    this.cache = new Lru(options.cacheSize ?? 100_000);
    this.identity = identify(server, options.toolchain);
    this.slots = Array.from({ length: slotCount }, (_, index) => ({
      index,
      uri: pathToFileURL(join(options.projectRoot, ".fim-rlvr", `Slot${index}.lean`)).href,
      text: undefined,
      version: 0,
      busy: false,
      lastUsed: 0,
    }));
  }

  static async start(options: PoolOptions): Promise<PoolStart> {
    const started = await LeanServer.start(options.launch);
    if (started.kind === "failed") return { kind: "error", message: started.message, stderr: started.stderr };
    const budget = options.memoryBudgetMb ?? Math.floor((totalmem() / 1024 / 1024) * 0.75);
    return {
      kind: "ok",
      pool: new VerifierPool(
        started.server,
        options,
        effectiveSlots(options.slots, options.memoryPerWorkerMb, budget),
      ),
    };
  }

  /** Wraps an already connected server (in-memory tests). */
  static fromServer(server: LeanServer, options: PoolOptions): VerifierPool {
    return new VerifierPool(server, options, Math.max(1, options.slots));
  }

  /** Memory all Lean workers together may use (MB). */
  get memoryBudgetMb(): number {
    return this.options.memoryBudgetMb ?? 0;
  }

  get slotCount(): number {
    return this.slots.length;
  }

  async verify(task: VerifyTask, candidate: string): Promise<Verdict> {
    const started = performance.now();
    const finish = (outcome: CheckOutcome, cached = false): Verdict =>
      ({
        ...outcome,
        elapsedMs: Math.round((performance.now() - started) * 10) / 10,
        verifier: this.identity,
        ...(cached ? { cached } : {}),
      }) as Verdict;
    const reject = (rule: string, reason: string) =>
      finish({ kind: "rejected", rule, reason, diagnostics: [] });
    const loaded = this.files.load(task.file, task.text);
    if (loaded.kind === "error") return reject("bad-task", loaded.message);
    const located = locateHole(loaded.file.parsed, loaded.file.index, task.hole);
    if (located.kind === "bad-hole") return reject("bad-task", `${task.file}: ${located.message}`);
    const policy = checkCandidate(candidate, this.options.policy ?? DEFAULT_POLICY);
    if (policy.kind === "rejected") return reject(policy.rule, policy.reason);
    const built = buildCheckDocument(loaded.file.parsed, located.hole, candidate);
    if (built.kind === "tampered") return reject("tamper", built.message);
    if (built.kind === "bad-hole") return reject("bad-task", built.message);
    const key = createHash("sha256")
      .update(`${this.identity.kind}\0${this.identity.version}\0${built.doc.text}`)
      .digest("hex");
    const hit = this.cache.get(key);
    if (hit) {
      this.stats.cacheHits++;
      return finish(hit, true);
    }
    const pending = this.inflight.get(key);
    if (pending) {
      this.stats.cacheHits++;
      return finish(await pending, true);
    }
    const check = this.check(built.doc).then((outcome) => {
      if (outcome.kind !== "timeout" && outcome.kind !== "crashed") this.cache.set(key, outcome);
      return outcome;
    });
    this.inflight.set(key, check);
    try {
      return finish(await check);
    } finally {
      this.inflight.delete(key);
    }
  }

  private async check(doc: CheckDocument): Promise<CheckOutcome> {
    const slot = await this.acquire(doc);
    try {
      return await this.checkOn(slot, doc);
    } catch (error) {
      // The connection broke under us (the server died between two messages): a crash, not a thrown error.
      this.stats.crashes++;
      this.forgetAllSlots();
      return {
        kind: "crashed",
        reason: `lost the connection to the server: ${error instanceof Error ? error.message : String(error)}${tail(this.server.stderr)}`,
        diagnostics: [],
      };
    } finally {
      this.release(slot);
    }
  }

  private async checkOn(slot: Slot, doc: CheckDocument): Promise<CheckOutcome> {
    if (!(await this.ensureServer()))
      return { kind: "crashed", reason: "the Lean server could not be restarted", diagnostics: [] };
    this.stats.checks++;
    const server = this.server;
    let version: number;
    if (slot.text === undefined || !server.isOpen(slot.uri)) {
      version = await server.open(slot.uri, doc.text);
    } else {
      const change = incrementalChange(slot.text, doc.text);
      version = change ? await server.change(slot.uri, [change]) : slot.version;
    }
    slot.text = doc.text;
    slot.version = version;
    const result = await server.waitForDiagnostics(slot.uri, version, this.options.timeoutMs);
    switch (result.kind) {
      case "ready":
        return classify(
          doc,
          result.diagnostics,
          result.fatal,
          this.options.allowedAxioms ?? DEFAULT_ALLOWED_AXIOMS,
        );
      case "timeout":
        this.stats.timeouts++;
        await this.recycle(slot);
        return { kind: "timeout", timeoutMs: this.options.timeoutMs, diagnostics: [] };
      case "crashed":
        this.stats.crashes++;
        await this.recycle(slot);
        return { kind: "crashed", reason: result.reason, diagnostics: [] };
      case "closed":
        this.stats.crashes++;
        this.forgetAllSlots();
        return { kind: "crashed", reason: `${result.reason}${tail(server.stderr)}`, diagnostics: [] };
    }
  }

  /** Closes a slot's document (Lean ends its worker); the next check there opens it afresh. */
  private async recycle(slot: Slot): Promise<void> {
    await this.server.close(slot.uri);
    slot.text = undefined;
  }

  private forgetAllSlots(): void {
    for (const s of this.slots) s.text = undefined;
  }

  private async ensureServer(): Promise<boolean> {
    if (this.server.isAlive) return true;
    if (this.stopped) return false;
    this.restarting ??= (async () => {
      this.stats.restarts++;
      this.forgetAllSlots();
      const started = await LeanServer.start(this.options.launch);
      this.restarting = undefined;
      if (started.kind === "failed") return false;
      this.server = started.server;
      return true;
    })();
    return this.restarting;
  }

  /** Prefers an idle slot that already holds this declaration's prefix, then the longest shared text, then LRU. */
  private pick(doc: CheckDocument): Slot | undefined {
    let best: Slot | undefined;
    let bestScore = -1;
    for (const slot of this.slots) {
      if (slot.busy) continue;
      const shared = slot.text === undefined ? 0 : sharedPrefixLength(slot.text, doc.text);
      const score =
        (slot.text !== undefined && slot.text.startsWith(doc.prefix) ? 1e12 : 0) +
        shared * 1e3 -
        slot.lastUsed / 1e9;
      if (score > bestScore) {
        bestScore = score;
        best = slot;
      }
    }
    return best;
  }

  private async acquire(doc: CheckDocument): Promise<Slot> {
    for (;;) {
      const slot = this.pick(doc);
      if (slot) {
        slot.busy = true;
        slot.lastUsed = ++this.clock;
        return slot;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  private release(slot: Slot): void {
    slot.busy = false;
    this.waiting.shift()?.();
  }

  /**
   * Verifies many candidates concurrently, results in input order. Work is queued per hole, and each of the
   * K workers stays on one hole until its queue is empty, then takes the longest queue left: a GRPO group is
   * then checked by one slot whose document already holds that declaration, instead of every slot switching
   * declarations (which makes Lean re-elaborate everything between the two) on every group.
   */
  async verifyMany(
    items: readonly { task: VerifyTask; candidate: string }[],
    onProgress?: (done: number, total: number, verdict: Verdict) => void,
    signal?: AbortSignal,
  ): Promise<Verdict[]> {
    const results: Verdict[] = new Array(items.length);
    const queues = new Map<string, number[]>();
    items.forEach((item, k) => {
      const h = item.task.hole;
      const key = `${item.task.file}\0${h.start.line}:${h.start.character}-${h.end.line}:${h.end.character}`;
      const queue = queues.get(key) ?? [];
      queue.push(k);
      queues.set(key, queue);
    });
    const owned = new Set<string>();
    const take = (current: string | undefined): [string, number] | undefined => {
      const mine = current !== undefined ? queues.get(current) : undefined;
      if (current !== undefined && mine && mine.length > 0) return [current, mine.shift()!];
      if (current !== undefined) owned.delete(current);
      let best: string | undefined;
      for (const [key, queue] of queues) {
        if (queue.length === 0) continue;
        const better =
          best === undefined ||
          (owned.has(best) && !owned.has(key)) ||
          (owned.has(best) === owned.has(key) && queue.length > queues.get(best)!.length);
        if (better) best = key;
      }
      if (best === undefined) return undefined;
      owned.add(best);
      return [best, queues.get(best)!.shift()!];
    };
    let done = 0;
    const worker = async () => {
      let current: string | undefined;
      for (;;) {
        if (signal?.aborted) return; // Results stay unset: the caller asked to stop.
        const next = take(current);
        if (!next) return;
        const [key, k] = next;
        current = key;
        const item = items[k]!;
        results[k] = await this.verify(item.task, item.candidate);
        done++;
        onProgress?.(done, items.length, results[k]!);
      }
    };
    await Promise.all(Array.from({ length: Math.min(items.length, this.slots.length) }, worker));
    return results;
  }

  get serverStderr(): string {
    return this.server.stderr;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.server.stop();
  }
}

function tail(stderr: string): string {
  const t = stderr.trim().split("\n").slice(-5).join("\n");
  return t ? `\nserver stderr (last lines):\n${t}` : "";
}

export function identify(server: LeanServer, toolchain: string | undefined): VerifierIdentity {
  const name = server.serverName;
  const version = server.initializeResult?.serverInfo?.version ?? "?";
  if (name === SIMULATOR_NAME || /simulator/i.test(name))
    return { kind: "simulator", version, label: `simulator ${version} (not Lean)` };
  const tc = toolchain ?? "unknown toolchain";
  return { kind: "lean", version: tc, label: `Lean (${tc})` };
}
