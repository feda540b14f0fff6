/**
 * Opens the model an evaluation or the editor asks for: `fake:` scripted models for tests here, every real
 * backend (openai, onnx, hf) through the backends' own opener. One place, so `eval` and Fill Hole open models alike.
 */
import type { BackendOptions, ModelSpec, OpenResult, PromptParts } from "../models/backend";
import { openBackend } from "../models/open";
import { openFakeModel } from "./fakeModels";

export async function openModel(
  spec: ModelSpec,
  options: BackendOptions,
  /** Scripted models answer with a task's own proof; this finds it by the prompt parts. */
  reference: (parts: PromptParts) => string | undefined = () => undefined,
  signal?: AbortSignal,
): Promise<OpenResult> {
  if (spec.kind === "fake") {
    const opened = openFakeModel(spec.name, reference);
    return opened.kind === "ok"
      ? opened
      : {
          kind: "error",
          cause: "model-files",
          message: opened.message,
          hint: "Use fake:pattern:LETTERS (tests only).",
        };
  }
  return openBackend(spec, options, signal);
}
