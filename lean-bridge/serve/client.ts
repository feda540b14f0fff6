/**
 * A client of one or more verifier services. It balances holes over the services (a new hole goes to the
 * one with the fewest items in flight) and keeps a hole's GRPO group on the service that saw it first, whose
 * Lean documents already hold that declaration's snapshots. When a service's connection is lost mid-batch
 * (a restart, a preempted machine), what it had in flight is resubmitted to another service, or to the same
 * one once it is back: a lost check is retried, never counted as the model's failure. Only when no service
 * can be reached for `retryWindowMs` do the items get `environment` verdicts, which trainers mask out.
 */
import { LRUCache } from "lru-cache";
import { ServiceConnection, DEFAULT_TIMING, type ConnectionTiming, type ServiceAddress } from "./connection";
import {
  Stats,
  VerifyBatch,
  type BatchVerdict,
  type ServiceItem,
  type ServiceStats,
  type VerifierIdentity,
} from "../protocol/trainer";
import { holeKey } from "./protocol";
import { itemLabel } from "./items";
import { bareVerdict } from "./wire";

export interface ClientOptions {
  /** The services' token (the one `fim-rlvr serve` printed). */
  token?: string;
  /** How long a batch may wait for any service to be reachable again, ms (default 60 s). */
  retryWindowMs?: number;
  /** How long a batch may keep retrying services that answer "busy", ms (default 10 min). */
  busyWindowMs?: number;
  /** The most items sent in one request (default 512; services refuse batches larger than their queue). */
  maxBatchItems?: number;
  timing?: ConnectionTiming;
}

export type ClientBatch = { kind: "ok"; verdicts: BatchVerdict[] } | { kind: "error"; message: string };

export type ServiceReport =
  { address: string; kind: "ok"; stats: ServiceStats } | { address: string; kind: "down"; message: string };

/** Stamped on verdicts the client makes itself before any service ever answered. */
const NO_VERIFIER: VerifierIdentity = {
  kind: "simulator",
  version: "-",
  label: "none (no verifier service reached)",
};

