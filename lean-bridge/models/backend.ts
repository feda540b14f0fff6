/**
 * One interface for every model that fills holes: an OpenAI-compatible endpoint, a local ONNX export, or the
 * trainer's own checkpoint through its Python. `fim-rlvr eval` and the editor's Fill Hole command see only this
 * file's types; each backend builds the prompt the trainer would build for the same task (prompts.ts) and cleans
 * completions as the trainer cleans them (clean.ts), so a model is measured on what it was trained on.
 *
 * Results that can fail are `{ kind }` unions: a backend never throws for a failure a user can meet (a server
 * down, a bad key, a missing model file); exceptions are for bugs.
 */
import type { HoleKind } from "../protocol/trainer";

/**
 * The task fields a prompt is built from: the trainer's `Task` (trainer/fim_rlvr/tasks/data.py), itself read from a
 * dataset's tasks.jsonl row or, in the editor, from the hole under the cursor.
 */
export interface PromptParts {
  /** The text before the hole (at least its declaration: statement, `:= by`, earlier steps; maybe file context). */
  prefix: string;
  /** The declaration's text after the hole. */
  suffix: string;
  /** The hole's granularity; a prompt template may name it as `{kind}`. */
  kind: HoleKind;
  /** Column of the hole's first line: later candidate lines are re-indented to it. */
  indent: number;
  /** The goal state at the hole, when known (shown to the model only when `PromptOptions.showGoal`). */
  goal?: string;
  /** The declaration header up to `:=`: kept whole when the prefix must be cut to the budget. */
  statement?: string;
}

/** The trainer's `prompt_style` values (TrainConfig). */
export type PromptStyleName = "auto" | "fim" | "chat" | "instruction";
export const PROMPT_STYLE_NAMES: readonly PromptStyleName[] = ["auto", "fim", "chat", "instruction"];

/** The FIM families the trainer knows, in the order it tries them (prompts.py `FIM_CONVENTIONS`). */
export type FimFamily = "qwen" | "starcoder" | "deepseek" | "codestral";
export const FIM_FAMILIES: readonly FimFamily[] = ["qwen", "starcoder", "deepseek", "codestral"];

/** How prompts are written: the trainer's prompt options, under the same names (TrainConfig). */
export interface PromptOptions {
  /** `prompt_style`: auto picks FIM, chat or instruction from the model's tokenizer as the trainer does. */
  style: PromptStyleName;
  /** `prompt_template`: fields {prefix} {suffix} {goal} {hole} {kind}; the whole prompt (fim, instruction) or the
   * user's message (chat). Undefined: the style's built-in layout. */
  template?: string;
  /** `prompt_thinking`: the model reasons first; the candidate is the answer's last ```lean block. */
  thinking?: boolean;
  /** `goal_in_prompt`: put the goal state above the hole's line as a Lean comment (when the parts carry one). */
  showGoal: boolean;
  /** `max_prompt_tokens`: the prefix and suffix are fitted to this many tokens together. */
  maxPromptTokens: number;
  /**
   * The FIM family when the model's tokenizer is not at hand (an endpoint given without `tokenizer`): with no
   * vocabulary to look in, `style: "fim"` needs it named. Ignored when a tokenizer is loaded.
   */
  fimFamily?: FimFamily;
}

/** Sampling settings of one `generate` call (the trainer's names in parentheses). */
export interface SamplingSettings {
  /** Softmax temperature (`temperature`); 0 means greedy decoding. */
  temperature: number;
  /** Nucleus sampling threshold in (0, 1] (`top_p`). */
  topP: number;
  /** Longest completion, in tokens (`max_new_tokens`). */
  maxNewTokens: number;
  /** Seed for reproducible sampling, where the backend supports one (recorded with every result either way). */
  seed?: number;
  /** Extra stop strings, added to the prompt style's own (which always apply). */
  stop?: readonly string[];
}

/** Why a completion ended. */
export type FinishReason = "stop" | "length" | "unknown";

/** One sampled completion. */
export interface Candidate {
  /** The candidate the verifier checks: `raw` cleaned as the trainer cleans it (stops cut, fence stripped,
   * re-indented to the hole). "" when nothing usable was written (it fails, like in training). */
  text: string;
  /** What the model wrote, unchanged. */
  raw: string;
  /** Tokens in the prompt, when the backend knows (its tokenizer, or the server's `usage`); null otherwise. */
  promptTokens: number | null;
  /** Tokens generated for this candidate, when known; null otherwise. */
  completionTokens: number | null;
  /** Wall time from sending the request to this candidate's last token, in milliseconds. */
  latencyMs: number;
  /** Why generation stopped. */
  finishReason: FinishReason;
}

