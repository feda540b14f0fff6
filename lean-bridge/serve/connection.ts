/**
 * One client connection to one verifier service. It connects on demand (with backoff while the service is
 * down), opens every connection with the `auth` handshake, and turns every request into an outcome: answered,
 * refused by the service (bad token, bad params), busy, or lost with the connection. A lost request was not
 * answered, so its checks are safe to resubmit. A refused handshake is remembered (`refusal`): retrying with the
 * same token cannot succeed, and the client says so at once.
 */
import { connect, type Socket } from "node:net";
import {
  createMessageConnection,
  ResponseError,
  SocketMessageWriter,
  type MessageConnection,
  type RequestType,
} from "vscode-jsonrpc/node";
import { Auth, SERVICE_BUSY } from "../protocol/trainer";
import { socketReader } from "../util/messageReaders";

export interface ServiceAddress {
  host: string;
  port: number;
}

export function formatAddress(a: ServiceAddress): string {
  return a.host.includes(":") ? `[${a.host}]:${a.port}` : `${a.host}:${a.port}`;
}

export type RequestOutcome<R> =
  | { kind: "ok"; result: R }
  | { kind: "busy"; message: string }
  | { kind: "refused"; code: number; message: string }
  | { kind: "lost"; message: string };

export interface ConnectionTiming {
  /** First wait between connection attempts, ms (doubled up to maxBackoffMs). */
  backoffMs: number;
  maxBackoffMs: number;
  /** How long one attempt may wait for the TCP handshake (a preempted machine never answers), ms. */
  connectTimeoutMs: number;
}

export const DEFAULT_TIMING: ConnectionTiming = { backoffMs: 50, maxBackoffMs: 1000, connectTimeoutMs: 3000 };

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

interface Live {
  socket: Socket;
  rpc: MessageConnection;
  closed: Promise<void>;
}

type Opened = { kind: "ok"; live: Live } | { kind: "down" } | { kind: "refused"; message: string };

export class ServiceConnection {
  /** Items sent and not yet answered: the balancer's measure of load. */
  outstanding = 0;
  /** Times a connection was made again after one was lost. */
  reconnects = 0;
  /** Why the service refused the handshake (a wrong or missing token); set until a handshake succeeds. */
  refusal: string | undefined;
  private live: Live | undefined;
  private connecting: Promise<boolean> | undefined;
  private everConnected = false;
  /** When the next connection attempt may be made, and the wait after the next failure (backoff). */
  private nextAttemptAt = 0;
  private wait: number;
  private closedByUser = false;

  constructor(
    readonly address: ServiceAddress,
    private readonly timing: ConnectionTiming = DEFAULT_TIMING,
    private readonly token?: string,
  ) {
    this.wait = timing.backoffMs;
  }

  get isUp(): boolean {
    return this.live !== undefined;
  }

  get label(): string {
    return formatAddress(this.address);
  }

