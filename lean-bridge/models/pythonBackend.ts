/** The trainer's checkpoints through its Python: see open.ts. */
import type { BackendOptions, OpenResult } from "./backend";

export async function openPythonBackend(path: string, _options: BackendOptions): Promise<OpenResult> {
  return {
    kind: "error",
    cause: "model-files",
    message: `hf:${path}: trainer checkpoints are not available in this build yet.`,
    hint: "Export it with `fim-rlvr export-model --format onnx` or serve it with vLLM (openai:URL#MODEL).",
  };
}
