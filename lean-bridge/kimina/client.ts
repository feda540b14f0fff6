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
 *
 * Before the first check the client asks a probe to learn where the server counts message positions from (the
 * snippet, or the text after the imports it split off: positions.ts), and hands every answer on with positions
 * in the snippet as sent, so the verifier finds `#print axioms` on its line whatever the server's version. A
 * snippet the server would re-split into other lines than Lean's is never sent.
 */
import {
  describeBreak,
  kiminaLineBreak,
  snippetPositions,
  type KiminaFamily,
  type PositionBase,
} from "./positions";
import {
  readResult,
  type CheckRequestBody,
  type KiminaMessage,
  type KiminaResult,
  type VerifyRequestBody,
} from "./protocol";

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

/**
 * The position probe: Lean answers `#check Nat` with "Nat : Type" on the command's line, the snippet's line 3,
 * which is line 1 of what follows the imports. `Init` is what every Lean file imports anyway.
 */
export const POSITION_PROBE = "import Init\n\n#check Nat\n";

/** What the probe's answer says of the server's positions (positions.ts has each version's behaviour). */
export function readPositionProbe(
  answer: KiminaAnswer,
  family: KiminaFamily,
): { kind: "ok"; base: PositionBase } | { kind: "unknown"; reason: string; unreachable?: boolean } {
  if (answer.kind === "timeout") return { kind: "unknown", reason: "the probe got no answer in time" };
  if (answer.kind === "failed")
    return { kind: "unknown", reason: answer.reason, ...(answer.unreachable ? { unreachable: true } : {}) };
  if (answer.kind === "lost") return { kind: "unknown", reason: answer.reason };
  const { result } = answer;
  if (result.error) return { kind: "unknown", reason: `the probe failed: ${result.error}` };
  if (!result.response || "message" in result.response)
    return {
      kind: "unknown",
      reason: `the probe's REPL failed: ${result.response && "message" in result.response ? result.response.message : "no response"}`,
    };
  const check = (result.response.messages ?? []).find((m: KiminaMessage) => m.data.startsWith("Nat : Type"));
  if (!check) return { kind: "unknown", reason: "the probe's answer holds no `#check Nat` message" };
  if (check.pos.line === 1) return { kind: "ok", base: "body" };
  if (check.pos.line === 3 && family === "2.x") return { kind: "ok", base: "snippet" };
  return {
    kind: "unknown",
    reason: `the probe's \`#check Nat\` was answered on line ${check.pos.line}, where Kimina ${family} answers on line 1${family === "2.x" ? " or 3" : ""}`,
  };
}

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
  /** Where the server's positions count from, once the probe has said; a probe in flight. */
  private positionBase: PositionBase | undefined;
  private probing = false;
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

  /** What the server's endpoint says of its version: `/api/check` is 2.0 on, `/verify` alone 1.x. */
  get family(): KiminaFamily {
    return this.endpoint === "/api/check" ? "2.x" : "1.x";
  }

  /** Where the server counts positions from, once the probe has said (for tests and the report). */
  get positionsFrom(): PositionBase | undefined {
    return this.positionBase;
  }

  check(code: string, options: CheckOptions = {}): Promise<KiminaAnswer> {
    if (this.closed) return Promise.resolve({ kind: "failed", reason: "the Kimina client was stopped" });
    const breakAt = kiminaLineBreak(code);
    if (breakAt >= 0)
      return Promise.resolve({
        kind: "failed",
        reason: `not sent: the snippet holds ${describeBreak(code, breakAt)}, where the Kimina Lean Server breaks a line and Lean does not`,
      });
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
    if (this.positionBase === undefined) return this.probe();
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

  /**
   * Asks the position probe, once at a time, before any check goes out. A probe that cannot say fails the checks
   * waiting (the server is down, or its answers are not what any known version gives); the next check asks again.
   */
  private probe(): void {
    if (this.probing || this.closed) return;
    const waiting = this.queue.length + this.freshQueue.length + this.aloneQueue.length;
    if (waiting === 0) return;
    this.probing = true;
    void new Promise<KiminaAnswer>((resolve) => {
      void this.send(
        [{ id: `fimrlvr-positions-${this.nextId++}`, code: POSITION_PROBE, resolve }],
        false,
        false,
      );
    }).then((answer) => {
      this.probing = false;
      const read = readPositionProbe(answer, this.family);
      if (read.kind === "ok") this.positionBase = read.base;
      else {
        const failed: KiminaAnswer = {
          kind: "failed",
          reason: `could not tell where the Kimina Lean Server at ${this.url} counts message positions from (${read.reason})`,
          ...(read.unreachable ? { unreachable: true } : {}),
        };
        for (const p of [...this.queue.splice(0), ...this.freshQueue.splice(0), ...this.aloneQueue.splice(0)])
          p.resolve(failed);
      }
      this.pump();
    });
  }

  /** A result with its messages' positions in the snippet as sent (positions.ts). */
  private inSnippetPositions(result: KiminaResult, code: string, fresh: boolean): KiminaResult {
    const response = result.response;
    if (!response || "message" in response || !response.messages?.length) return result;
    return {
      ...result,
      response: {
        ...response,
        messages: snippetPositions(response.messages, code, this.family, fresh, this.positionBase!),
      },
    };
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

  /** One batch until it is answered; `positions` false hands results on as the server wrote them (the probe). */
  private async send(batch: Pending[], fresh = false, positions = true): Promise<void> {
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
              ? { kind: "result", result: positions ? this.inSnippetPositions(r, p.code, fresh) : r }
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
