/**
 * The trainer's own models (`hf:PATH`: a run folder, one of its checkpoints, or a transformers model folder)
 * through the trainer's Python (`python -m fim_rlvr.generate_stdio`, JSON lines on stdio), with vLLM when it is
 * installed beside a CUDA GPU, so a GPU user evaluates with the engine training used. The prompt is built here
 * with the model's own tokenizer (as for ONNX); Python tokenizes, samples and decodes as rollouts do.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { existsSync } from "node:fs";
import { basename, join } from "node:path";
import { createInterface } from "node:readline";
import {
  abortedResult,
  backendError,
  type BackendOptions,
  type Candidate,
  type GenerateResult,
  type ModelBackend,
  type ModelIdentity,
  type OpenResult,
  type PromptParts,
  type SamplingSettings,
} from "./backend";
import { buildPrompt, chooseStyle } from "./prompts";
import { candidateText, type PromptStyle, styleName } from "./style";
import { LoadedTokenizer } from "./tokenizer";
import { managedVenvDir } from "../train/python";
import { defaultTrainerRoot } from "../train/session";
import { defaultThreads } from "./onnxBackend";

type Json = Record<string, unknown>;
/** A JSON answer, or `{ type: "exit", detail }` when the process ended first. */
type Answer = Json;

/** The Python process and its requests in flight, by id. */
class PythonProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting = new Map<string, (answer: Answer) => void>();
  private stderr = "";
  exited = false;

  constructor(python: string, trainerRoot: string) {
    this.child = spawn(python, ["-m", "fim_rlvr.generate_stdio"], {
      env: { ...process.env, PYTHONPATH: [trainerRoot, process.env.PYTHONPATH].filter(Boolean).join(":") },
    });
    this.child.stderr
      .setEncoding("utf8")
      .on("data", (d: string) => (this.stderr = (this.stderr + d).slice(-2000)));
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      let message: Json;
      try {
        message = JSON.parse(line) as Json;
      } catch {
        return; // a library printing to stdout; the answers are JSON lines
      }
      const key = message.type === "loaded" || message.type === "load-failed" ? "load" : String(message.id);
      this.waiting.get(key)?.(message);
      this.waiting.delete(key);
    });
    const onExit = (detail: string): void => {
      if (this.exited) return;
      this.exited = true;
      const tail = this.stderr.trim().split("\n").slice(-3).join(" | ");
      for (const resolve of this.waiting.values())
        resolve({ type: "exit", detail: tail ? `${detail}: ${tail}` : detail });
      this.waiting.clear();
    };
    this.child.on("error", (error) => onExit(error.message));
    this.child.on("exit", (code, signal) => onExit(signal ? `killed by ${signal}` : `exit code ${code}`));
  }

  ask(key: string, message: Json): Promise<Answer> {
    return new Promise((resolve) => {
      if (this.exited) return resolve({ type: "exit", detail: "the model process had stopped" });
      this.waiting.set(key, resolve);
      this.child.stdin.write(JSON.stringify(message) + "\n");
    });
  }

  forget(key: string): void {
    this.waiting.delete(key);
  }

  kill(): void {
    if (!this.exited) this.child.kill("SIGKILL");
  }
}

export class PythonBackend implements ModelBackend {
  private process: PythonProcess | null = null;
  private nextId = 1;
  private tokenizer: LoadedTokenizer | null = null;
  private style: PromptStyle | null = null;
  identity: ModelIdentity;
  /** What serves: "vllm" or "transformers", and the device. */
  engine = "";

  private constructor(
    private readonly path: string,
    private readonly python: string,
    private readonly options: BackendOptions,
  ) {
    this.identity = { spec: `hf:${path}`, backend: "hf", model: basename(path), promptStyle: "" };
  }

  static async open(path: string, options: BackendOptions): Promise<OpenResult> {
    const python = options.python ?? join(managedVenvDir(defaultTrainerRoot()), "bin", "python");
    if (!existsSync(python)) {
      return {
        kind: "error",
        cause: "crashed",
        message: `No trainer Python at ${python}.`,
        hint: "Pass the interpreter that has the trainer installed (--python), or run `fim-rlvr train` once to create it.",
      };
    }
    const backend = new PythonBackend(path, python, options);
    const failed = await backend.start();
    if (failed) return failed;
    return { kind: "ok", backend };
  }

