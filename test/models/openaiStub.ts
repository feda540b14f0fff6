/**
 * An OpenAI-compatible server stub on 127.0.0.1 for the endpoint backend's tests: /v1/completions and
 * /v1/chat/completions (plain and streamed as server-sent events), optional llama.cpp /infill and Codestral
 * /v1/fim/completions, and the failures real servers answer with (401, 404 model, 400 on `suffix` as vLLM does).
 * Every request is recorded; `hold` keeps requests open until released, so tests of timeouts and cancellation
 * never depend on timing.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface StubOptions {
  /** The one model id served (others get 404). */
  model?: string;
  /** The key the server wants (401 otherwise); undefined accepts any. */
  apiKey?: string;
  /** The completion for choice `index` of a request whose prompt (or last message) is `prompt`. */
  answer?: (prompt: string, index: number, body: Record<string, unknown>) => string;
  /** Return one choice whatever `n` asks (llama.cpp, some proxies). */
  ignoreN?: boolean;
  /** Refuse `suffix` with a 400, as vLLM does. */
  refuseSuffix?: boolean;
  /** Serve llama.cpp's /infill. */
  infill?: boolean;
  /** Refuse any request that carries this parameter with a 400 naming it. */
  refuseParam?: string;
  /**
   * The model's context, in characters of the prompt (the stub's stand-in for tokens) plus `max_tokens`: a longer
   * request gets vLLM's 400 "This model's maximum context length is …".
   */
  contextTokens?: number;
  /** Answer errors as vLLM did before 0.10.1: the fields at the top level, not under `error` (vLLM PR #22099). */
  flatErrors?: boolean;
}

export interface Recorded {
  path: string;
  body: Record<string, unknown>;
  auth: string | undefined;
}

