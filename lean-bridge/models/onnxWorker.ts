/**
 * The ONNX model's child process (bundled as dist/onnxWorker.js): loads a `fim-rlvr export-model --format onnx`
 * folder into onnxruntime on CPU with capped threads, and answers "generate" requests with token ids. The prompt
 * is run once (batch 1); its key/value cache is copied to the n samples, which then advance together one token
 * a step through the exported cache (onnx_export.py names the inputs and outputs). It exits when the host goes.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import type { FromWorker, ToWorker, WorkerSample } from "./onnxProtocol";
import { sampleToken, seededRandom } from "./sampling";
import { LoadedTokenizer } from "./tokenizer";

interface Model {
  session: ort.InferenceSession;
  tokenizer: LoadedTokenizer;
  layers: number;
  kvHeads: number;
  headDim: number;
  eosIds: Set<number>;
}

let model: Model | null = null;
const cancelled = new Set<number>();
let queue: Promise<void> = Promise.resolve();

function send(message: FromWorker): void {
  process.send?.(message);
}

function readJson(path: string): Record<string, unknown> {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  } catch {
    return {};
  }
}

function ids(value: unknown): number[] {
  if (typeof value === "number") return [value];
  return Array.isArray(value) ? value.filter((v): v is number => typeof v === "number") : [];
}

async function load(dir: string, threads: number): Promise<FromWorker> {
  const file = join(dir, "onnx", "model.onnx");
  if (!existsSync(file)) {
    return {
      type: "load-failed",
      message: `${file} does not exist.`,
      hint: "Point at a folder written by `fim-rlvr export-model RUN --format onnx` (it holds onnx/model.onnx).",
    };
  }
  const loaded = LoadedTokenizer.load(dir);
  if (loaded.kind === "error") return { type: "load-failed", message: loaded.message, hint: loaded.hint };
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(file, {
      executionProviders: ["cpu"],
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: "all",
    });
  } catch (error) {
    return {
      type: "load-failed",
      message: `onnxruntime could not load ${file} (${error instanceof Error ? error.message : String(error)}).`,
      hint: "Export the model again with `fim-rlvr export-model --format onnx --force`.",
    };
  }
  const pastNames = session.inputNames.filter((n) => /^past_key_values\.\d+\.key$/.test(n));
  const config = readJson(join(dir, "config.json"));
  const meta = session.inputMetadata.find((m) => m.name === "past_key_values.0.key");
  const shape = meta && meta.isTensor ? meta.shape : [];
  const heads = Number(config.num_attention_heads ?? 0);
  const kvHeads = typeof shape[1] === "number" ? shape[1] : Number(config.num_key_value_heads ?? heads);
  const headDim =
    typeof shape[3] === "number"
      ? shape[3]
      : Number(config.head_dim ?? Number(config.hidden_size ?? 0) / Math.max(heads, 1));
  if (pastNames.length === 0 || !session.outputNames.includes("logits") || !(kvHeads > 0 && headDim > 0)) {
    return {
      type: "load-failed",
      message: `${file} is not a decoder with a key/value cache as fim-rlvr exports it (inputs: ${session.inputNames.slice(0, 4).join(", ")}…).`,
      hint: "Export it with `fim-rlvr export-model --format onnx`.",
    };
  }
  const generation = readJson(join(dir, "generation_config.json"));
  const eosIds = new Set([...ids(generation.eos_token_id), ...ids(config.eos_token_id)]);
  const eos = loaded.tokenizer.eosToken;
  const eosId = eos === null ? undefined : loaded.tokenizer.encode(eos)[0];
  if (eosId !== undefined) eosIds.add(eosId);
  model = { session, tokenizer: loaded.tokenizer, layers: pastNames.length, kvHeads, headDim, eosIds };
  return { type: "loaded", layers: pastNames.length, vocab: Number(config.vocab_size ?? 0) };
}

function int64(values: number[], dims: number[]): ort.Tensor {
  return new ort.Tensor(
    "int64",
    BigInt64Array.from(values, (v) => BigInt(v)),
    dims,
  );
}

/** Copies a batch-1 cache tensor to `n` rows. */
function repeatRows(tensor: ort.Tensor, n: number): ort.Tensor {
  const data = tensor.data as Float32Array;
  const out = new Float32Array(data.length * n);
  for (let r = 0; r < n; r++) out.set(data, r * data.length);
  return new ort.Tensor("float32", out, [n, ...tensor.dims.slice(1)]);
}

