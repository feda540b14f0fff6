/**
 * Opening a backend from a `--model` spec: the one entry point `fim-rlvr eval` and the editor call. It loads the
 * tokenizer, resolves the prompt style as the trainer would, and (endpoints only, when asked) probes the
 * server's native FIM routes.
 */
import { resolve } from "node:path";
import OpenAI from "openai";
import type { BackendOptions, ModelBackend, ModelSpec, OpenResult } from "./backend";
import { OpenAiBackend, type OpenAiPlan } from "./openaiBackend";
import { probeNativeFim, type NativeFimRoute } from "./openaiRoutes";
import { chooseStyle } from "./prompts";
import { fimStyle, INSTRUCTION_STOPS, type PromptStyle, styleName } from "./style";
import { approximateTokenizer, LoadedTokenizer, type PromptTokenizer } from "./tokenizer";
import { openOnnxBackend } from "./onnxBackend";
import { openPythonBackend } from "./pythonBackend";

function fail(cause: "prompt" | "model-files" | "connection", message: string, hint: string): OpenResult {
  return { kind: "error", cause, message, hint };
}

/** Opens the backend `spec` names. Nothing is downloaded; a failure says what to do. */
export async function openBackend(
  spec: ModelSpec,
  options: BackendOptions,
  signal?: AbortSignal,
): Promise<OpenResult> {
  switch (spec.kind) {
    case "openai":
      return openOpenAi(spec, options, signal);
    case "onnx":
      return openOnnxBackend(resolve(spec.dir), options);
    case "hf":
      return openPythonBackend(resolve(spec.path), options);
    case "fake":
      return fail(
        "model-files",
        `fake:${spec.name} is a test backend.`,
        "Tests build it with `new FakeBackend(script)`.",
      );
  }
}

/** The prompt style of a local tokenizer, or the trainer's PromptError as a `prompt` failure. */
export function resolveStyle(
  tokenizer: PromptTokenizer,
  options: BackendOptions,
  modelName: string,
): { kind: "ok"; style: PromptStyle } | { kind: "error"; result: OpenResult } {
  const chosen = chooseStyle(tokenizer, options.prompt, modelName);
  if (chosen.kind === "ok") return chosen;
  return {
    kind: "error",
    result: fail("prompt", chosen.message, "Change --prompt-style / --prompt-template to fit this model."),
  };
}

async function openOpenAi(
  spec: Extract<ModelSpec, { kind: "openai" }>,
  options: BackendOptions,
  signal?: AbortSignal,
): Promise<OpenResult> {
  const { baseUrl, model } = spec;
  const prompt = options.prompt;
  let tokenizer: PromptTokenizer = approximateTokenizer(model);
  let exact = false;
  if (options.tokenizerDir) {
    const loaded = LoadedTokenizer.load(options.tokenizerDir, model);
    if (loaded.kind === "error") return fail("model-files", loaded.message, loaded.hint);
    tokenizer = loaded.tokenizer;
    exact = true;
  }
  let style: PromptStyle;
  let route: OpenAiPlan["route"] = "completions";
  let styleLabel: string;
  const wanted = options.fimRoute ?? "prompt";
  if (exact) {
    const resolved = resolveStyle(tokenizer, options, model);
    if (resolved.kind === "error") return resolved.result;
    style = resolved.style;
    styleLabel = styleName(style);
  } else if (prompt.style === "auto") {
    return fail(
      "prompt",
      `Without the model's tokenizer the prompt style of ${model} cannot be told.`,
      "Give the folder with its tokenizer.json (--tokenizer DIR), or name --prompt-style fim (with --fim-family), chat or instruction.",
    );
  } else if (prompt.style === "fim") {
    if (prompt.template) {
      style = {
        mode: "fim",
        fim: null,
        chat: false,
        stopStrings: [],
        template: prompt.template,
        thinking: false,
        bos: "",
      };
    } else if (prompt.fimFamily) {
      style = fimStyle(prompt.fimFamily);
    } else {
      style = {
        mode: "fim",
        fim: null,
        chat: false,
        stopStrings: [],
        template: null,
        thinking: false,
        bos: "",
      };
    }
    styleLabel = styleName(style);
  } else {
    const thinking = prompt.thinking ?? false;
    const chat = prompt.style === "chat";
    style = {
      mode: "instruction",
      fim: null,
      chat,
      stopStrings: thinking ? [] : [...INSTRUCTION_STOPS],
      template: prompt.template ?? null,
      thinking,
      bos: "",
    };
    if (chat) route = "chat";
    styleLabel = styleName(style);
  }
  // A probe only for a model whose FIM layout is not known here: the trainer's own text is exact, a server's
  // native route is not.
  const known = style.fim !== null || style.template !== null;
  if (style.mode === "fim" && wanted !== "prompt" && !(wanted === "probe" && known)) {
    const client = new OpenAI({
      baseURL: baseUrl,
      apiKey: options.apiKey ?? "none",
      maxRetries: 0,
      timeout: options.timeoutMs ?? 30_000,
    });
    const native: NativeFimRoute | null =
      wanted === "probe" ? await probeNativeFim(client, baseUrl, model, signal) : wanted;
    if (native === null) {
      return fail(
        "prompt",
        `${baseUrl} offers no native fill-in-the-middle (/infill, /v1/fim/completions or \`suffix\`) for ${model}.`,
        "Name the model's FIM family (--fim-family qwen|starcoder|deepseek|codestral), give its tokenizer (--tokenizer DIR), or use --prompt-style chat or instruction.",
      );
    }
    if (native !== null) {
      route = native;
      styleLabel = `fim-native-${native}`;
    }
  } else if (style.mode === "fim" && style.fim === null && style.template === null) {
    return fail(
      "prompt",
      `The FIM family of ${model} is not known here.`,
      "Name it (--fim-family qwen|starcoder|deepseek|codestral), give the model's tokenizer (--tokenizer DIR), or let a probe find the server's native FIM (--fim-route probe).",
    );
  }
  const identity = {
    spec: `openai:${baseUrl}#${model}`,
    backend: "openai" as const,
    model,
    promptStyle: exact ? styleLabel : `${styleLabel} (approximate budget: no tokenizer)`,
  };
  const plan: OpenAiPlan = {
    baseUrl,
    model,
    style,
    tokenizer,
    exactTokenizer: exact,
    route,
    prompt,
    identity,
  };
  const backend: ModelBackend = new OpenAiBackend(plan, options);
  return { kind: "ok", backend };
}
