/**
 * The verifier service: the pool behind a TCP port, JSON-RPC with LSP framing (vscode-jsonrpc over net
 * sockets). Each request is answered as soon as its own checks finish, so a slow proof never holds back
 * another client's answer (the pool has its own slots). Back-pressure is a bounded number of accepted items:
 * a batch that would exceed it is refused at once with the busy error, never queued in unbounded memory.
 * While a batch sent with a `batchId` is checked, its client hears `verify/progress` (./progress.ts) whenever
 * any check of the service finishes: how a trainer tells a slow verifier from one that stopped. A frame that
 * breaks the bounds of ./frameBounds.ts (a header or body that never completes, an absurd Content-Length) ends
 * its connection with an error, so no client holds a socket the service cannot answer. Every connection begins
 * with the `auth` handshake (./handshake.ts), read in a first frame of a few KiB before anything else of the
 * client; connections are capped in total and per peer (./admission.ts), one that does not authenticate within
 * `authTimeoutMs` is closed, and so is one idle for `idleTimeoutMs`.
 */
import { createServer, type Server, type Socket } from "node:net";
import {
  createMessageConnection,
  ResponseError,
  StreamMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import { ConnectionTable, DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from "./admission";
import { answerHandshake, errorFrame } from "./handshake";
import { ServiceRequestReader } from "./requestReader";
import type { VerifyTask } from "../verify/verifier";
import type { RewardMode } from "../verify/rewards";
import type { Verdict, VerifierIdentity } from "../verify/verdict";
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
import {
  CLOSE_GRACE_MS,
  closeWith,
  DEFAULT_FRAME_BOUNDS,
  guardFrames,
  type FrameBounds,
} from "./frameBounds";
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
  /** Caps on connections and their handshake and idle times (default DEFAULT_CONNECTION_LIMITS). */
  connectionLimits?: ConnectionLimits;
}

/** One client connection, from its accept to its close. */
interface ClientConnection {
  readonly peer: string;
  authenticated: boolean;
  readonly socket: Socket;
  readonly rpc: MessageConnection;
  readonly abort: AbortController;
  /** Requests received and not yet answered. */
  inFlight: number;
  /** performance.now() of the client's last byte or the service's last answer. */
  lastActivity: number;
  timer: NodeJS.Timeout | undefined;
}

export const DEFAULT_QUEUE_LIMIT = 4096;

export type ServiceStart = { kind: "ok"; service: VerifierService } | { kind: "error"; message: string };

export class VerifierService {
  private readonly connections: ConnectionTable<ClientConnection>;
  private readonly started = performance.now();
  private readonly rate = new RateWindow(10);
  private pending = 0;
  private counters = { checks: 0, refused: 0, busy: 0, connectionsRefused: 0, evicted: 0 };
  /** Checks finished, every client's: what `verify/progress` reports as the service's progress. */
  private finished = 0;
  /** The batches in flight whose clients asked for progress. */
  private readonly watched = new Set<BatchProgress>();

  private constructor(
    private readonly server: Server,
    private readonly verifier: ServiceVerifier,
    private readonly options: ServiceOptions,
  ) {
    this.limits = options.connectionLimits ?? DEFAULT_CONNECTION_LIMITS;
    this.bounds = options.frameBounds ?? DEFAULT_FRAME_BOUNDS;
    this.connections = new ConnectionTable(this.limits);
    server.on("connection", (socket) => this.accept(socket));
  }

  private readonly limits: ConnectionLimits;
  private readonly bounds: FrameBounds;

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

  /** Connections held now that have not authenticated, and connections closed or refused to keep the caps. */
  get admission(): { unauthenticated: number; evicted: number; refused: number } {
    return {
      unauthenticated: this.connections.unauthenticated,
      evicted: this.counters.evicted,
      refused: this.counters.connectionsRefused,
    };
  }

  private accept(socket: Socket): void {
    socket.setNoDelay(true);
    // A client that vanishes (a reset) is the same as one that leaves.
    socket.on("error", () => socket.destroy());
    const peer = socket.remoteAddress ?? "unknown";
    const admission = this.connections.admit(peer);
    if (admission.kind === "refused") {
      this.counters.connectionsRefused++;
      closeWith(
        socket,
        errorFrame(null, SERVICE_BUSY, `the service refused this connection: ${admission.why}`),
        CLOSE_GRACE_MS,
      );
      return;
    }
    for (const victim of admission.evict) {
      this.counters.evicted++;
      this.close(
        victim,
        "the service closed this connection to make room for new ones: it had not sent `auth` (send it first, at once)",
      );
    }
    // The reader reads only what the guard passes on: nothing before an accepted `auth`.
    // The guard's callbacks run on the client's bytes, after this method has made the entry.
    const made: { entry?: ClientConnection } = {};
    const { input } = guardFrames(socket, this.bounds, {
      onBreach: () => made.entry && this.forget(made.entry),
      onFirstFrame: (body) => {
        const outcome = answerHandshake(body, this.options.policy, {
          maxBodyBytes: this.bounds.maxBodyBytes,
          idleTimeoutMs: this.limits.idleTimeoutMs,
        });
        if (outcome.kind === "refused") {
          this.counters.refused++;
          closeWith(socket, outcome.reply, CLOSE_GRACE_MS);
          if (made.entry) this.forget(made.entry);
          return "stop";
        }
        socket.write(outcome.reply);
        if (made.entry) this.authenticated(made.entry);
        return "pass";
      },
    });
    // A stream writer: disposing it leaves the socket to closeWith (a SocketMessageWriter would destroy it).
    const writer = new StreamMessageWriter(socket);
    const reader = new ServiceRequestReader(
      input,
      (message) => void writer.write(message).catch(() => undefined),
    );
    const rpc = createMessageConnection(reader, writer);
    const connection: ClientConnection = {
      peer,
      authenticated: false,
      socket,
      rpc,
      abort: new AbortController(),
      inFlight: 0,
      lastActivity: performance.now(),
      timer: undefined,
    };
    made.entry = connection;
    this.connections.add(connection);
    connection.timer = setTimeout(
      () =>
        this.close(
          connection,
          `the service closed this connection: no \`auth\` within ${this.limits.authTimeoutMs} ms of connecting`,
          SERVICE_UNAUTHORIZED,
        ),
      this.limits.authTimeoutMs,
    );
    socket.on("data", () => (connection.lastActivity = performance.now()));
    const drop = () => {
      this.forget(connection);
      socket.destroy();
    };
    socket.on("close", drop);
    rpc.onClose(drop);
    const counted =
      <P, R>(handler: (params: P) => Promise<R> | R) =>
      async (params: P): Promise<R> => {
        connection.inFlight++;
        try {
          return await handler(params);
        } finally {
          connection.inFlight--;
          connection.lastActivity = performance.now();
        }
      };
    rpc.onRequest(
      VerifyBatch,
      counted((params) => this.verifyBatch(params, connection.abort.signal, rpc)),
    );
    rpc.onRequest(
      Stats,
      counted((params) => this.refuse(params) ?? this.stats()),
    );
    rpc.listen();
  }

  /** The handshake was accepted: the auth timer gives way to the idle timer. */
  private authenticated(connection: ClientConnection): void {
    connection.authenticated = true;
    clearTimeout(connection.timer);
    connection.lastActivity = performance.now();
    this.armIdle(connection, this.limits.idleTimeoutMs);
  }

  /** Closes `connection` once it has been idle (no request in flight, no byte) for the whole idle time. */
  private armIdle(connection: ClientConnection, ms: number): void {
    connection.timer = setTimeout(() => {
      const quiet = performance.now() - connection.lastActivity;
      if (connection.inFlight > 0) this.armIdle(connection, this.limits.idleTimeoutMs);
      else if (quiet < this.limits.idleTimeoutMs) this.armIdle(connection, this.limits.idleTimeoutMs - quiet);
      else
        this.close(
          connection,
          `the service closed this connection: idle for ${this.limits.idleTimeoutMs} ms (connect again when there is work)`,
        );
    }, ms);
  }

  /** Tells the client why (with `code`), and closes its connection. */
  private close(connection: ClientConnection, why: string, code = SERVICE_BUSY): void {
    closeWith(connection.socket, errorFrame(null, code, why), CLOSE_GRACE_MS);
    this.forget(connection);
  }

  /**
   * The connection no longer counts: it left, or it is being closed (its socket lingers a moment in closeWith
   * for the client to read why, outside the caps).
   */
  private forget(connection: ClientConnection): void {
    if (!this.connections.delete(connection)) return;
    clearTimeout(connection.timer);
    // Checks of a client that left are not started: nobody is waiting for them.
    connection.abort.abort();
    connection.rpc.dispose();
  }

  /**
   * The connection authenticated with `auth`, so a request needs no token of its own; one that still carries a
   * `token` (clients before the handshake) must carry the right one.
   */
  private refuse(params: unknown): ResponseError | undefined {
    const token = (params as { token?: unknown } | null)?.token;
    if (token === undefined || tokenAccepted(this.options.policy, token)) return undefined;
    this.counters.refused++;
    return new ResponseError(
      SERVICE_UNAUTHORIZED,
      "wrong token: pass the one `fim-rlvr serve` printed (or its --token), in `auth` (a request's own `token` may be left out)",
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
    for (const c of this.connections.values()) {
      this.connections.delete(c);
      clearTimeout(c.timer);
      c.abort.abort();
      c.rpc.dispose();
      c.socket.destroy();
    }
    await closed;
  }
}