  /**
   * Connects, retrying with backoff until `deadline` (performance.now() ms); true when up. A deadline in the
   * past makes one attempt, unless the last failure was too recent (then none: a dead service costs nothing).
   */
  connect(deadline: number): Promise<boolean> {
    if (this.live) return Promise.resolve(true);
    this.connecting ??= this.attempts(deadline).finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async attempts(deadline: number): Promise<boolean> {
    for (;;) {
      if (this.closedByUser) return false;
      const now = performance.now();
      if (now >= this.nextAttemptAt) {
        const opened = await this.open();
        if (opened.kind === "ok") {
          this.refusal = undefined;
          this.live = opened.live;
          this.wait = this.timing.backoffMs;
          this.nextAttemptAt = 0;
          return true;
        }
        if (opened.kind === "refused") {
          this.refusal = opened.message;
          this.nextAttemptAt = performance.now() + this.timing.maxBackoffMs;
          return false;
        }
        this.nextAttemptAt = performance.now() + this.wait;
        this.wait = Math.min(this.wait * 2, this.timing.maxBackoffMs);
      }
      if (this.nextAttemptAt > deadline) return false;
      await sleep(Math.max(0, this.nextAttemptAt - performance.now()));
    }
  }

  /** A TCP connection that has passed the handshake, or why not. */
  private async open(): Promise<Opened> {
    const socket = await this.tcp();
    if (!socket) return { kind: "down" };
    const live = this.adopt(socket);
    let timer: NodeJS.Timeout | undefined;
    const outcome = await Promise.race([
      live.rpc.sendRequest(Auth, this.token !== undefined ? { token: this.token } : {}).then(
        (): Opened => ({ kind: "ok", live }),
        (error: unknown): Opened =>
          error instanceof ResponseError && error.code > -32090
            ? { kind: "refused", message: `${this.label} refused the connection: ${error.message}` }
            : { kind: "down" },
      ),
      live.closed.then((): Opened => ({ kind: "down" })),
      new Promise<Opened>(
        (resolve) => (timer = setTimeout(() => resolve({ kind: "down" }), this.timing.connectTimeoutMs)),
      ),
    ]);
    clearTimeout(timer);
    if (outcome.kind !== "ok") {
      live.rpc.dispose();
      socket.destroy();
    }
    return outcome;
  }

  private tcp(): Promise<Socket | undefined> {
    return new Promise((resolve) => {
      const socket = connect({ host: this.address.host, port: this.address.port });
      const timer = setTimeout(() => fail(), this.timing.connectTimeoutMs);
      const fail = () => {
        clearTimeout(timer);
        socket.destroy();
        resolve(undefined);
      };
      socket.once("error", fail);
      socket.once("connect", () => {
        clearTimeout(timer);
        socket.off("error", fail);
        socket.setNoDelay(true);
        resolve(socket);
      });
    });
  }

  private adopt(socket: Socket): Live {
    if (this.everConnected) this.reconnects++;
    this.everConnected = true;
    const rpc = createMessageConnection(socketReader(socket), new SocketMessageWriter(socket));
    let markClosed: () => void = () => {};
    const closed = new Promise<void>((resolve) => (markClosed = resolve));
    const entry: Live = { socket, rpc, closed };
    const drop = () => {
      if (this.live === entry) this.live = undefined;
      rpc.dispose();
      socket.destroy();
      markClosed();
    };
    socket.on("error", drop);
    socket.on("close", drop);
    rpc.onClose(drop);
    rpc.listen();
    return entry;
  }

  /** Sends one request; never throws. `items` counts toward `outstanding` while it is in flight. */
  async request<P, R>(type: RequestType<P, R, void>, params: P, items = 0): Promise<RequestOutcome<R>> {
    const live = this.live;
    if (!live) return { kind: "lost", message: `${this.label} is not connected` };
    this.outstanding += items;
    try {
      const lost = live.closed.then(
        () => ({ kind: "lost", message: `the connection to ${this.label} was lost` }) as const,
      );
      const answered = live.rpc.sendRequest<R>(type.method, params).then(
        (result): RequestOutcome<R> => ({ kind: "ok", result }),
        (error: unknown): RequestOutcome<R> => {
          if (error instanceof ResponseError && error.code === SERVICE_BUSY)
            return { kind: "busy", message: error.message };
          // Errors the service chose to send are refusals; anything else means the answer never came.
          if (error instanceof ResponseError && error.code > -32090)
            return { kind: "refused", code: error.code, message: error.message };
          return {
            kind: "lost",
            message: `${this.label}: ${error instanceof Error ? error.message : String(error)}`,
          };
        },
      );
      return await Promise.race([answered, lost]);
    } finally {
      this.outstanding -= items;
    }
  }

  /**
   * Drops the connection after a loss; a later `connect` makes a new one once the backoff has passed (a dying
   * service may still accept a connection it then resets, and must not be hammered).
   */
  reset(): void {
    const live = this.live;
    this.live = undefined;
    live?.rpc.dispose();
    live?.socket.destroy();
    this.nextAttemptAt = performance.now() + this.wait;
    this.wait = Math.min(this.wait * 2, this.timing.maxBackoffMs);
  }

  close(): void {
    this.closedByUser = true;
    const live = this.live;
    this.live = undefined;
    live?.rpc.dispose();
    live?.socket.destroy();
  }
}
