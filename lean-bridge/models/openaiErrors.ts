/**
 * One clear message per cause for OpenAI-compatible endpoints: the `openai` package's error classes (after its
 * own retries) turned into the interface's `{ kind: "error", cause, message, hint }`.
 */
import OpenAI from "openai";
import { abortedResult, backendError, type Candidate, type GenerateResult } from "./backend";

/** What the message names: the endpoint and the model. */
export interface EndpointContext {
  baseUrl: string;
  model: string;
}

/** The server's own words, when its error body carries any (vLLM, llama.cpp and OpenAI all put them in `message`). */
function serverWords(error: InstanceType<typeof OpenAI.APIError>): string {
  const body = error.error as { message?: unknown } | undefined;
  const text = typeof body?.message === "string" ? body.message : error.message;
  return text.replace(/\s+/g, " ").trim().slice(0, 300);
}

/**
 * How servers word a request longer than the model's context. vLLM (entrypoints/openai/serving_engine.py,
 * `_validate_prompt_and_tokenize`, later `_validate_input`; a 400): "This model's maximum context length is N
 * tokens. However, you requested …", in newer releases "… and your request has N input tokens …"; OpenAI: code `context_length_exceeded`; llama.cpp's server: type
 * `exceed_context_size_error`, "the request exceeds the available context size"; SGLang and Together: "… is
 * longer than the model's context length".
 */
const CONTEXT_WORDS =
  /maximum context length|context_length_exceeded|exceed_context_size_error|exceeds the available context size|longer than the model's context length/i;

/** Whether a refusal says the request does not fit the model's context (413: a body too large for the server). */
function contextExceeded(error: unknown): error is InstanceType<typeof OpenAI.APIError> {
  if (!(error instanceof OpenAI.APIError)) return false;
  if (error.status === 413) return true;
  if (error.status !== 400 && error.status !== 422) return false;
  const body = error.error as { message?: unknown; code?: unknown; type?: unknown } | undefined;
  const words = [body?.message, body?.code, body?.type, error.code, error.message].filter(
    (w): w is string => typeof w === "string",
  );
  return words.some((w) => CONTEXT_WORDS.test(w));
}

/**
 * `fetch` for the `openai` package, which reads a refusal's words only from the body's `error` object: vLLM before
 * 0.10.1 put them at the top level (`{"object": "error", "message": …}`; vLLM issue #12886, changed by PR #22099),
 * so its 400s would arrive wordless ("400 status code (no body)") and its context-length refusal unrecognised.
 * Such a body is handed on with its fields under `error`; every other response is untouched.
 */
export const liftFlatErrorBody: typeof fetch = async (input, init) => {
  const response = await fetch(input, init);
  if (response.ok || !(response.headers.get("content-type") ?? "").includes("json")) return response;
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const flat = body as { error?: unknown; message?: unknown } | undefined;
  const lifted =
    flat && typeof flat === "object" && flat.error === undefined && typeof flat.message === "string"
      ? JSON.stringify({ error: flat })
      : text;
  const headers = new Headers(response.headers);
  // The body is a new one: the server's length and encoding no longer describe it.
  headers.delete("content-length");
  headers.delete("content-encoding");
  return new Response(lifted, { status: response.status, statusText: response.statusText, headers });
};

/** The system error code under a connection failure (ECONNREFUSED, ENOTFOUND, ...), if any. */
function systemCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && /^E[A-Z]+$/.test(code)) return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** The result for an error thrown by the `openai` package (or by fetch under it). */
export function endpointError(error: unknown, where: EndpointContext, partial?: Candidate[]): GenerateResult {
  const { baseUrl, model } = where;
  if (error instanceof OpenAI.APIUserAbortError) return abortedResult(partial);
  if (error instanceof OpenAI.APIConnectionTimeoutError) {
    return backendError(
      "timeout",
      `${baseUrl} did not answer in time (after the retries).`,
      "Check that the server is not overloaded, or raise the request timeout; a long max-new-tokens needs more time.",
      partial,
    );
  }
  if (error instanceof OpenAI.APIConnectionError) {
    const code = systemCode(error);
    return backendError(
      "connection",
      `Cannot reach ${baseUrl}${code ? ` (${code})` : ""}.`,
      "Start the server (e.g. `vllm serve MODEL` or `llama-server -m MODEL.gguf`) or fix the URL; it must end in /v1.",
      partial,
    );
  }
  if (error instanceof OpenAI.AuthenticationError || error instanceof OpenAI.PermissionDeniedError) {
    return backendError(
      "auth",
      `${baseUrl} refused the API key (${error.status}: ${serverWords(error)}).`,
      "Set OPENAI_API_KEY (in the editor: FIM-RLVR's stored key) to a key this server accepts.",
      partial,
    );
  }
  if (error instanceof OpenAI.NotFoundError) {
    return backendError(
      "model-not-found",
      `${baseUrl} does not serve model "${model}" or this route (404: ${serverWords(error)}).`,
      `Use a model id from ${baseUrl}/models, or check that the server speaks the OpenAI API under /v1.`,
      partial,
    );
  }
  if (contextExceeded(error)) {
    return backendError(
      "context-length",
      `${baseUrl} refused the request: the prompt and max-new-tokens do not fit the context of "${model}" (${error.status}: ${serverWords(error)}).`,
      "Lower --max-prompt-tokens or --max-new-tokens, or serve the model with a longer context (vLLM --max-model-len, llama-server -c).",
      partial,
    );
  }
  if (error instanceof OpenAI.BadRequestError || error instanceof OpenAI.UnprocessableEntityError) {
    return backendError(
      "unsupported-parameter",
      `${baseUrl} refused the request (${error.status}${error.param ? `, parameter ${error.param}` : ""}: ${serverWords(error)}).`,
      "Drop the sampling option it names (seed, top-p, n), or lower max-new-tokens if the context is too long.",
      partial,
    );
  }
  if (error instanceof OpenAI.RateLimitError) {
    return backendError(
      "rate-limit",
      `${baseUrl} kept answering 429 (rate limit) after the retries.`,
      "Lower the number of candidates or parallel holes, or wait and run again.",
      partial,
    );
  }
  if (error instanceof OpenAI.APIError) {
    return backendError(
      "server",
      `${baseUrl} failed (${error.status ?? "no status"}: ${serverWords(error)}).`,
      "Read the server's log; run again once it is healthy.",
      partial,
    );
  }
  if (error instanceof Error && error.name === "AbortError") return abortedResult(partial);
  throw error;
}

/** A reply that is not what the API promises (no choices, no text). */
export function badReply(where: EndpointContext, what: string, partial?: Candidate[]): GenerateResult {
  return backendError(
    "server",
    `${where.baseUrl} answered without ${what}.`,
    "Check that the server speaks the OpenAI API (vLLM, llama.cpp's llama-server, SGLang, TGI, Ollama).",
    partial,
  );
}
