/**
 * The model's answers remembered per prompt: the document, the prompt parts (the hole's declaration around it),
 * n, sampling and the model settings. The whole-fill cache (lean-bridge/fill/fillCache.ts) is keyed by all the
 * text Lean checks, so an edit in an earlier declaration re-checks the candidates (their verdicts may change);
 * this cache makes that re-check ask the model nothing, since its prompt did not change. Pure: no `vscode` here.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type {
  GenerateResult,
  ModelBackend,
  PromptParts,
  SamplingSettings,
} from "../../lean-bridge/models/backend";

type Generated = Extract<GenerateResult, { kind: "ok" }>;

export function generationKey(
  document: string,
  parts: PromptParts,
  n: number,
  sampling: SamplingSettings,
  model: unknown,
): string {
  return createHash("sha256")
    .update(JSON.stringify([document, parts, n, sampling, model]))
    .digest("hex");
}

export class GenerationCache {
  private readonly answers = new LRUCache<string, Generated>({ max: 64 });

  /** `backend` answering from the cache for this document and model settings, asking it only on a miss. */
  wrap(backend: ModelBackend, document: string, model: unknown): ModelBackend {
    return {
      identity: backend.identity,
      generate: async (parts, n, sampling, signal) => {
        const key = generationKey(document, parts, n, sampling, model);
        const known = this.answers.get(key);
        if (known) return known;
        const answer = await backend.generate(parts, n, sampling, signal);
        // Failures and cancelled requests are asked again next time.
        if (answer.kind === "ok") this.answers.set(key, answer);
        return answer;
      },
      // The wrapped backend stays open for the next fill; its owner closes it.
      close: async () => undefined,
    };
  }

  clear(): void {
    this.answers.clear();
  }
}