/** Why a `generate` call failed: one cause per thing a user can do something about. */
export type BackendErrorCause =
  /** Nothing listens at the endpoint (ECONNREFUSED, DNS failure, network unreachable). */
  | "connection"
  /** 401/403: the key is missing or wrong. */
  | "auth"
  /** 404: the server does not serve this model (or this route). */
  | "model-not-found"
  /** 400/422: the server refused a parameter (e.g. `suffix`, `n`, `seed`); the message names it when it can. */
  | "unsupported-parameter"
  /**
   * 400/413 for this prompt's length: the prompt and max-new-tokens together exceed the model's context (vLLM's
   * "maximum context length", llama.cpp's `exceed_context_size_error`). No retry of the same request helps; a
   * shorter prompt may.
   */
  | "context-length"
  /** 429 after the retries. */
  | "rate-limit"
  /** No answer within the time limit, after the retries. */
  | "timeout"
  /** The caller's AbortSignal fired. */
  | "aborted"
  /** 5xx after the retries, or an answer that is not what the API promises. */
  | "server"
  /** A local model folder is missing a file or holds something unreadable. */
  | "model-files"
  /** The model's process (ONNX worker, Python) died or could not start. */
  | "crashed"
  /** The prompt options cannot work with this model (the trainer's PromptError). */
  | "prompt";

export type GenerateResult =
  | {
      kind: "ok";
      /** `n` candidates, in sampling order. */
      candidates: Candidate[];
      /**
       * The prompt as the model saw it (special tokens as text, BOS included), for records and the editor's
       * "show prompt"; over /v1/chat/completions without a local tokenizer, the user's message; over a server's
       * native FIM, `prefix<HOLE>suffix`.
       */
      prompt: string;
    }
  | {
      kind: "error";
      cause: BackendErrorCause;
      /** What happened, in one sentence (names the endpoint or folder). */
      message: string;
      /** What to do about it. */
      hint: string;
      /** Candidates finished before the failure (parallel requests), so a caller may keep them. */
      partial?: Candidate[];
    };

/** A failed `generate`. */
export type GenerateError = Extract<GenerateResult, { kind: "error" }>;

/** Which model produced a result: recorded with every eval result and cache key. */
export interface ModelIdentity {
  /** The spec as given (`openai:URL#MODEL`, `onnx:DIR`, `hf:PATH`, `fake:NAME`), never with a key in it. */
  spec: string;
  backend: ModelSpec["kind"];
  /** The model's name: the endpoint's model id, or the folder's base name. */
  model: string;
  /** The resolved prompt style's name (prompts.ts `styleName`: `qwen`, `starcoder`, `chat`, `instruction-thinking`…). */
  promptStyle: string;
  /** A digest of what decides the outputs locally (weights and tokenizer files), when the backend can compute one. */
  digest?: string;
}

/** A model that fills holes. One backend serves many `generate` calls; `close` releases its process or sockets. */
export interface ModelBackend {
  readonly identity: ModelIdentity;
  /**
   * `n` candidates for one hole. Never throws for an expected failure: see `GenerateResult`. An aborted call
   * answers `{ kind: "error", cause: "aborted" }` promptly and leaves the backend usable.
   */
  generate(
    parts: PromptParts,
    n: number,
    sampling: SamplingSettings,
    signal?: AbortSignal,
  ): Promise<GenerateResult>;
  /** Stops workers and child processes; safe to call twice. */
  close(): Promise<void>;
}

/** Where a model lives, parsed from `--model`. */
export type ModelSpec =
  | {
      kind: "openai";
      /** Base URL of an OpenAI-compatible API, up to and including `/v1` (e.g. `http://127.0.0.1:8000/v1`). */
      baseUrl: string;
      /** The model id the server serves. */
      model: string;
    }
  | {
      kind: "onnx";
      /** A folder written by `fim-rlvr export-model --format onnx` (onnx/model.onnx, tokenizer.json, configs). */
      dir: string;
    }
  | {
      kind: "hf";
      /** A transformers model folder or a training checkpoint, run by the trainer's Python. */
      path: string;
    }
  | {
      kind: "fake";
      /** A scripted backend for tests (fakeBackend.ts). */
      name: string;
    };

export type ParseSpecResult = { kind: "ok"; spec: ModelSpec } | { kind: "error"; message: string };

const SPEC_FORMS = "openai:URL#MODEL, onnx:DIR or hf:PATH";

