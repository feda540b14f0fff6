/**
 * A Kimina Lean Server stand-in on 127.0.0.1 that follows its documented API (lean-bridge/kimina/protocol.ts):
 * `POST /api/check` {snippets, timeout, …} → {results: [{id, time, error?, response?}]}, `POST /verify` for the
 * older form, `Authorization: Bearer KEY`, 429 while "busy". What each snippet's REPL answers is the test's
 * `answer` function (messages with 1-based lines and code-point columns); it is not Lean and never called so.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { KiminaMessage } from "../../lean-bridge/kimina/protocol";

export type StubAnswer =
  | { messages: KiminaMessage[] }
  | { error: string }
  | { replMessage: string }
  /** Never answer (the client's deadline must end the wait). */
  | { hang: true }
  /**
   * The snippet's REPL dies: Kimina answers 500 for the whole request ("Snippet execution failed",
   * server/routers/check.py), whatever the other snippets of the request were.
   */
  | { crash: true }
  /**
   * The whole server goes down while it holds this snippet: every open connection is dropped (this request's
   * and any other under way). With `staysDown` it stops listening for good (connections are refused);
   * otherwise it is back at once, as under a supervisor that restarts it.
   */
  | { kill: true; staysDown?: boolean };

export interface StubOptions {
  answer: (code: string) => StubAnswer;
  apiKey?: string;
  /** Answer 429 to this many requests first. */
  busyFor?: number;
  /** Only the older `/verify` endpoint exists (404 on /api/check). */
  legacyOnly?: boolean;
  /**
   * Simulated cost of one snippet on a REPL (bench/kimina.ts): ms to wait, given the snippet and the
   * headers that REPL has already loaded (Kimina keeps a REPL's imports between checks). Timers, not Lean.
   */
  cost?: (code: string, loadedHeaders: Set<string>) => number;
  /** REPLs that run snippets at once when `cost` is given (Kimina's pool of REPL processes). */
  repls?: number;
  /**
   * Whether the verifier's no-op probe (a line `skip` alone: the hole checked with nothing in it,
   * verify/noopProbe.ts) is answered by `answer` like any snippet. By default it gets the error Lean gives
   * where a hole needs its middle (unsolved goals), so `answer` speaks for candidates only.
   */
  answersNoop?: boolean;
}

/** Whether a snippet is the verifier's no-op probe: its hole holds `skip` alone on a line. */
export function isNoopProbe(code: string): boolean {
  return /^[ \t]*skip[ \t]*$/m.test(code);
}

/** Lean's error for a hole that needs its middle: the goals are left where the no-op stands. */
function noopFails(code: string): StubAnswer {
  const line = code.split("\n").findIndex((l) => /^[ \t]*skip[ \t]*$/.test(l)) + 1;
  return {
    messages: [
      {
        severity: "error",
        pos: { line, column: 0 },
        endPos: { line, column: 4 },
        data: "unsolved goals\n⊢ P",
      },
    ],
  };
}

export interface Stub {
  url: string;
  requests: {
    path: string;
    authorization: string | undefined;
    ids: string[];
    codes: string[];
    /** Whether the request asked for REPLs to be reused (`/api/check`'s `reuse`, not `/verify`'s `disable_cache`). */
    reuse: boolean;
    /** Other requests the server held (unanswered) when this one arrived. */
    othersOpen: number;
  }[];
  close(): Promise<void>;
}

/** The 1-based line of the appended `#print axioms` in a check document. */
export function printAxiomsLine(code: string): number {
  return code.split("\n").findIndex((l) => l.includes("#print axioms")) + 1;
}

/** Kimina's REPL pool under simulated costs: a snippet waits for a free REPL, then for its cost. */
function replPool(count: number, cost: NonNullable<StubOptions["cost"]>): (code: string) => Promise<void> {
  const free = Array.from({ length: count }, () => new Set<string>());
  const waiting: (() => void)[] = [];
  return async (code) => {
    while (free.length === 0) await new Promise<void>((r) => waiting.push(r));
    const repl = free.pop()!;
    await new Promise((r) => setTimeout(r, cost(code, repl)));
    free.push(repl);
    waiting.shift()?.();
  };
}

export async function startStub(options: StubOptions): Promise<Stub> {
  let busy = options.busyFor ?? 0;
  const run = options.cost ? replPool(options.repls ?? 1, options.cost) : undefined;
  const requests: Stub["requests"] = [];
  const hanging: (() => void)[] = [];
  let open = 0;
  const server: Server = createServer((req, res) => {
    open++;
    res.on("close", () => open--);
    let body = "";
    req.setEncoding("utf8").on("data", (d: string) => (body += d));
    req.on("end", () => {
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(json));
      };
      const path = req.url ?? "";
      const legacy = path === "/verify";
      if ((path !== "/api/check" || options.legacyOnly) && !legacy) return send(404, { detail: "Not Found" });
      if (options.apiKey && req.headers.authorization?.replace(/^Bearer /, "") !== options.apiKey)
        return send(401, { detail: "Invalid API key" });
      const parsed = JSON.parse(body) as {
        snippets?: { id: string; code: string }[];
        codes?: { custom_id: string; proof: string }[];
        reuse?: boolean;
        disable_cache?: boolean;
      };
      const snippets = legacy
        ? (parsed.codes ?? []).map((c) => ({ id: c.custom_id, code: c.proof }))
        : (parsed.snippets ?? []);
      requests.push({
        path,
        authorization: req.headers.authorization,
        ids: snippets.map((s) => s.id),
        codes: snippets.map((s) => s.code),
        reuse: legacy ? parsed.disable_cache !== true : parsed.reuse !== false,
        othersOpen: open - 1,
      });
      if (busy > 0) {
        busy--;
        return send(429, { detail: "No available REPLs" });
      }
      if (run)
        return void Promise.all(snippets.map((s) => run(s.code))).then(() => respond(legacy, snippets));
      respond(legacy, snippets);
    });
    function respond(legacy: boolean, snippets: { id: string; code: string }[]): void {
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(json));
      };
      const answers = snippets.map((s) => ({
        s,
        a: !options.answersNoop && isNoopProbe(s.code) ? noopFails(s.code) : options.answer(s.code),
      }));
      if (answers.some(({ a }) => "hang" in a)) {
        hanging.push(() => res.destroy());
        return;
      }
      const kill = answers.map(({ a }) => a).find((a) => "kill" in a);
      if (kill) {
        if (kill.staysDown) server.close();
        server.closeAllConnections();
        return;
      }
      if (answers.some(({ a }) => "crash" in a))
        return send(500, { detail: "Lean REPL process exited (stub: a snippet's REPL died)" });
      const results = answers.map(({ s, a }) => {
        const base = legacy ? { custom_id: s.id } : { id: s.id, time: 0.01 };
        if ("error" in a) return { ...base, error: a.error };
        if ("replMessage" in a) return { ...base, response: { message: a.replMessage } };
        return { ...base, response: { env: 0, messages: "messages" in a ? a.messages : [] } };
      });
      send(200, { results });
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        hanging.forEach((h) => h());
        server.close(() => r());
      }),
  };
}
