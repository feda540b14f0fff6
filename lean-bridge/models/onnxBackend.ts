/** Local ONNX models: see open.ts. */
import type { BackendOptions, OpenResult } from "./backend";

export async function openOnnxBackend(dir: string, _options: BackendOptions): Promise<OpenResult> {
  return {
    kind: "error",
    cause: "model-files",
    message: `onnx:${dir}: local ONNX models are not available in this build yet.`,
    hint: "Use an OpenAI-compatible endpoint (openai:URL#MODEL).",
  };
}
