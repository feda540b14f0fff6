/**
 * A Kimina Lean Server stand-in on 127.0.0.1 that follows its documented API (lean-bridge/kimina/protocol.ts):
 * `POST /api/check` {snippets, timeout, …} → {results: [{id, time, error?, response?}]}, `POST /verify` for the
 * older form, `Authorization: Bearer KEY`, 429 while "busy". What each snippet's REPL answers is the test's
 * `answer` function (messages with 1-based lines and code-point columns, counted in the snippet as sent); it is
 * not Lean and never called so. Positions go out as the chosen Kimina version writes them
 * (project-numina/kimina-lean-server, lean-bridge/kimina/positions.ts has the history): 2.x since PR #56
 * (2025-10-24) counts from the snippet; 2.x before it counts from what follows the imports; 1.x (`legacyOnly`)
 * counts from the stripped rest after the imports, except for a fresh REPL or a snippet without imports. The
 * client's position probe (`import Init`, `#check Nat`) is answered as Lean would, and recorded apart.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { POSITION_PROBE } from "../../lean-bridge/kimina/client";
import type { KiminaMessage, KiminaPos } from "../../lean-bridge/kimina/protocol";

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
  /** Only the older `/verify` endpoint exists (404 on /api/check): a 1.x server. */
  legacyOnly?: boolean;
  /**
   * Where a 2.x server's positions count from: "snippet" (since PR #56, the default) or "body" (before it: from
   * the first line after the imports and blank lines it split off). Ignored with `legacyOnly`.
   */
  positions?: "snippet" | "body";
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

/** The Lean answer to the client's position probe, on the `#check Nat` line of the snippet. */
function probeAnswer(code: string): StubAnswer {
  const line = code.split("\n").indexOf("#check Nat") + 1;
  return {
    messages: [
      { severity: "info", pos: { line, column: 0 }, endPos: { line, column: 6 }, data: "Nat : Type" },
    ],
  };
}

/**
 * Where the REPL's text starts in `code`, as the server version splits it (a transliteration of Kimina's
 * split_snippet and split_proof_header for snippets whose lines end in "\n"); 0 when the REPL gets it whole.
 */
function replTextStart(code: string, version: "2.x-body" | "2.x-snippet" | "1.x", fresh: boolean): number {
  if (version === "2.x-snippet") return 0;
  const lines = code.split("\n");
  if (version === "2.x-body") {
    let i = 0;
    while (i < lines.length && (lines[i]!.trim() === "" || lines[i]!.trim().startsWith("import "))) i++;
    return lines.slice(0, i).reduce((n, l) => n + l.length + 1, 0);
  }
  if (fresh) return 0;
  const lead = code.length - code.trimStart().length;
  const stripped = code.trim().split("\n");
  let b = 0;
  while (b < stripped.length && stripped[b]!.startsWith("import")) b++;
  if (b === 0) return 0;
  const rest = stripped.slice(b).join("\n");
  return (
    lead +
    stripped.slice(0, b).reduce((n, l) => n + l.length + 1, 0) +
    (rest.length - rest.trimStart().length)
  );
}

/** A snippet position as the REPL, given the text from `start` on, reports it. */
function replPosition(code: string, start: number, pos: KiminaPos): KiminaPos {
  const lines = code.split("\n");
  const offset = lines.slice(0, pos.line - 1).reduce((n, l) => n + l.length + 1, 0) + pos.column;
  const before = code.slice(start, Math.max(start, offset)).split("\n");
  return { line: before.length, column: before[before.length - 1]!.length };
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
  /** The client's position probes (not in `requests`). */
  probes: { path: string; reuse: boolean }[];
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
  const probes: Stub["probes"] = [];
  const version = options.legacyOnly ? "1.x" : options.positions === "body" ? "2.x-body" : "2.x-snippet";
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
      const reuse = legacy ? parsed.disable_cache !== true : parsed.reuse !== false;
      if (snippets.length === 1 && snippets[0]!.code === POSITION_PROBE) {
        probes.push({ path, reuse });
        return respond(legacy, snippets, !reuse);
      }
      requests.push({
        path,
        authorization: req.headers.authorization,
        ids: snippets.map((s) => s.id),
        codes: snippets.map((s) => s.code),
        reuse,
        othersOpen: open - 1,
      });
      if (busy > 0) {
        busy--;
        return send(429, { detail: "No available REPLs" });
      }
      if (run)
        return void Promise.all(snippets.map((s) => run(s.code))).then(() =>
          respond(legacy, snippets, !reuse),
        );
      respond(legacy, snippets, !reuse);
    });
    function respond(legacy: boolean, snippets: { id: string; code: string }[], fresh: boolean): void {
      const send = (status: number, json: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(json));
      };
      const answers = snippets.map((s) => ({
        s,
        a:
          s.code === POSITION_PROBE
            ? probeAnswer(s.code)
            : !options.answersNoop && isNoopProbe(s.code)
              ? noopFails(s.code)
              : options.answer(s.code),
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
        const start = replTextStart(s.code, version, fresh);
        const messages = ("messages" in a ? a.messages : []).map((m) => ({
          ...m,
          pos: replPosition(s.code, start, m.pos),
          ...(m.endPos ? { endPos: replPosition(s.code, start, m.endPos) } : {}),
        }));
        return { ...base, response: { env: 0, messages } };
      });
      send(200, { results });
    }
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    probes,
    close: () =>
      new Promise<void>((r) => {
        hanging.forEach((h) => h());
        server.close(() => r());
      }),
  };
}