/** Times one item may be lost with a service before the client gives up on it (a service that drops every request). */
const MAX_SENDS = 5;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class VerifierClient {
  private readonly services: ServiceConnection[];
  /** Hole key → the service holding its snapshots (bounded: old holes are forgotten first). */
  private readonly affinity = new LRUCache<string, ServiceConnection>({ max: 100_000 });
  private readonly options: Required<Omit<ClientOptions, "token">> & { token?: string };
  /** Items resubmitted after their service was lost; busy answers retried. */
  readonly counters = { resubmitted: 0, busyRetries: 0 };
  /** The verifier of the last answer, for the verdicts the client has to make itself. */
  private identity: VerifierIdentity = NO_VERIFIER;

  constructor(addresses: readonly ServiceAddress[], options: ClientOptions = {}) {
    if (addresses.length === 0) throw new Error("VerifierClient needs at least one service address");
    this.options = {
      retryWindowMs: 60_000,
      busyWindowMs: 600_000,
      maxBatchItems: 512,
      timing: DEFAULT_TIMING,
      ...options,
    };
    this.services = addresses.map((a) => new ServiceConnection(a, this.options.timing, this.options.token));
  }

  /** Connections made again after a loss, over all services. */
  get reconnects(): number {
    return this.services.reduce((n, s) => n + s.reconnects, 0);
  }

  /**
   * Verifies the items; verdicts come back in their order. A refusal (bad token, malformed items) is an
   * error that says what to fix; anything a lost or busy service causes is retried.
   */
  async verifyBatch(items: readonly ServiceItem[]): Promise<ClientBatch> {
    const verdicts: (BatchVerdict | undefined)[] = new Array(items.length);
    let todo = items.map((_, k) => k);
    const sends = new Array<number>(items.length).fill(0);
    const busySince = performance.now();
    const giveUp = (k: number, message: string) =>
      (verdicts[k] = bareVerdict(itemLabel(items[k]), "environment", message, this.identity));
    while (todo.length > 0) {
      const live = await this.liveServices(performance.now() + this.options.retryWindowMs);
      // A refused handshake (a wrong or missing token) is a setup error: retrying cannot mend it.
      const refused = this.services.find((s) => s.refusal !== undefined);
      if (refused) return { kind: "error", message: refused.refusal! };
      if (live.length === 0) {
        const where = this.services.map((s) => s.label).join(", ");
        for (const k of todo)
          giveUp(
            k,
            `no verifier service answered within ${this.options.retryWindowMs / 1000} s (${where}): start one with \`fim-rlvr serve\``,
          );
        break;
      }
      const requests = [...this.route(todo, items, live)].flatMap(([service, indices]) =>
        chunks(indices, this.options.maxBatchItems).map((chunk) => ({ service, chunk })),
      );
      for (const k of todo) sends[k]!++;
      const outcomes = await Promise.all(
        requests.map(({ service, chunk }) =>
          service.request(
            VerifyBatch,
            {
              ...(this.options.token !== undefined ? { token: this.options.token } : {}),
              items: chunk.map((k) => items[k]!),
            },
            chunk.length,
          ),
        ),
      );
      todo = [];
      let busy = false;
      for (const [j, outcome] of outcomes.entries()) {
        const { service, chunk } = requests[j]!;
        if (outcome.kind === "ok") {
          chunk.forEach((k, i) => (verdicts[k] = outcome.result.verdicts[i]));
          const first = outcome.result.verdicts[0];
          if (first) this.identity = first.verifier;
        } else if (outcome.kind === "refused")
          return { kind: "error", message: `${service.label} refused the batch: ${outcome.message}` };
        else if (outcome.kind === "busy") {
          busy = true;
          this.counters.busyRetries += chunk.length;
          todo.push(...chunk);
        } else {
          // The service is gone: its holes move elsewhere, its items are sent again.
          this.forget(service);
          for (const k of chunk) {
            if (sends[k]! >= MAX_SENDS)
              giveUp(k, `the check was lost with its service ${MAX_SENDS} times (last: ${outcome.message})`);
            else {
              this.counters.resubmitted++;
              todo.push(k);
            }
          }
        }
      }
      if (busy) {
        if (performance.now() - busySince > this.options.busyWindowMs)
          return {
            kind: "error",
            message: `every service stayed busy for ${this.options.busyWindowMs / 1000} s: start more services (fim-rlvr serve) and give them all to the client`,
          };
        await sleep(this.options.timing.backoffMs);
      }
    }
    return { kind: "ok", verdicts: verdicts as BatchVerdict[] };
  }

  /** The services' counters; a service that cannot be reached is reported as down. */
  async stats(): Promise<ServiceReport[]> {
    const deadline = performance.now() + this.options.timing.connectTimeoutMs;
    return Promise.all(
      this.services.map(async (s): Promise<ServiceReport> => {
        if (!(await s.connect(deadline)))
          return { address: s.label, kind: "down", message: s.refusal ?? "not reachable" };
        const outcome = await s.request(
          Stats,
          this.options.token !== undefined ? { token: this.options.token } : {},
        );
        return outcome.kind === "ok"
          ? { address: s.label, kind: "ok", stats: outcome.result }
          : { address: s.label, kind: "down", message: outcome.message };
      }),
    );
  }

  close(): void {
    for (const s of this.services) s.close();
  }

  /**
   * The services connected now. While one is up, down ones get one background attempt each (spaced by their
   * backoff); when none is up, the batch waits until the deadline for the first to come back.
   */
  private async liveServices(deadline: number): Promise<ServiceConnection[]> {
    const down = this.services.filter((s) => !s.isUp);
    const attempts = down.map((s) => s.connect(performance.now()));
    if (down.length < this.services.length) return this.services.filter((s) => s.isUp);
    await Promise.all(attempts);
    if (this.services.some((s) => s.isUp)) return this.services.filter((s) => s.isUp);
    const waits = this.services.map((s) =>
      s.connect(deadline).then((ok) => (ok ? Promise.resolve() : Promise.reject(new Error("down")))),
    );
    await Promise.any(waits).catch(() => undefined);
    return this.services.filter((s) => s.isUp);
  }

  /** Splits items by hole; a hole keeps its service while that service is up, new holes go to the least loaded. */
  private route(
    todo: number[],
    items: readonly ServiceItem[],
    live: ServiceConnection[],
  ): Map<ServiceConnection, number[]> {
    const byHole = new Map<string, number[]>();
    for (const k of todo) {
      const key = holeKey(items[k]!);
      const group = byHole.get(key);
      if (group) group.push(k);
      else byHole.set(key, [k]);
    }
    const planned = new Map<ServiceConnection, number[]>();
    const load = (s: ServiceConnection) => s.outstanding + (planned.get(s)?.length ?? 0);
    for (const [key, group] of byHole) {
      let service = this.affinity.get(key);
      if (!service || !live.includes(service)) {
        service = live.reduce((best, s) => (load(s) < load(best) ? s : best));
        this.affinity.set(key, service);
      }
      const list = planned.get(service);
      if (list) list.push(...group);
      else planned.set(service, [...group]);
    }
    return planned;
  }

  /** Drops a lost service's connection (it is made again on the next batch) and its holes. */
  private forget(service: ServiceConnection): void {
    service.reset();
    const keys = [...this.affinity.entries()].filter(([, s]) => s === service).map(([key]) => key);
    for (const key of keys) this.affinity.delete(key);
  }
}

function chunks<T>(list: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let k = 0; k < list.length; k += size) out.push(list.slice(k, k + size));
  return out;
}
