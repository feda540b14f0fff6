/**
 * Any OpenAI-compatible endpoint (vLLM, llama.cpp's llama-server, SGLang, TGI, Ollama, hosted APIs) through the
 * `openai` package, which owns retries, timeouts and cancellation.
 *
 * Routes: FIM and instruction prompts are rendered here, exactly as in training, into a plain /v1/completions
 * `prompt` (every such server takes one). A chat prompt is rendered here too when the model's tokenizer is at
 * hand (the chat template, then the pre-filled ```lean fence, as in training); without one it goes to
 * /v1/chat/completions and the server applies the template. A server's native FIM (`suffix`, llama.cpp's
 * /infill, Codestral's /v1/fim/completions) is used only when asked for, or when a probe shows it works
 * (openaiRoutes.ts). `n` is sent as `n`; a server that returns fewer choices gets the rest as parallel
 * requests, and is remembered.
 */
import OpenAI from "openai";
import {
  abortedResult,
  type BackendOptions,
  type Candidate,
  type FinishReason,
  type GenerateResult,
  type ModelBackend,
  type ModelIdentity,
  type PromptOptions,
  type PromptParts,
  type SamplingSettings,
} from "./backend";
import { linkedSignal } from "./interruption";
import { finalLeanBlock } from "./clean";
import { badReply, endpointError, liftFlatErrorBody, type EndpointContext } from "./openaiErrors";
import { nativeFimRequest, type NativeFimRoute } from "./openaiRoutes";
import { buildPrompt, instructionText, promptFields } from "./prompts";
import { candidateText, INSTRUCTION_STOPS, type PromptStyle } from "./style";
import type { PromptTokenizer } from "./tokenizer";

/** How one backend talks to its server, decided when it is opened (open.ts). */
export interface OpenAiPlan {
  baseUrl: string;
  model: string;
  style: PromptStyle;
  tokenizer: PromptTokenizer;
  /** The tokenizer is the model's own (token counts are real; prompts are the trainer's). */
  exactTokenizer: boolean;
  /** `completions`: a rendered prompt; `chat`: messages; or a native FIM route. */
  route: "completions" | "chat" | NativeFimRoute;
  prompt: PromptOptions;
  identity: ModelIdentity;
}

/** One request's answer: its choices, in index order. */
interface Reply {
  choices: { text: string; finish: FinishReason; latencyMs: number }[];
  promptTokens: number | null;
  /** Completion tokens of the whole reply (all its choices), when the server said. */
  completionTokens: number | null;
}

function finishReason(value: unknown): FinishReason {
  return value === "stop" || value === "length" ? value : value === "eos" ? "stop" : "unknown";
}

export class OpenAiBackend implements ModelBackend {
  readonly identity: ModelIdentity;
  private readonly client: OpenAI;
  private readonly where: EndpointContext;
  /** Whether the server honours `n` (undefined: not yet seen). */
  private nHonoured: boolean | undefined;
  private readonly stream: boolean;

  constructor(
    private readonly plan: OpenAiPlan,
    options: BackendOptions,
  ) {
    this.identity = plan.identity;
    this.where = { baseUrl: plan.baseUrl, model: plan.model };
    this.stream = options.stream ?? true;
    this.client = new OpenAI({
      baseURL: plan.baseUrl,
      // Local servers need no key; the package insists on one.
      apiKey: options.apiKey ?? "none",
      maxRetries: options.maxRetries ?? 2,
      timeout: options.timeoutMs ?? 120_000,
      fetch: liftFlatErrorBody,
    });
    // Native FIM routes have no `n`.
    if (plan.route !== "completions" && plan.route !== "chat") this.nHonoured = false;
  }

  async generate(
    parts: PromptParts,
    n: number,
    sampling: SamplingSettings,
    runSignal?: AbortSignal,
  ): Promise<GenerateResult> {
    if (runSignal?.aborted) return abortedResult();
    const call = linkedSignal(runSignal);
    try {
      return await this.generateOnce(parts, n, sampling, call.signal);
    } finally {
      call.dispose();
    }
  }