export interface Stub {
  baseUrl: string;
  requests: Recorded[];
  /**
   * Keep the next requests open until `release` (or forever, for a timeout); `which`: only the requests whose
   * body it accepts (the others are answered at once).
   */
  hold(which?: (body: Record<string, unknown>) => boolean): void;
  /** Answer the held requests. */
  release(): void;
  /** Resolves when `count` requests are being held. */
  held(count: number): Promise<void>;
  close(): Promise<void>;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

function error(
  res: ServerResponse,
  status: number,
  message: string,
  param: string | null = null,
  flat = false,
): void {
  const fields = { message, type: "invalid_request_error", param, code: null };
  json(res, status, flat ? { object: "error", ...fields } : { error: fields });
}

/** The flags by which `eval` and `filter` sample from a stub serving `model`, with Qwen's FIM prompt. */
export function fimModelFlags(baseUrl: string, model: string): string[] {
  return ["--model", `openai:${baseUrl}#${model}`, "--prompt-style", "fim", "--fim-family", "qwen"];
}

export async function startStub(options: StubOptions = {}): Promise<Stub> {
  const model = options.model ?? "tiny";
  const answer = options.answer ?? ((_prompt: string, index: number) => `simp${index}`);
  const requests: Recorded[] = [];
  let holding = false;
  let holdOnly: ((body: Record<string, unknown>) => boolean) | undefined;
  let heldQueue: (() => void)[] = [];
  let heldWaiters: { count: number; resolve: () => void }[] = [];
  const sockets = new Set<import("node:net").Socket>();

  const handle = (req: IncomingMessage, res: ServerResponse, raw: string): void => {
    const body = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
    const path = (req.url ?? "").split("?")[0]!;
    requests.push({ path, body, auth: req.headers.authorization });
    if (options.apiKey !== undefined && req.headers.authorization !== `Bearer ${options.apiKey}`) {
      return error(res, 401, "Incorrect API key provided.");
    }
    if (path === "/infill") {
      if (!options.infill) return error(res, 404, "File Not Found");
      const prefix = String(body.input_prefix ?? "");
      return json(res, 200, {
        content: answer(prefix, 0, body),
        tokens_predicted: 3,
        tokens_evaluated: 11,
        stop_type: "eos",
      });
    }
    if (path !== "/v1/completions" && path !== "/v1/chat/completions")
      return error(res, 404, `no route ${path}`);
    if (body.model !== model)
      return error(res, 404, `The model \`${String(body.model)}\` does not exist.`, null, options.flatErrors);
    if (options.refuseSuffix && body.suffix !== undefined) {
      return error(res, 400, "suffix is not currently supported", "suffix");
    }
    if (options.refuseParam && body[options.refuseParam] !== undefined) {
      return error(res, 400, `Unsupported parameter: ${options.refuseParam}`, options.refuseParam);
    }
    const chat = path === "/v1/chat/completions";
    const messages = (body.messages ?? []) as { content: string }[];
    const prompt = chat ? (messages[messages.length - 1]?.content ?? "") : String(body.prompt ?? "");
    const maxTokens = Number(body.max_tokens ?? 16);
    if (options.contextTokens !== undefined && prompt.length + maxTokens > options.contextTokens) {
      // vLLM's wording (entrypoints/openai/serving_engine.py).
      return error(
        res,
        400,
        `This model's maximum context length is ${options.contextTokens} tokens. However, you requested ${prompt.length + maxTokens} tokens (${prompt.length} in the messages, ${maxTokens} in the completion). Please reduce the length of the messages or completion.`,
        null,
        options.flatErrors,
      );
    }
    const n = options.ignoreN ? 1 : Number(body.n ?? 1);
    const texts = Array.from({ length: n }, (_, i) => answer(prompt, i, body));
    const usage = { prompt_tokens: 17, completion_tokens: 5 * n, total_tokens: 17 + 5 * n };
    if (body.stream === true) {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const send = (data: unknown): boolean => res.write(`data: ${JSON.stringify(data)}\n\n`);
      // Pieces of all choices interleaved, as servers stream n > 1.
      const pieces = texts.map((t) => [
        t.slice(0, Math.ceil(t.length / 2)),
        t.slice(Math.ceil(t.length / 2)),
      ]);
      for (let part = 0; part < 2; part++) {
        texts.forEach((_, index) => {
          const text = pieces[index]![part]!;
          const finish = part === 1 ? "stop" : null;
          send({
            id: "x",
            object: chat ? "chat.completion.chunk" : "text_completion",
            created: 0,
            model,
            choices: [
              chat
                ? { index, delta: { content: text }, finish_reason: finish }
                : { index, text, finish_reason: finish },
            ],
          });
        });
      }
      res.end("data: [DONE]\n\n");
      return;
    }
    json(res, 200, {
      id: "x",
      object: chat ? "chat.completion" : "text_completion",
      created: 0,
      model,
      choices: texts.map((text, index) =>
        chat
          ? { index, message: { role: "assistant", content: text }, finish_reason: "stop" }
          : { index, text, finish_reason: "stop" },
      ),
      usage,
    });
  };

  const server: Server = createServer((req, res) => {
    let raw = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (raw += d));
    req.on("end", () => {
      const go = (): void => handle(req, res, raw);
      if (!holding) return go();
      if (holdOnly) {
        let body: Record<string, unknown> = {};
        try {
          body = (raw ? JSON.parse(raw) : {}) as Record<string, unknown>;
        } catch {
          // a malformed body is answered (with its error) at once
        }
        if (!holdOnly(body)) return go();
      }
      heldQueue.push(go);
      heldWaiters = heldWaiters.filter((w) => (heldQueue.length >= w.count ? (w.resolve(), false) : true));
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    hold: (which) => {
      holding = true;
      holdOnly = which;
    },
    release: () => {
      holding = false;
      holdOnly = undefined;
      const queue = heldQueue;
      heldQueue = [];
      for (const go of queue) go();
    },
    held: (count) =>
      heldQueue.length >= count
        ? Promise.resolve()
        : new Promise((resolve) => heldWaiters.push({ count, resolve })),
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
