/**
 * A local ONNX model (`onnx:DIR`, a `fim-rlvr export-model --format onnx` folder) on CPU. Prompts are built and
 * tokenized here with the folder's own tokenizer, exactly as in training; the model runs in a child process
 * (onnxWorker.ts) so a native crash in onnxruntime ends the child, not the editor, and its threads are capped so
 * Lean keeps its cores. Nothing is downloaded. A crashed child is started again by the next call.
 */
import { fork, type ChildProcess } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import { availableParallelism } from "node:os";
import { basename, join } from "node:path";
import {
  abortedResult,
  backendError,
  type BackendOptions,
  type GenerateError,
  type GenerateResult,
  type ModelBackend,
  type ModelIdentity,
  type OpenResult,
  type PromptParts,
  type SamplingSettings,
} from "./backend";
import type { FromWorker, ToWorker, WorkerSample } from "./onnxProtocol";
import { buildPrompt, chooseStyle } from "./prompts";
import { candidateText, type PromptStyle, styleName } from "./style";
import { LoadedTokenizer } from "./tokenizer";
import { interruption } from "./interruption";

/** Intra-op threads when none are asked for: a quarter of the cores, so the Lean workers keep the rest. */
export function defaultThreads(): number {
  return Math.max(1, Math.floor(availableParallelism() / 4));
}

/**
 * dist/onnxWorker.js beside the bundle (dist/cli.js, dist/extension.js) or one folder up (dist/bench/); from
 * sources (tests under tsx), the .ts file with the parent's loader.
 */
function workerPath(): { path: string; execArgv: string[] } {
  for (const bundled of [join(__dirname, "onnxWorker.js"), join(__dirname, "..", "onnxWorker.js")]) {
    if (existsSync(bundled)) return { path: bundled, execArgv: [] };
  }
  return { path: join(__dirname, "onnxWorker.ts"), execArgv: process.execArgv };
}

/** What decides this folder's outputs: its configs, tokenizer and the model file's size. */
function folderDigest(dir: string): string {
  const hash = createHash("sha256");
  for (const name of ["config.json", "generation_config.json", "tokenizer.json", "tokenizer_config.json"]) {
    const path = join(dir, name);
    hash.update(name).update(existsSync(path) ? readFileSync(path) : "");
  }
  const model = join(dir, "onnx", "model.onnx");
  hash.update(String(existsSync(model) ? statSync(model).size : 0));
  return hash.digest("hex").slice(0, 16);
}

type Pending = { resolve: (message: FromWorker | { type: "exit"; detail: string }) => void };

/** The child process and its requests in flight. */
class WorkerHandle {
  private readonly child: ChildProcess;
  private readonly pending = new Map<number, Pending>();
  private loadWaiter: Pending | null = null;
  private stderr = "";
  exited = false;

  constructor(dir: string, threads: number) {
    const { path, execArgv } = workerPath();
    this.child = fork(path, [], {
      stdio: ["ignore", "ignore", "pipe", "ipc"],
      execArgv,
      serialization: "advanced",
    });
    this.child.stderr
      ?.setEncoding("utf8")
      .on("data", (d: string) => (this.stderr = (this.stderr + d).slice(-2000)));
    this.child.on("message", (message: FromWorker) => {
      if (message.type === "loaded" || message.type === "load-failed") {
        this.loadWaiter?.resolve(message);
        this.loadWaiter = null;
      } else {
        this.pending.get(message.id)?.resolve(message);
        this.pending.delete(message.id);
      }
    });
    this.child.on("exit", (code, signal) => {
      this.exited = true;
      const detail = signal ? `killed by ${signal}` : `exit code ${code}`;
      const tail = this.stderr.trim().split("\n").slice(-3).join(" | ");
      const exit = { type: "exit" as const, detail: tail ? `${detail}: ${tail}` : detail };
      this.loadWaiter?.resolve(exit);
      for (const waiter of this.pending.values()) waiter.resolve(exit);
      this.pending.clear();
    });
    this.send({ type: "load", dir, threads });
  }

  loaded(): Promise<FromWorker | { type: "exit"; detail: string }> {
    return new Promise((resolve) => (this.loadWaiter = { resolve }));
  }

  request(
    message: Extract<ToWorker, { type: "generate" }>,
  ): Promise<FromWorker | { type: "exit"; detail: string }> {
    return new Promise((resolve) => {
      if (this.exited) return resolve({ type: "exit", detail: "the model process had stopped" });
      this.pending.set(message.id, { resolve });
      this.send(message);
    });
  }

  send(message: ToWorker): void {
    if (!this.exited) this.child.send(message);
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  kill(): void {
    if (!this.exited) this.child.kill("SIGKILL");
  }
}

export class OnnxBackend implements ModelBackend {
  private worker: WorkerHandle | null = null;
  private nextId = 1;

  private constructor(
    readonly identity: ModelIdentity,
    private readonly dir: string,
    private readonly tokenizer: LoadedTokenizer,
    private readonly style: PromptStyle,
    private readonly options: BackendOptions,
  ) {}