  private async generateOnce(
    parts: PromptParts,
    n: number,
    sampling: SamplingSettings,
    signal: AbortSignal,
  ): Promise<GenerateResult> {
    const { plan } = this;
    const request = this.requestFor(parts);
    const started = performance.now();
    const candidates: Candidate[] = [];
    const add = (reply: Reply): void => {
      const perChoice = reply.choices.length === 1 ? reply.completionTokens : null;
      for (const choice of reply.choices) {
        if (candidates.length >= n) break;
        candidates.push({
          text: this.candidate(choice.text, parts.indent),
          raw: choice.text,
          promptTokens:
            reply.promptTokens ?? (plan.exactTokenizer ? plan.tokenizer.count(request.recorded) : null),
          completionTokens: perChoice ?? (plan.exactTokenizer ? plan.tokenizer.count(choice.text) : null),
          latencyMs: choice.latencyMs,
          finishReason: choice.finish,
        });
      }
    };
    try {
      if (this.nHonoured !== false) {
        add(await request.send(n, sampling, sampling.seed, signal, started));
        if (n > 1) this.nHonoured = candidates.length >= n;
      }
      const missing = n - candidates.length;
      if (missing > 0) {
        // Seeds differ per request, or every emulated sample would be the same one.
        const replies = await Promise.all(
          Array.from({ length: missing }, (_, i) =>
            request.send(
              1,
              sampling,
              sampling.seed === undefined ? undefined : sampling.seed + candidates.length + i,
              signal,
              started,
            ),
          ),
        );
        for (const reply of replies) add(reply);
      }
    } catch (error) {
      if (error instanceof EmptyReply) return badReply(this.where, error.message, candidates);
      return endpointError(error, this.where, candidates);
    }
    if (candidates.length < n)
      return badReply(this.where, `${n} choices (got ${candidates.length})`, candidates);
    return { kind: "ok", candidates, prompt: request.recorded };
  }

  /**
   * The candidate for a raw completion, cleaned as the trainer cleans it. The one difference: over
   * /v1/chat/completions nothing can be pre-filled, so an answer that does not open with the fence the trainer
   * would have pre-filled has its last ```lean block taken (as for reasoning models) instead of its prose.
   */
  private candidate(raw: string, indent: number): string {
    const { style } = this.plan;
    if (this.plan.route === "chat" && !style.thinking && !/^\s*```/.test(raw) && /```[ \t]*lean/.test(raw)) {
      return finalLeanBlock(raw, indent);
    }
    return candidateText(style, raw, indent);
  }

  async close(): Promise<void> {
    // The package keeps no sockets of its own beyond Node's fetch pool.
  }

  /** The request for one hole: what is recorded as the prompt, and how to send it for k choices. */
  private requestFor(parts: PromptParts): {
    recorded: string;
    send: (
      k: number,
      sampling: SamplingSettings,
      seed: number | undefined,
      signal: AbortSignal | undefined,
      started: number,
    ) => Promise<Reply>;
  } {
    const { plan } = this;
    const stops = (extra?: readonly string[]): string[] => [
      ...new Set([...plan.style.stopStrings, ...(extra ?? [])]),
    ];
    if (plan.route === "completions") {
      const recorded = buildPrompt(parts, plan.style, plan.tokenizer, plan.prompt);
      // The server adds the BOS itself when the tokenizer does (vLLM, llama.cpp): send the text after it.
      const sent =
        plan.style.bos && recorded.startsWith(plan.style.bos)
          ? recorded.slice(plan.style.bos.length)
          : recorded;
      return {
        recorded,
        send: (k, sampling, seed, signal, started) =>
          this.completions(
            { prompt: sent, n: k, ...this.samplingBody(sampling, seed), stop: stops(sampling.stop) },
            signal,
            started,
          ),
      };
    }
    const values = promptFields(parts, plan.tokenizer, plan.prompt);
    if (plan.route === "chat") {
      const message = instructionText(plan.style, values);
      // No fence is pre-filled here, so the opening fence must not stop the answer: the cleaning strips it.
      const chatStops = (extra?: readonly string[]): string[] =>
        stops(extra).filter((s) => !INSTRUCTION_STOPS.includes(s));
      return {
        recorded: message,
        send: (k, sampling, seed, signal, started) =>
          this.chat(
            {
              messages: [{ role: "user", content: message }],
              n: k,
              ...this.samplingBody(sampling, seed),
              stop: chatStops(sampling.stop),
            },
            signal,
            started,
          ),
      };
    }
    const route = plan.route;
    return {
      recorded: `${values.prefix}<HOLE>${values.suffix}`,
      send: async (_k, sampling, seed, signal, started) => {
        const reply = await nativeFimRequest(this.client, route, {
          baseUrl: plan.baseUrl,
          model: plan.model,
          prefix: values.prefix,
          suffix: values.suffix,
          sampling,
          seed,
          stop: stops(sampling.stop),
          signal,
        });
        return {
          choices: [{ text: reply.text, finish: reply.finish, latencyMs: performance.now() - started }],
          promptTokens: reply.promptTokens,
          completionTokens: reply.completionTokens,
        };
      },
    };
  }

