/**
 * A scripted backend for tests of what sits on top of `ModelBackend` (eval, the editor's Fill Hole): it answers
 * from a script instead of a model, but cleans completions with the real cleaning of its prompt style, counts
 * calls, and honours `AbortSignal`, so callers are tested against the same contract as the real backends.
 */
import {
  abortedResult,
  backendError,
  type BackendErrorCause,
  type Candidate,
  type GenerateResult,
  type ModelBackend,
  type ModelIdentity,
  type PromptParts,
  type SamplingSettings,
} from "./backend";
import { candidateText, fimStyle, type PromptStyle, styleName } from "./style";

/** One scripted answer: a raw completion, or a failure of the given cause. */
export type ScriptedAnswer = string | { error: BackendErrorCause; message?: string };

/**
 * The script: for the hole `parts`, sample `index` (0-based within the call) of call number `call` (0-based over
 * the backend's life), what the model "writes".
 */
export type Script = (parts: PromptParts, index: number, call: number) => ScriptedAnswer;

export interface FakeBackendOptions {
  /** The name in the identity (`fake:NAME`). */
  name?: string;
  /** Style used to clean answers and write the prompt (default: Qwen FIM). */
  style?: PromptStyle;
  /**
   * When set, `generate` waits for this promise before answering (tests of cancellation and progress resolve it
   * when they are ready, so nothing depends on timing).
   */
  gate?: () => Promise<void>;
}

/** A fake backend whose answers come from `script`. `calls` records each call's parts and n. */
export class FakeBackend implements ModelBackend {
  readonly identity: ModelIdentity;
  readonly calls: { parts: PromptParts; n: number; sampling: SamplingSettings }[] = [];
  closed = false;
  private readonly style: PromptStyle;

  constructor(
    private readonly script: Script,
    private readonly options: FakeBackendOptions = {},
  ) {
    this.style = options.style ?? fimStyle("qwen");
    const name = options.name ?? "scripted";
    this.identity = {
      spec: `fake:${name}`,
      backend: "fake",
      model: name,
      promptStyle: styleName(this.style),
    };
  }

  async generate(
    parts: PromptParts,
    n: number,
    sampling: SamplingSettings,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    const call = this.calls.length;
    this.calls.push({ parts, n, sampling });
    if (signal?.aborted) return abortedResult();
    if (this.options.gate) {
      const aborted = await raceAbort(this.options.gate(), signal);
      if (aborted) return abortedResult();
    }
    const fim = this.style.fim;
    const prompt = fim
      ? `${fim.prefix}${parts.prefix}${fim.suffix}${parts.suffix}${fim.middle}`
      : `${parts.prefix}<HOLE>${parts.suffix}`;
    const candidates: Candidate[] = [];
    for (let index = 0; index < n; index++) {
      const answer = this.script(parts, index, call);
      if (typeof answer !== "string") {
        return backendError(
          answer.error,
          answer.message ?? `Scripted ${answer.error} failure.`,
          "A test asked for it.",
          candidates,
        );
      }
      candidates.push({
        text: candidateText(this.style, answer, parts.indent),
        raw: answer,
        promptTokens: null,
        completionTokens: null,
        latencyMs: 0,
        finishReason: "stop",
      });
    }
    return { kind: "ok", candidates, prompt };
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

/** Resolves true when `signal` fires before `work` settles, false when `work` settles first. */
function raceAbort(work: Promise<void>, signal?: AbortSignal): Promise<boolean> {
  if (!signal) return work.then(() => false);
  return new Promise((resolve, reject) => {
    const onAbort = (): void => resolve(true);
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      () => {
        signal.removeEventListener("abort", onAbort);
        resolve(false);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}
