/**
 * HTTP to a Kimina Lean Server: checks queue up and go out in batches (`snippets` of one `POST /api/check`),
 * a few requests at a time; 429 ("No available REPLs") is retried with exponential backoff (honouring
 * Retry-After); a server without `/api/check` (404) is asked on `/verify`, its older endpoint. Every request
 * has a deadline; a request past it answers each of its checks with a timeout. A 5xx is not retried here:
 * Kimina answers 500 for a whole request when one snippet's REPL fails (server/routers/check.py, "Snippet
 * execution failed"), which sending the same batch again only repeats; the verifier instead asks again for
 * each of its checks alone, on a fresh REPL (`fresh`), and decides whose failure it was (kimina/verifier.ts).
 * A refused connection (nothing sent: the server is down or restarting) is retried with the same backoff; a
 * connection that breaks after the request was sent (the server went down holding it) is not: each of its
 * checks is answered `lost`, and the verifier asks them again one at a time (`alone`).
 */
import { readResult, type CheckRequestBody, type KiminaResult, type VerifyRequestBody } from "./protocol";

export interface KiminaClientOptions {
  /** The server's base URL, e.g. http://127.0.0.1:8000. */
  url: string;
  apiKey?: string;
  /** Per check, ms: sent as Kimina's `timeout` (seconds); the HTTP deadline is a little longer. */
  timeoutMs: number;
  /** Snippets per request (kimina-client's default is 8). */
  batchSize?: number;
  /** Requests in flight at once. */
  concurrency?: number;
  /** Retries of a 429 or a refused connection before the checks are reported crashed. */
  maxRetries?: number;
  /** First backoff after a 429, doubled each time (ms). */
  backoffMs?: number;
}

export type KiminaAnswer =
  | { kind: "result"; result: KiminaResult }
  | { kind: "timeout" }
  /** `unreachable`: the server refused connections (nothing sent) through every retry: it is down. */
  | { kind: "failed"; reason: string; unreachable?: boolean }
  /**
   * The connection broke after the request was sent (reset, closed mid-answer): the server went down while
   * it held these checks. Never retried as a batch: the verifier retries each check alone (kimina/verifier.ts).
   */
  | { kind: "lost"; reason: string };

interface Pending {
  id: string;
  code: string;
  resolve: (answer: KiminaAnswer) => void;
}

export interface CheckOptions {
  /**
   * Send this check alone, on a REPL started for it (`reuse: false`; `/verify`: `disable_cache: true`), at
   * once rather than batched: the retry of a check whose REPL failed.
   */
  fresh?: boolean;
  /**
   * Send this check on a fresh REPL with nothing else in flight: the client waits for the requests under way,
   * holds every other check until it is answered, and so a server that goes down meanwhile went down on it
   * alone. The retry of a check whose request the server dropped by going down.
   */
  alone?: boolean;
}