async function generate(request: Extract<ToWorker, { type: "generate" }>): Promise<FromWorker> {
  const m = model!;
  const started = performance.now();
  const { promptIds, n } = request;
  const length = promptIds.length;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: int64(promptIds, [1, length]),
    attention_mask: int64(new Array<number>(length).fill(1), [1, length]),
    position_ids: int64(
      promptIds.map((_, i) => i),
      [1, length],
    ),
  };
  for (let i = 0; i < m.layers; i++) {
    for (const part of ["key", "value"]) {
      feeds[`past_key_values.${i}.${part}`] = new ort.Tensor("float32", new Float32Array(0), [
        1,
        m.kvHeads,
        0,
        m.headDim,
      ]);
    }
  }
  let out = await m.session.run(feeds);
  const randoms = Array.from({ length: n }, (_, r) => seededRandom(request.seed * 7919 + r));
  const samples: (WorkerSample & { done: boolean })[] = Array.from({ length: n }, () => ({
    ids: [],
    finish: "length",
    latencyMs: 0,
    done: false,
  }));
  let past: Record<string, ort.Tensor> = {};
  for (let i = 0; i < m.layers; i++) {
    for (const part of ["key", "value"])
      past[`past_key_values.${i}.${part}`] = repeatRows(out[`present.${i}.${part}`]!, n);
  }
  const logitsOf = (
    tensor: ort.Tensor,
  ): { data: Float32Array; vocab: number; rowStride: number; last: number } => {
    const dims = tensor.dims;
    const vocab = dims[2]!;
    return {
      data: tensor.data as Float32Array,
      vocab,
      rowStride: dims[1]! * vocab,
      last: (dims[1]! - 1) * vocab,
    };
  };
  let logits = logitsOf(out.logits!);
  let batchRows = 1; // the prompt's logits are one row, shared by every sample
  for (let step = 0; step < request.maxNewTokens; step++) {
    if (cancelled.has(request.id)) return { type: "cancelled", id: request.id };
    const next: number[] = [];
    for (let r = 0; r < n; r++) {
      const sample = samples[r]!;
      if (sample.done) {
        next.push(0);
        continue;
      }
      const row = batchRows === 1 ? 0 : r;
      const token = sampleToken(
        logits.data,
        row * logits.rowStride + logits.last,
        logits.vocab,
        request.temperature,
        request.topP,
        randoms[r]!,
      );
      sample.latencyMs = performance.now() - started;
      if (m.eosIds.has(token)) {
        sample.done = true;
        sample.finish = "stop";
      } else {
        sample.ids.push(token);
        const text = request.stops.length > 0 ? m.tokenizer.decode(sample.ids) : "";
        if (request.stops.some((s) => s && text.includes(s))) {
          sample.done = true;
          sample.finish = "stop";
        }
      }
      next.push(token);
    }
    if (samples.every((s) => s.done) || step === request.maxNewTokens - 1) break;
    const total = length + step + 1;
    out = await m.session.run({
      input_ids: int64(next, [n, 1]),
      attention_mask: int64(new Array<number>(n * total).fill(1), [n, total]),
      position_ids: int64(new Array<number>(n).fill(total - 1), [n, 1]),
      ...past,
    });
    past = {};
    for (let i = 0; i < m.layers; i++) {
      for (const part of ["key", "value"])
        past[`past_key_values.${i}.${part}`] = out[`present.${i}.${part}`]!;
    }
    logits = logitsOf(out.logits!);
    batchRows = n;
  }
  return {
    type: "result",
    id: request.id,
    samples: samples.map(({ ids, finish, latencyMs }) => ({ ids, finish, latencyMs })),
  };
}

process.on("message", (message: ToWorker) => {
  if (message.type === "cancel") {
    cancelled.add(message.id);
    return;
  }
  // One request at a time, in order; cancellation is seen between steps.
  queue = queue.then(async () => {
    try {
      if (message.type === "load") send(await load(message.dir, message.threads));
      else if (cancelled.has(message.id)) send({ type: "cancelled", id: message.id });
      else if (!model) send({ type: "failed", id: message.id, message: "no model is loaded" });
      else send(await generate(message));
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      send(
        message.type === "load"
          ? { type: "load-failed", message: text, hint: "Export the model again." }
          : { type: "failed", id: message.id, message: text },
      );
    } finally {
      if (message.type === "generate") cancelled.delete(message.id);
    }
  });
});
process.on("disconnect", () => process.exit(0));
