/**
 * A server's native fill-in-the-middle, for models whose FIM tokens are not known here: the server places them.
 * - `suffix`: /v1/completions with `prompt` = prefix and the `suffix` field (OpenAI's legacy API, some servers).
 * - `infill`: llama.cpp's /infill (`input_prefix`, `input_suffix`), beside /v1 at the server's root.
 * - `codestral`: Mistral's /v1/fim/completions (`prompt`, `suffix`).
 * Each is used only when asked for or when `probeNativeFim` finds that it answers: many servers refuse `suffix`
 * (vLLM says so with a 400), and most have neither of the others.
 */
import type OpenAI from "openai";
import type { FinishReason, SamplingSettings } from "./backend";

export type NativeFimRoute = "suffix" | "infill" | "codestral";
export const NATIVE_FIM_ROUTES: readonly NativeFimRoute[] = ["infill", "codestral", "suffix"];

export interface NativeFimInput {
  baseUrl: string;
  model: string;
  prefix: string;
  suffix: string;
  sampling: SamplingSettings;
  seed: number | undefined;
  stop: string[];
  signal: AbortSignal | undefined;
}

export interface NativeFimReply {
  text: string;
  finish: FinishReason;
  promptTokens: number | null;
  completionTokens: number | null;
}

/** llama.cpp serves /infill at its root, beside /v1. */
function serverRoot(baseUrl: string): string {
  return baseUrl.replace(/\/v1\/?$/, "");
}

type Json = Record<string, unknown>;

function num(value: unknown): number | null {
  return typeof value === "number" && Number.isFinite(value) ? value : null;
}

/** One candidate through a native route (the package's `post` keeps its retries, timeout and abort). */
export async function nativeFimRequest(
  client: OpenAI,
  route: NativeFimRoute,
  input: NativeFimInput,
): Promise<NativeFimReply> {
  const { sampling, seed, signal } = input;
  if (route === "infill") {
    const body = {
      input_prefix: input.prefix,
      input_suffix: input.suffix,
      n_predict: sampling.maxNewTokens,
      temperature: sampling.temperature,
      top_p: sampling.topP,
      stop: input.stop,
      ...(seed === undefined ? {} : { seed }),
    };
    const reply = await client.post<Json>(`${serverRoot(input.baseUrl)}/infill`, { body, signal });
    if (typeof reply.content !== "string") throw new TypeError("/infill answered without `content`");
    const limited = reply.stopped_limit === true || reply.stop_type === "limit";
    return {
      text: reply.content,
      finish: limited ? "length" : "stop",
      promptTokens: num(reply.tokens_evaluated),
      completionTokens: num(reply.tokens_predicted),
    };
  }
  const common = {
    model: input.model,
    prompt: input.prefix,
    suffix: input.suffix,
    max_tokens: sampling.maxNewTokens,
    temperature: sampling.temperature,
    top_p: sampling.topP,
    stop: input.stop,
  };
  if (route === "codestral") {
    const body = { ...common, ...(seed === undefined ? {} : { random_seed: seed }) };
    const reply = await client.post<Json>("/fim/completions", { body, signal });
    const choice = (Array.isArray(reply.choices) ? reply.choices[0] : undefined) as Json | undefined;
    const message = choice?.message as Json | undefined;
    if (typeof message?.content !== "string")
      throw new TypeError("/fim/completions answered without a message");
    return {
      text: message.content,
      finish: choice?.finish_reason === "length" ? "length" : "stop",
      ...usage(reply),
    };
  }
  const body = { ...common, ...(seed === undefined ? {} : { seed }) };
  const reply = await client.post<Json>("/completions", { body, signal });
  const choice = (Array.isArray(reply.choices) ? reply.choices[0] : undefined) as Json | undefined;
  if (typeof choice?.text !== "string") throw new TypeError("/completions answered without a choice");
  return {
    text: choice.text,
    finish: choice.finish_reason === "length" ? "length" : "stop",
    ...usage(reply),
  };
}

function usage(reply: Json): { promptTokens: number | null; completionTokens: number | null } {
  const u = (reply.usage ?? {}) as Json;
  return { promptTokens: num(u.prompt_tokens), completionTokens: num(u.completion_tokens) };
}

/**
 * The first native route that answers a one-token fill (llama.cpp's /infill, then Codestral's, then `suffix`),
 * or null when none does. A route "works" when the server answers 2xx with a well-formed reply; a server that
 * silently ignores `suffix` cannot be told apart, which is why `suffix` is tried last.
 */
export async function probeNativeFim(
  client: OpenAI,
  baseUrl: string,
  model: string,
  signal?: AbortSignal,
): Promise<NativeFimRoute | null> {
  for (const route of NATIVE_FIM_ROUTES) {
    try {
      await nativeFimRequest(client, route, {
        baseUrl,
        model,
        prefix: "theorem t : True := by\n  ",
        suffix: "\n",
        sampling: { temperature: 0, topP: 1, maxNewTokens: 1 },
        seed: undefined,
        stop: [],
        signal,
      });
      return route;
    } catch {
      if (signal?.aborted) return null;
    }
  }
  return null;
}