/** Reads `openai:URL#MODEL | onnx:DIR | hf:PATH` (and `fake:NAME` for tests). */
export function parseModelSpec(text: string): ParseSpecResult {
  const colon = text.indexOf(":");
  const scheme = colon < 0 ? "" : text.slice(0, colon);
  const rest = colon < 0 ? "" : text.slice(colon + 1);
  const bad = (why: string): ParseSpecResult => ({
    kind: "error",
    message: `--model ${JSON.stringify(text)}: ${why}; write ${SPEC_FORMS} (e.g. openai:http://127.0.0.1:8000/v1#Qwen/Qwen2.5-Coder-1.5B)`,
  });
  switch (scheme) {
    case "openai": {
      const hash = rest.lastIndexOf("#");
      if (hash < 0) return bad("the model name is missing after '#'");
      const baseUrl = rest.slice(0, hash);
      const model = rest.slice(hash + 1);
      if (!model.trim()) return bad("the model name after '#' is empty");
      let url: URL;
      try {
        url = new URL(baseUrl);
      } catch {
        return bad(`${JSON.stringify(baseUrl)} is not a URL`);
      }
      if (url.protocol !== "http:" && url.protocol !== "https:")
        return bad("the endpoint must be http:// or https://");
      if (url.username || url.password)
        return bad("put the API key in OPENAI_API_KEY (or the editor's secret store), not in the URL");
      return { kind: "ok", spec: { kind: "openai", baseUrl: baseUrl.replace(/\/+$/, ""), model } };
    }
    case "onnx":
      return rest ? { kind: "ok", spec: { kind: "onnx", dir: rest } } : bad("the folder is missing");
    case "hf":
      return rest ? { kind: "ok", spec: { kind: "hf", path: rest } } : bad("the path is missing");
    case "fake":
      return rest
        ? { kind: "ok", spec: { kind: "fake", name: rest } }
        : bad("the fake model's name is missing");
    default:
      return bad(colon < 0 ? "no backend named" : `unknown backend ${JSON.stringify(scheme)}`);
  }
}

/** The spec written back as text (the inverse of `parseModelSpec`). */
export function formatModelSpec(spec: ModelSpec): string {
  switch (spec.kind) {
    case "openai":
      return `openai:${spec.baseUrl}#${spec.model}`;
    case "onnx":
      return `onnx:${spec.dir}`;
    case "hf":
      return `hf:${spec.path}`;
    case "fake":
      return `fake:${spec.name}`;
  }
}

/** A failed result, built in one place so every backend words causes alike. */
export function backendError(
  cause: BackendErrorCause,
  message: string,
  hint: string,
  partial?: Candidate[],
): GenerateError {
  return partial && partial.length > 0
    ? { kind: "error", cause, message, hint, partial }
    : { kind: "error", cause, message, hint };
}

/** The `aborted` result every backend answers when the caller's signal fires. */
export function abortedResult(partial?: Candidate[]): GenerateError {
  return backendError(
    "aborted",
    "Generation was cancelled.",
    "Run it again when you want candidates.",
    partial,
  );
}

/** What opening a backend needs besides the spec. */
export interface BackendOptions {
  prompt: PromptOptions;
  /** OpenAI-compatible endpoints: the API key (from OPENAI_API_KEY or the editor's SecretStorage; never logged). */
  apiKey?: string;
  /**
   * OpenAI-compatible endpoints: a local folder with the served model's tokenizer (tokenizer.json,
   * tokenizer_config.json). With it prompts are built, fitted and rendered exactly as in training; without it
   * the style must be explicit and the budget is approximated (recorded in the identity's `promptStyle`).
   */
  tokenizerDir?: string;
  /** Time limit of one request or one local generation, in milliseconds. */
  timeoutMs?: number;
  /** OpenAI-compatible endpoints: retries of a request that failed for a transient cause (the package's own). */
  maxRetries?: number;
  /** OpenAI-compatible endpoints: stream completions (latency per candidate, prompt cancellation). Default true. */
  stream?: boolean;
  /**
   * OpenAI-compatible endpoints, FIM: how the hole reaches the server. `prompt` (the default whenever the FIM
   * family is known): the trainer's FIM text in a plain /v1/completions `prompt`. `suffix` (the server's native
   * `suffix` field), `infill` (llama.cpp's /infill), `codestral` (/v1/fim/completions): the server places the
   * FIM tokens itself. `probe`: try those three and take the first that answers (for a model whose family is not
   * known here).
   */
  fimRoute?: "prompt" | "suffix" | "infill" | "codestral" | "probe";
  /** Local models (onnx, hf on CPU): intra-op threads, capped so Lean keeps its cores. */
  threads?: number;
  /** hf: the Python that has the trainer installed (default: the trainer's managed environment). */
  python?: string;
}

export type OpenResult =
  | { kind: "ok"; backend: ModelBackend }
  | { kind: "error"; cause: BackendErrorCause; message: string; hint: string };
