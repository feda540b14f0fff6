/**
 * The trainer's own models (`hf:PATH`: a run folder, one of its checkpoints, or a transformers model folder)
 * through the trainer's Python (`python -m fim_rlvr.model.generate_stdio`, JSON lines on stdio), with vLLM when it is
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
import type {
  ModelAnswer,
  ModelGenerateFailed,
  ModelGenerateRequest,
  ModelGenerateResult,
  ModelLoaded,
  ModelLoadFailed,
  ModelLoadRequest,
} from "../protocol/trainer";
import { buildPrompt, chooseStyle } from "./prompts";
import { candidateText, type PromptStyle, styleName } from "./style";
import { LoadedTokenizer } from "./tokenizer";
import { managedVenvDir } from "../train/python";
import { defaultTrainerRoot } from "../train/session";
import { defaultThreads } from "./onnxBackend";
import { interruption } from "./interruption";

/** The process ended before answering. */
interface Exited {
  type: "exit";
  detail: string;
}
/** An answer of the model process (protocol/trainer.ts declares every line), or the process's end. */
type Answer = ModelAnswer | Exited;

/** A JSON line as a ModelAnswer, when it is one (a library printing to stdout writes other lines). */
export function parseModelAnswer(line: string): ModelAnswer | null {
  let message: unknown;
  try {
    message = JSON.parse(line);
  } catch {
    return null;
  }
  if (typeof message !== "object" || message === null) return null;
  const m = message as Record<string, unknown>;
  const text = (key: string) => typeof m[key] === "string";
  switch (m.type) {
    case "loaded":
      return (m.engine === "vllm" || m.engine === "transformers") && text("device") && text("tokenizerDir")
        ? (m as unknown as ModelLoaded)
        : null;
    case "load-failed":
      return text("message") && text("hint") ? (m as unknown as ModelLoadFailed) : null;
    case "result":
      return text("id") && typeof m.promptTokens === "number" && Array.isArray(m.samples)
        ? (m as unknown as ModelGenerateResult)
        : null;
    case "failed":
      return text("id") && text("message") ? (m as unknown as ModelGenerateFailed) : null;
    default:
      return null;
  }
}

/** The generate request for one prompt, as the schema declares it. */
export function generateRequest(
  id: string,
  prompt: string,
  n: number,
  sampling: SamplingSettings,
  stop: readonly string[],
): ModelGenerateRequest {
  return {
    type: "generate",
    id,
    prompt,
    n,
    temperature: sampling.temperature,
    topP: sampling.topP,
    maxNewTokens: sampling.maxNewTokens,
    seed: sampling.seed ?? 0,
    stop: [...stop, ...(sampling.stop ?? [])],
  };
}

/** The Python process and its requests in flight, by id. */
class PythonProcess {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly waiting = new Map<string, (answer: Answer) => void>();
  private stderr = "";
  exited = false;

  constructor(python: string, trainerRoot: string) {
    this.child = spawn(python, ["-m", "fim_rlvr.model.generate_stdio"], {
      env: { ...process.env, PYTHONPATH: [trainerRoot, process.env.PYTHONPATH].filter(Boolean).join(":") },
    });
    this.child.stderr
      .setEncoding("utf8")
      .on("data", (d: string) => (this.stderr = (this.stderr + d).slice(-2000)));
    createInterface({ input: this.child.stdout }).on("line", (line) => {
      const message = parseModelAnswer(line);
      if (!message) return; // a library printing to stdout; the answers are JSON lines
      const key = message.type === "loaded" || message.type === "load-failed" ? "load" : message.id;
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

  ask(key: string, message: ModelLoadRequest | ModelGenerateRequest): Promise<Answer> {
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
          message: answer.message,
          hint: answer.hint,
        };
      }
      return {
        kind: "error",
        cause: "crashed",
        message: `The trainer's Python stopped while loading ${this.path} (${answer.type === "exit" ? answer.detail : answer.type}).`,
        hint: `Check that ${this.python} has the trainer's dependencies (pip install -e trainer).`,
      };
    }
    if (!this.tokenizer) {
      const loaded = LoadedTokenizer.load(answer.tokenizerDir, this.path);
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
    this.engine = `${answer.engine} on ${answer.device}`;
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
    const cut = interruption(signal, this.options.timeoutMs);
    const answer = await Promise.race([
      child.ask(id, generateRequest(id, prompt, n, sampling, style.stopStrings)),
      cut.interrupted,
    ]).finally(() => cut.dispose());
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
      const detail =
        answer.type === "exit" ? answer.detail : "message" in answer ? answer.message : answer.type;
      return backendError(
        "crashed",
        `The trainer's Python failed while generating (${detail}).`,
        "Run again; if it keeps failing, read the message above.",
      );
    }
    const latencyMs = performance.now() - started;
    const candidates: Candidate[] = answer.samples.map((sample) => {
      const raw = typeof sample.text === "string" ? sample.text : "";
      return {
        text: candidateText(style, raw, parts.indent),
        raw,
        promptTokens: answer.promptTokens,
        completionTokens: typeof sample.completionTokens === "number" ? sample.completionTokens : null,
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