/** Connection errors that mean nothing was sent (the server is not there): safe to retry as they are. */
const NOT_SENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** The system error code behind a failed fetch (undici wraps it in `cause`, sometimes twice). */
function errorCode(error: unknown): string | undefined {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export class KiminaClient {
  private readonly queue: Pending[] = [];
  /** Fresh checks (sent at once, outside the batches) and checks to send alone (one at a time, nothing beside). */
  private readonly freshQueue: Pending[] = [];
  private readonly aloneQueue: Pending[] = [];
  private aloneRunning = false;
  private inFlight = 0;
  private nextId = 0;
  private endpoint: "/api/check" | "/verify" = "/api/check";
  private closed = false;
  private scheduled = false;
  readonly batchSize: number;
  readonly concurrency: number;
  /** Requests answered 429 and retried (for tests and benchmarks). */
  readonly stats = { requests: 0, retried429: 0 };

  constructor(private readonly options: KiminaClientOptions) {
    this.batchSize = Math.max(1, options.batchSize ?? 8);
    this.concurrency = Math.max(1, options.concurrency ?? 4);
  }

  /** How long one request may take before its checks are answered with a timeout, ms. */
  get requestDeadlineMs(): number {
    return Math.round(this.options.timeoutMs * 1.5) + 1000;
  }

  get url(): string {
    return this.options.url.replace(/\/+$/, "");
  }

  check(code: string, options: CheckOptions = {}): Promise<KiminaAnswer> {
    if (this.closed) return Promise.resolve({ kind: "failed", reason: "the Kimina client was stopped" });
    if (options.fresh || options.alone)
      return new Promise((resolve) => {
        (options.alone ? this.aloneQueue : this.freshQueue).push({
          id: `fimrlvr-${this.nextId++}`,
          code,
          resolve,
        });
        this.pump();
      });
    return new Promise((resolve) => {
      this.queue.push({ id: `fimrlvr-${this.nextId++}`, code, resolve });
      // Checks queued in the same tick go out together.
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => {
          this.scheduled = false;
          this.pump();
        });
      }
    });
  }

  close(): void {
    this.closed = true;
    for (const p of [...this.queue.splice(0), ...this.freshQueue.splice(0), ...this.aloneQueue.splice(0)])
      p.resolve({ kind: "failed", reason: "the Kimina client was stopped" });
  }

  private start(batch: Pending[], fresh: boolean, alone = false): void {
    this.inFlight++;
    if (alone) this.aloneRunning = true;
    void this.send(batch, fresh).finally(() => {
      this.inFlight--;
      if (alone) this.aloneRunning = false;
      this.pump();
    });
  }

  private pump(): void {
    // A check to send alone waits for the requests under way, and everything else waits for it.
    if (this.aloneRunning) return;
    if (this.aloneQueue.length > 0) {
      if (this.inFlight === 0) this.start(this.aloneQueue.splice(0, 1), true, true);
      return;
    }
    for (const p of this.freshQueue.splice(0)) this.start([p], true);
    while (this.inFlight < this.concurrency && this.queue.length > 0)
      this.start(this.queue.splice(0, this.batchSize), false);
  }

  private body(batch: Pending[], fresh: boolean): CheckRequestBody | VerifyRequestBody {
    const timeout = Math.max(1, Math.ceil(this.options.timeoutMs / 1000));
    return this.endpoint === "/api/check"
      ? {
          snippets: batch.map((p) => ({ id: p.id, code: p.code })),
          timeout,
          debug: false,
          reuse: !fresh,
          infotree: null,
        }
      : {
          codes: batch.map((p) => ({ custom_id: p.id, proof: p.code })),
          timeout,
          infotree_type: null,
          disable_cache: fresh,
        };
  }

  private async send(batch: Pending[], fresh = false): Promise<void> {
    const fail = (answer: KiminaAnswer) => batch.forEach((p) => p.resolve(answer));
    const maxRetries = this.options.maxRetries ?? 6;
    let backoff = this.options.backoffMs ?? 500;
    for (let attempt = 0; ; attempt++) {
      if (this.closed) return fail({ kind: "failed", reason: "the Kimina client was stopped" });
      const answer = await this.post(batch, fresh);
      if (answer.kind === "answered") {
        const byId = new Map(answer.results.map((r) => [r.id, r]));
        for (const p of batch) {
          const r = byId.get(p.id);
          p.resolve(
            r
              ? { kind: "result", result: r }
              : {
                  kind: "failed",
                  reason: `Kimina's answer (${this.endpoint}) holds no result for this check`,
                },
          );
        }
        return;
      }
      if (answer.kind === "not-found" && this.endpoint === "/api/check") {
        this.endpoint = "/verify"; // An older server: its endpoint takes the same checks.
        continue;
      }
      if (answer.kind === "timeout") return fail({ kind: "timeout" });
      if (answer.kind === "lost") return fail({ kind: "lost", reason: answer.reason });
      if (answer.kind === "retry" && attempt < maxRetries) {
        if (answer.busy) this.stats.retried429++;
        await sleep(Math.max(backoff, answer.retryAfterMs ?? 0));
        backoff *= 2;
        continue;
      }
      return fail({
        kind: "failed",
        reason:
          answer.kind === "not-found" ? `${this.url} has neither /api/check nor /verify` : answer.reason,
        ...(answer.kind === "retry" && !answer.busy ? { unreachable: true } : {}),
      });
    }
  }

  private async post(
    batch: Pending[],
    fresh: boolean,
  ): Promise<
    | { kind: "answered"; results: KiminaResult[] }
    | { kind: "retry"; reason: string; busy: boolean; retryAfterMs?: number }
    | { kind: "not-found" }
    | { kind: "timeout" }
    | { kind: "failed"; reason: string }
    | { kind: "lost"; reason: string }
  > {
    const deadline = this.requestDeadlineMs;
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (this.options.apiKey) headers["authorization"] = `Bearer ${this.options.apiKey}`;
    let response: Response;
    this.stats.requests++;
    try {
      response = await fetch(`${this.url}${this.endpoint}`, {
        method: "POST",
        headers,
        body: JSON.stringify(this.body(batch, fresh)),
        signal: AbortSignal.timeout(deadline),
      });
    } catch (error) {
      const name = error instanceof Error ? error.name : "";
      if (name === "TimeoutError" || name === "AbortError") return { kind: "timeout" };
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
      const code = errorCode(error);
      // Refused (nothing sent): the server is down or restarting; waiting and sending again is safe.
      if (code !== undefined && NOT_SENT.has(code))
        return {
          kind: "retry",
          busy: false,
          reason: `could not reach the Kimina Lean Server at ${this.url}${cause}`,
        };
      // Anything else broke a request already sent: the server went down holding it (fail closed: the
      // verifier retries each check alone before deciding whose failure it was).
      return {
        kind: "lost",
        reason: `the Kimina Lean Server at ${this.url} dropped the connection while checking${cause}`,
      };
    }
    const text = await response.text().catch(() => "");
    if (response.status === 429) {
      const after = Number(response.headers.get("retry-after"));
      return {
        kind: "retry",
        busy: true,
        reason: `the Kimina Lean Server stayed busy (429: ${text.slice(0, 200)}); give it more REPLs or lower --workers`,
        ...(Number.isFinite(after) && after > 0 ? { retryAfterMs: after * 1000 } : {}),
      };
    }
    if (response.status === 404) return { kind: "not-found" };
    if (response.status === 401 || response.status === 403)
      return {
        kind: "failed",
        reason: `the Kimina Lean Server refused the request (${response.status}); set LEAN_SERVER_API_KEY to its API key`,
      };
    if (response.status >= 500)
      return {
        kind: "failed",
        reason: `the Kimina Lean Server failed (${response.status}: ${text.slice(0, 200)})`,
      };
    if (!response.ok)
      return {
        kind: "failed",
        reason: `the Kimina Lean Server answered ${response.status}: ${text.slice(0, 200)}`,
      };
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      return { kind: "failed", reason: `the Kimina Lean Server's answer is not JSON: ${text.slice(0, 200)}` };
    }
    const raw = (json as { results?: unknown }).results;
    const results = Array.isArray(raw) ? raw.map(readResult) : [];
    if (!Array.isArray(raw) || results.some((r) => r === undefined))
      return {
        kind: "failed",
        reason: "the Kimina Lean Server's answer is not of its documented shape (results)",
      };
    return { kind: "answered", results: results as KiminaResult[] };
  }
}