  private samplingBody(sampling: SamplingSettings, seed: number | undefined) {
    return {
      model: this.plan.model,
      max_tokens: sampling.maxNewTokens,
      temperature: sampling.temperature,
      top_p: sampling.topP,
      ...(seed === undefined ? {} : { seed }),
    };
  }

  private async completions(
    body: Omit<OpenAI.CompletionCreateParamsNonStreaming, "stream">,
    signal: AbortSignal | undefined,
    started: number,
  ): Promise<Reply> {
    if (!this.stream) {
      const reply = await this.client.completions.create({ ...body, stream: false }, { signal });
      const latencyMs = performance.now() - started;
      if (!Array.isArray(reply.choices) || reply.choices.length === 0) throw new EmptyReply("choices");
      return {
        choices: [...reply.choices]
          .sort((a, b) => a.index - b.index)
          .map((c) => ({
            text: typeof c.text === "string" ? c.text : "",
            finish: finishReason(c.finish_reason),
            latencyMs,
          })),
        promptTokens: reply.usage?.prompt_tokens ?? null,
        completionTokens: reply.usage?.completion_tokens ?? null,
      };
    }
    const stream = await this.client.completions.create({ ...body, stream: true }, { signal });
    const acc = new Accumulator(started);
    for await (const chunk of stream) {
      for (const choice of chunk.choices ?? [])
        acc.add(choice.index ?? 0, choice.text ?? "", choice.finish_reason);
      if (chunk.usage) acc.usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens);
    }
    return acc.reply();
  }

  private async chat(
    body: Omit<OpenAI.ChatCompletionCreateParamsNonStreaming, "stream">,
    signal: AbortSignal | undefined,
    started: number,
  ): Promise<Reply> {
    if (!this.stream) {
      const reply = await this.client.chat.completions.create({ ...body, stream: false }, { signal });
      const latencyMs = performance.now() - started;
      if (!Array.isArray(reply.choices) || reply.choices.length === 0) throw new EmptyReply("choices");
      return {
        choices: [...reply.choices]
          .sort((a, b) => a.index - b.index)
          .map((c) => ({ text: c.message?.content ?? "", finish: finishReason(c.finish_reason), latencyMs })),
        promptTokens: reply.usage?.prompt_tokens ?? null,
        completionTokens: reply.usage?.completion_tokens ?? null,
      };
    }
    const stream = await this.client.chat.completions.create({ ...body, stream: true }, { signal });
    const acc = new Accumulator(started);
    for await (const chunk of stream) {
      for (const choice of chunk.choices ?? [])
        acc.add(choice.index ?? 0, choice.delta?.content ?? "", choice.finish_reason);
      if (chunk.usage) acc.usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens);
    }
    return acc.reply();
  }
}

/** A reply without the choices the API promises. */
class EmptyReply extends Error {}

/** Streamed choices put back together, each with the time its last piece arrived. */
class Accumulator {
  private readonly texts = new Map<number, { text: string; finish: FinishReason; latencyMs: number }>();
  private promptTokens: number | null = null;
  private completionTokens: number | null = null;

  constructor(private readonly started: number) {}

  add(index: number, text: string, finish: unknown): void {
    const entry = this.texts.get(index) ?? { text: "", finish: "unknown" as FinishReason, latencyMs: 0 };
    entry.text += text;
    if (finish) entry.finish = finishReason(finish);
    entry.latencyMs = performance.now() - this.started;
    this.texts.set(index, entry);
  }

  usage(prompt: number | undefined, completion: number | undefined): void {
    this.promptTokens = prompt ?? null;
    this.completionTokens = completion ?? null;
  }

  reply(): Reply {
    if (this.texts.size === 0) throw new EmptyReply("any streamed choice");
    const choices = [...this.texts.entries()].sort(([a], [b]) => a - b).map(([, c]) => c);
    return { choices, promptTokens: this.promptTokens, completionTokens: this.completionTokens };
  }
}