  /** Starts the child and loads the model; a failure says what to do. */
  static async open(
    dir: string,
    options: BackendOptions,
  ): Promise<{ kind: "ok"; backend: OnnxBackend } | Extract<OpenResult, { kind: "error" }>> {
    const loaded = LoadedTokenizer.load(dir, dir);
    if (loaded.kind === "error")
      return { kind: "error", cause: "model-files", message: loaded.message, hint: loaded.hint };
    const chosen = chooseStyle(loaded.tokenizer, options.prompt, dir);
    if (chosen.kind === "error") {
      return {
        kind: "error",
        cause: "prompt",
        message: chosen.message,
        hint: "Change the prompt style or template to fit this model.",
      };
    }
    const identity: ModelIdentity = {
      spec: `onnx:${dir}`,
      backend: "onnx",
      model: basename(dir),
      promptStyle: styleName(chosen.style),
      digest: folderDigest(dir),
    };
    const backend = new OnnxBackend(identity, dir, loaded.tokenizer, chosen.style, options);
    const started = await backend.start();
    if (started) {
      await backend.close();
      return { kind: "error", ...started };
    }
    return { kind: "ok", backend };
  }

  private async start(): Promise<{ cause: "model-files" | "crashed"; message: string; hint: string } | null> {
    const worker = new WorkerHandle(this.dir, this.options.threads ?? defaultThreads());
    this.worker = worker;
    const answer = await worker.loaded();
    if (answer.type === "loaded") return null;
    worker.kill();
    this.worker = null;
    if (answer.type === "load-failed")
      return { cause: "model-files", message: answer.message, hint: answer.hint };
    return {
      cause: "crashed",
      message: `The ONNX model process stopped while loading ${this.dir} (${answer.type === "exit" ? answer.detail : answer.type}).`,
      hint: "Check that onnxruntime-node is installed for this platform and the folder is a complete export.",
    };
  }

  async generate(
    parts: PromptParts,
    n: number,
    sampling: SamplingSettings,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    const prompt = buildPrompt(parts, this.style, this.tokenizer, this.options.prompt);
    const promptIds = this.tokenizer.encode(prompt);
    const stops = [...new Set([...this.style.stopStrings, ...(sampling.stop ?? [])])];
    const samples = await this.generateIds(promptIds, n, sampling, signal, stops);
    if (!Array.isArray(samples)) return samples;
    const candidates = samples.map((sample) => {
      const raw = this.tokenizer.decode(sample.ids);
      return {
        text: candidateText(this.style, raw, parts.indent),
        raw,
        promptTokens: promptIds.length,
        completionTokens: sample.ids.length,
        latencyMs: sample.latencyMs,
        finishReason: sample.finish,
      };
    });
    return { kind: "ok", candidates, prompt };
  }

  /** Token ids in, token ids out (the tests compare these with PyTorch's greedy continuation). */
  async generateIds(
    promptIds: number[],
    n: number,
    sampling: SamplingSettings,
    signal?: AbortSignal,
    stops: string[] = [],
  ): Promise<WorkerSample[] | GenerateError> {
    if (signal?.aborted) return abortedResult();
    if (!this.worker || this.worker.exited) {
      const failed = await this.start();
      if (failed)
        return backendError(failed.cause, failed.message, failed.hint) as Extract<
          GenerateResult,
          { kind: "error" }
        >;
    }
    const worker = this.worker!;
    const id = this.nextId++;
    const request: Extract<ToWorker, { type: "generate" }> = {
      type: "generate",
      id,
      promptIds,
      n,
      temperature: sampling.temperature,
      topP: sampling.topP,
      maxNewTokens: sampling.maxNewTokens,
      seed: sampling.seed ?? 0,
      stops,
    };
    const cut = interruption(signal, this.options.timeoutMs);
    const answer = await Promise.race([worker.request(request), cut.interrupted]).finally(() =>
      cut.dispose(),
    );
    if (answer === "aborted" || answer === "timeout") {
      worker.send({ type: "cancel", id });
      if (answer === "aborted") return abortedResult();
      return backendError(
        "timeout",
        `The local model took longer than ${this.options.timeoutMs} ms.`,
        "Lower max-new-tokens or the number of candidates, or raise the time limit.",
      );
    }
    if (answer.type === "result") return answer.samples;
    if (answer.type === "cancelled") return abortedResult();
    const detail =
      answer.type === "failed" ? answer.message : answer.type === "exit" ? answer.detail : answer.type;
    return backendError(
      "crashed",
      `The ONNX model failed while generating (${detail}).`,
      "Run again (the model process restarts); if it keeps failing, export the model again.",
    );
  }

  /** The model process's id while it runs (tests end it to show a crash stays in the child). */
  get processId(): number | undefined {
    return this.worker && !this.worker.exited ? this.worker.pid : undefined;
  }

  async close(): Promise<void> {
    this.worker?.kill();
    this.worker = null;
  }
}

export function openOnnxBackend(dir: string, options: BackendOptions): Promise<OpenResult> {
  return OnnxBackend.open(dir, options);
}