  private async start(): Promise<Extract<OpenResult, { kind: "error" }> | null> {
    const child = new PythonProcess(this.python, defaultTrainerRoot());
    this.process = child;
    const answer = await child.ask("load", {
      type: "load",
      path: this.path,
      threads: this.options.threads ?? defaultThreads(),
    });
    if (answer.type !== "loaded") {
      child.kill();
      this.process = null;
      if (answer.type === "load-failed") {
        return {
          kind: "error",
          cause: "model-files",
          message: String(answer.message),
          hint: String(answer.hint),
        };
      }
      return {
        kind: "error",
        cause: "crashed",
        message: `The trainer's Python stopped while loading ${this.path} (${String((answer as Json).detail ?? answer.type)}).`,
        hint: `Check that ${this.python} has the trainer's dependencies (pip install -e trainer).`,
      };
    }
    if (!this.tokenizer) {
      const loaded = LoadedTokenizer.load(String(answer.tokenizer_dir), this.path);
      if (loaded.kind === "error")
        return { kind: "error", cause: "model-files", message: loaded.message, hint: loaded.hint };
      const chosen = chooseStyle(loaded.tokenizer, this.options.prompt, this.path);
      if (chosen.kind === "error") {
        child.kill();
        return {
          kind: "error",
          cause: "prompt",
          message: chosen.message,
          hint: "Change the prompt style or template to fit this model.",
        };
      }
      this.tokenizer = loaded.tokenizer;
      this.style = chosen.style;
      this.identity = { ...this.identity, promptStyle: styleName(chosen.style) };
    }
    this.engine = `${String(answer.engine)} on ${String(answer.device)}`;
    return null;
  }

  async generate(
    parts: PromptParts,
    n: number,
    sampling: SamplingSettings,
    signal?: AbortSignal,
  ): Promise<GenerateResult> {
    if (signal?.aborted) return abortedResult();
    if (!this.process || this.process.exited) {
      const failed = await this.start();
      if (failed) return backendError(failed.cause, failed.message, failed.hint);
    }
    const style = this.style!;
    const prompt = buildPrompt(parts, style, this.tokenizer!, this.options.prompt);
    const id = String(this.nextId++);
    const started = performance.now();
    const child = this.process!;
    let timer: NodeJS.Timeout | undefined;
    const interrupted = new Promise<"aborted" | "timeout">((resolve) => {
      signal?.addEventListener("abort", () => resolve("aborted"), { once: true });
      if (this.options.timeoutMs) timer = setTimeout(() => resolve("timeout"), this.options.timeoutMs);
    });
    const answer = await Promise.race([
      child.ask(id, {
        type: "generate",
        id,
        prompt,
        n,
        temperature: sampling.temperature,
        top_p: sampling.topP,
        max_new_tokens: sampling.maxNewTokens,
        seed: sampling.seed ?? 0,
        stop: [...style.stopStrings, ...(sampling.stop ?? [])],
      }),
      interrupted,
    ]);
    clearTimeout(timer);
    if (answer === "aborted") {
      child.forget(id); // Python finishes the call; its answer is dropped
      return abortedResult();
    }
    if (answer === "timeout") {
      child.kill(); // stuck in a generate call it cannot leave; the next call starts it again
      return backendError(
        "timeout",
        `The model took longer than ${this.options.timeoutMs} ms.`,
        "Lower max-new-tokens or n, or raise the time limit.",
      );
    }
    if (answer.type !== "result") {
      const detail = String((answer as Json).message ?? (answer as Json).detail ?? answer.type);
      return backendError(
        "crashed",
        `The trainer's Python failed while generating (${detail}).`,
        "Run again; if it keeps failing, read the message above.",
      );
    }
    const latencyMs = performance.now() - started;
    const samples = Array.isArray(answer.samples) ? (answer.samples as Json[]) : [];
    const candidates: Candidate[] = samples.map((sample) => {
      const raw = String(sample.text ?? "");
      return {
        text: candidateText(style, raw, parts.indent),
        raw,
        promptTokens: typeof answer.prompt_tokens === "number" ? answer.prompt_tokens : null,
        completionTokens: typeof sample.completion_tokens === "number" ? sample.completion_tokens : null,
        latencyMs,
        finishReason: sample.finish === "stop" || sample.finish === "length" ? sample.finish : "unknown",
      };
    });
    return { kind: "ok", candidates, prompt };
  }

  async close(): Promise<void> {
    this.process?.kill();
    this.process = null;
  }
}

export function openPythonBackend(path: string, options: BackendOptions): Promise<OpenResult> {
  return PythonBackend.open(path, options);
}
