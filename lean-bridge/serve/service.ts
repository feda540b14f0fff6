/**
 * The verifier service: the pool behind a TCP port, JSON-RPC with LSP framing (vscode-jsonrpc over net
 * sockets). Each request is answered as soon as its own checks finish, so a slow proof never holds back
 * another client's answer (the pool has its own slots). Back-pressure is a bounded number of accepted items:
 * a batch that would exceed it is refused at once with the busy error, never queued in unbounded memory.
 * While a batch sent with a `batchId` is checked, its client hears `verify/progress` (./progress.ts) whenever
 * any check of the service finishes: how a trainer tells a slow verifier from one that stopped. A frame that
 * breaks the bounds of ./frameBounds.ts (a header or body that never completes, an absurd Content-Length) ends
 * its connection with an error, so no client holds a socket the service cannot answer.
 */
import { createServer, type Server, type Socket } from "node:net";
import {
  createMessageConnection,
  ResponseError,
  SocketMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import type { VerifyTask } from "../verify/verifier";
import type { RewardMode } from "../verify/rewards";
import type { Verdict, VerifierIdentity } from "../verify/verdict";
import { socketReader } from "../util/messageReaders";
import { tokenAccepted, type TokenPolicy } from "./auth";
import {
  SERVICE_BUSY,
  SERVICE_INVALID_PARAMS,
  SERVICE_UNAUTHORIZED,
  Stats,
  VerifyBatch,
  VerifyProgress,
  type BatchVerdict,
  type ServiceStats,
  type VerifyBatchResult,
} from "../protocol/trainer";
import { DEFAULT_FRAME_BOUNDS, guardFrames, type FrameBounds } from "./frameBounds";
import { itemLabel, resolveItem, type TaskTable } from "./items";
import { BatchProgress, PROGRESS_INTERVAL_MS } from "./progress";
import { RateWindow } from "./rateWindow";
import { bareVerdict, batchVerdict } from "./wire";

/** What the service needs of a verifier: the pool, or a stand-in in tests and benchmarks. */
export interface ServiceVerifier {
  readonly identity: VerifierIdentity;
  readonly stats: { cacheHits: number; restarts: number };
  readonly slotCount: number;
  verifyMany(
    items: readonly { task: VerifyTask; candidate: string }[],
    onProgress?: (done: number, total: number, verdict: Verdict) => void,
    signal?: AbortSignal,
  ): Promise<Verdict[]>;
}

export interface ServiceOptions {
  /** Address to bind (127.0.0.1 unless the user asked otherwise). */
  host: string;
  /** Port to bind; 0 picks a free one (see `address`). */
  port: number;
  policy: TokenPolicy;
  /** The most items accepted and not yet answered. */
  queueLimit: number;
  reward: RewardMode;
  /** Tasks known by id. */
  tasks: TaskTable;
  /** Shown every answered batch's verdicts (a training run's figures and its broken-environment stop). */
  observe?: (verdicts: readonly BatchVerdict[]) => void;
  /** The shortest time between two `verify/progress` of one batch (default 1 s; tests use 0). */
  progressIntervalMs?: number;
  /** Bounds on each incoming frame's size and time (default DEFAULT_FRAME_BOUNDS; tests use small ones). */
  frameBounds?: FrameBounds;
}

export const DEFAULT_QUEUE_LIMIT = 4096;

export type ServiceStart = { kind: "ok"; service: VerifierService } | { kind: "error"; message: string };

export class VerifierService {
  private readonly connections = new Set<{
    socket: Socket;
    rpc: MessageConnection;
    abort: AbortController;
  }>();
  private readonly started = performance.now();
  private readonly rate = new RateWindow(10);
  private pending = 0;
  private counters = { checks: 0, refused: 0, busy: 0 };
  /** Checks finished, every client's: what `verify/progress` reports as the service's progress. */
  private finished = 0;
  /** The batches in flight whose clients asked for progress. */
  private readonly watched = new Set<BatchProgress>();

  private constructor(
    private readonly server: Server,
    private readonly verifier: ServiceVerifier,
    private readonly options: ServiceOptions,
  ) {
    server.on("connection", (socket) => this.accept(socket));
  }

  /** Binds and starts answering; the error says why the port could not be bound. */
  static async start(verifier: ServiceVerifier, options: ServiceOptions): Promise<ServiceStart> {
    const server = createServer();
    const service = new VerifierService(server, verifier, options);
    return new Promise((resolve) => {
      const onError = (error: NodeJS.ErrnoException) =>
        resolve({
          kind: "error",
          message:
            error.code === "EADDRINUSE"
              ? `port ${options.port} on ${options.host} is in use: choose another with --port (0 picks a free one)`
              : `cannot listen on ${options.host}:${options.port}: ${error.message}`,
        });
      server.once("error", onError);
      server.listen(options.port, options.host, () => {
        server.off("error", onError);
        resolve({ kind: "ok", service });
      });
    });
  }

  /** The bound address (the real port when 0 was asked for). */
  get address(): { host: string; port: number } {
    const a = this.server.address();
    return typeof a === "object" && a !== null
      ? { host: this.options.host, port: a.port }
      : { host: this.options.host, port: this.options.port };
  }

  stats(): ServiceStats {
    return {
      uptimeSeconds: Math.round((performance.now() - this.started) / 100) / 10,
      checks: this.counters.checks,
      checksPerSecond: Math.round(this.rate.perSecond() * 100) / 100,
      cacheHits: this.verifier.stats.cacheHits,
      queue: this.pending,
      queueLimit: this.options.queueLimit,
      restarts: this.verifier.stats.restarts,
      refused: this.counters.refused,
      busy: this.counters.busy,
      connections: this.connections.size,
      tasks: this.options.tasks.size,
      slots: this.verifier.slotCount,
      verifier: this.verifier.identity,
    };
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true);
    // Before the JSON-RPC reader listens, so that a breaking frame is seen no later than the reader sees it.
    guardFrames(socket, this.options.frameBounds ?? DEFAULT_FRAME_BOUNDS);
    const rpc = createMessageConnection(socketReader(socket), new SocketMessageWriter(socket));
    const entry = { socket, rpc, abort: new AbortController() };
    this.connections.add(entry);
    const drop = () => {
      if (!this.connections.delete(entry)) return;
      // Checks of a client that left are not started: nobody is waiting for them.
      entry.abort.abort();
      rpc.dispose();
      socket.destroy();
    };
    socket.on("error", drop);
    socket.on("close", drop);
    rpc.onClose(drop);
    rpc.onRequest(VerifyBatch, (params) => this.verifyBatch(params, entry.abort.signal, rpc));
    rpc.onRequest(Stats, (params) => {
      const refused = this.refuse(params);
      return refused ?? this.stats();
    });
    rpc.listen();
  }

  private refuse(params: unknown): ResponseError | undefined {
    const token = (params as { token?: unknown } | null)?.token;
    if (tokenAccepted(this.options.policy, token)) return undefined;
    this.counters.refused++;
    return new ResponseError(
      SERVICE_UNAUTHORIZED,
      token === undefined
        ? "this service requires a token: pass the one `fim-rlvr serve` printed (the `token` field of params)"
        : "wrong token: pass the one `fim-rlvr serve` printed (or its --token)",
    );
  }

  private async verifyBatch(
    params: unknown,
    signal: AbortSignal,
    rpc: MessageConnection,
  ): Promise<VerifyBatchResult | ResponseError> {
    const refused = this.refuse(params);
    if (refused) return refused;
    const items = (params as { items?: unknown } | null)?.items;
    if (!Array.isArray(items))
      return new ResponseError(
        SERVICE_INVALID_PARAMS,
        'params need "items": an array of {taskId, candidate} or {file, hole, candidate}',
      );
    const batchId = (params as { batchId?: unknown }).batchId;
    if (batchId !== undefined && typeof batchId !== "string")
      return new ResponseError(SERVICE_INVALID_PARAMS, '"batchId" must be a string when given');
    if (this.pending + items.length > this.options.queueLimit) {
      this.counters.busy++;
      const why =
        items.length > this.options.queueLimit
          ? `a batch of ${items.length} items is larger than the queue (${this.options.queueLimit}): split it, or restart the service with a larger --max-queue`
          : `busy: ${this.pending} items are queued (limit ${this.options.queueLimit}); retry shortly, or start more services and give them all to the client`;
      return new ResponseError(SERVICE_BUSY, why);
    }
    this.pending += items.length;
    const progress =
      batchId === undefined
        ? undefined
        : new BatchProgress(
            batchId,
            items.length,
            // A client that left cannot be told; its batch is aborted through `signal`.
            (note) => void rpc.sendNotification(VerifyProgress, note).catch(() => undefined),
            this.options.progressIntervalMs ?? PROGRESS_INTERVAL_MS,
          );
    if (progress) this.watched.add(progress);
    try {
      return { verdicts: await this.check(items, signal, progress) };
    } finally {
      if (progress) {
        progress.close();
        this.watched.delete(progress);
      }
      this.pending -= items.length;
      this.counters.checks += items.length;
      this.rate.add(items.length);
    }
  }

  private async check(
    items: unknown[],
    signal: AbortSignal,
    progress: BatchProgress | undefined,
  ): Promise<BatchVerdict[]> {
    const verdicts: (BatchVerdict | undefined)[] = new Array(items.length);
    const work: { task: VerifyTask; candidate: string; index: number }[] = [];
    items.forEach((item, index) => {
      const resolved = resolveItem(item, this.options.tasks);
      if (resolved.kind === "bad")
        verdicts[index] = bareVerdict(itemLabel(item), "rejected", resolved.message, this.verifier.identity);
      else work.push({ task: resolved.task, candidate: resolved.candidate, index });
    });
    let results: Verdict[] = [];
    let failure = "the client disconnected before this candidate was checked";
    try {
      results = await this.verifier.verifyMany(work, (done) => this.progressed(progress, done), signal);
    } catch (error) {
      failure = `the verifier failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    work.forEach((w, j) => {
      const verdict = results[j];
      const label = itemLabel(items[w.index]);
      verdicts[w.index] = verdict
        ? batchVerdict(label, verdict, this.options.reward)
        : bareVerdict(label, "crashed", failure, this.verifier.identity);
    });
    this.options.observe?.(verdicts as BatchVerdict[]);
    return verdicts as BatchVerdict[];
  }

  /** One check of a batch finished: every watched batch in flight hears that the service progressed. */
  private progressed(progress: BatchProgress | undefined, done: number): void {
    this.finished++;
    progress?.ownDone(done);
    for (const watched of this.watched) watched.serviceProgressed(this.finished);
  }

  /** Stops listening and closes every connection (answers not yet sent are lost, as in a crash). */
  async stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of [...this.connections]) {
      c.abort.abort();
      c.rpc.dispose();
      c.socket.destroy();
    }
    this.connections.clear();
    await closed;
  }
}
