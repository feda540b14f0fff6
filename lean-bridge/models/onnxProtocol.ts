/**
 * Messages between the ONNX backend (onnxBackend.ts, in the host) and its child process (onnxWorker.ts) over
 * Node's IPC channel. The child owns onnxruntime and the model; a native crash ends only the child.
 */

/** Host → child. */
export type ToWorker =
  | {
      type: "load";
      /** The export folder (onnx/model.onnx, config.json, tokenizer.json ...). */
      dir: string;
      /** onnxruntime intra-op threads. */
      threads: number;
    }
  | {
      type: "generate";
      id: number;
      /** The prompt's token ids (the host tokenized it, no special tokens added). */
      promptIds: number[];
      n: number;
      temperature: number;
      topP: number;
      maxNewTokens: number;
      seed: number;
      /** Text that ends a sample (checked on the decoded continuation). */
      stops: string[];
    }
  | { type: "cancel"; id: number };

/** One sample's tokens. */
export interface WorkerSample {
  ids: number[];
  finish: "stop" | "length";
  /** Milliseconds from the start of the request to this sample's last token. */
  latencyMs: number;
}

/** Child → host. */
export type FromWorker =
  | { type: "loaded"; layers: number; vocab: number }
  | { type: "load-failed"; message: string; hint: string }
  | { type: "result"; id: number; samples: WorkerSample[] }
  | { type: "cancelled"; id: number }
  | { type: "failed"; id: number; message: string };
