/**
 * bench:train --gpu: completion tokens per second of our training loop against TRL's GRPOTrainer on the same
 * ~0.5B-parameter model (built from a config, nothing downloaded: bench/gpu_train.py), bf16, the same group and
 * batch sizes, completion length, temperature, learning rate and KL weight, both rewarded by our verifier (the
 * Lean server SIMULATOR, not Lean: here the verifier is not what is measured). Then the same two with vLLM for
 * rollouts where vLLM is installed. Tokens/s counts completion tokens from the end of the first RL step to the
 * end of the last (the first step's warm-up left out of both).
 *
 * `--cpu-smoke` runs the same path on the CPU with a tiny model, to check the benchmark itself anywhere; its
 * figures mean nothing about GPUs.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { exportDataset } from "../lean-bridge/dataset/exporter";
import { HOLE_KINDS } from "../lean-bridge/holes/mine";
import { startTraining } from "../lean-bridge/train/session";
import { EXAMPLE } from "../test/helpers";

const REPO = resolve(__dirname, "..", "..");
const SCRIPT = join(REPO, "bench", "gpu_train.py");

export interface GpuBenchOptions {
  python: string;
  steps: number;
  /** CPU and a tiny model: checks the benchmark's own path, measures nothing about GPUs. */
  smoke: boolean;
  out: (line: string) => void;
}

interface Measured {
  engine: string;
  tokensPerSecond: number;
  secondsPerStep: number;
  timedSteps: number;
}

/** Shared by both loops: the settings a comparison must hold equal. */
function settings(smoke: boolean) {
  return {
    group: smoke ? 2 : 8,
    prompts: smoke ? 2 : 8,
    maxNewTokens: smoke ? 8 : 48,
    temperature: 1.0,
    learningRate: 1e-6,
    beta: 0.04,
  };
}

function python(
  py: string,
  args: string[],
): { ok: true; json: Record<string, unknown> } | { ok: false; why: string } {
  const ran = spawnSync(py, [SCRIPT, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] });
  if (ran.status !== 0) return { ok: false, why: ran.error?.message ?? `exit code ${ran.status}` };
  const last = ran.stdout.trim().split("\n").pop() ?? "";
  try {
    return { ok: true, json: JSON.parse(last) as Record<string, unknown> };
  } catch {
    return { ok: false, why: `its last line was not JSON: ${last.slice(0, 200)}` };
  }
}

function hasModule(py: string, name: string): boolean {
  return spawnSync(py, ["-c", `import ${name}`], { stdio: "ignore" }).status === 0;
}

function gpuName(py: string): string {
  const r = spawnSync(py, ["-c", "import torch; print(torch.cuda.get_device_name(0))"], { encoding: "utf8" });
  return r.stdout.trim() || "unknown GPU";
}

async function ourLoop(
  options: GpuBenchOptions,
  work: string,
  dataset: string,
  model: string,
  backend: "transformers" | "vllm",
): Promise<Measured | string> {
  const s = settings(options.smoke);
  const runDir = mkdtempSync(join(work, "run-"));
  const stepEnds = new Map<number, number>();
  const started = await startTraining(
    {
      target: dataset,
      runDir,
      config: {
        model,
        steps: options.steps,
        sft_steps: 0,
        eval_limit: 1,
        checkpoint_every: 1000,
        device: options.smoke ? "cpu" : "cuda",
        bf16: !options.smoke,
        group_size: s.group,
        batch_size: s.prompts,
        max_new_tokens: s.maxNewTokens,
        temperature: s.temperature,
        learning_rate: s.learningRate,
        algorithm: "grpo",
        algo_config: { beta: s.beta },
        rollout_backend: backend,
      },
      reward: "binary",
      verifier: { kind: "simulator" },
      resume: false,
      python: options.python,
    },
    {
      onProgress: (p) => {
        stepEnds.set(p.step, performance.now() / 1000);
        options.out(`  ours (${backend}): step ${p.step}/${p.totalSteps}`);
      },
    },
  );
  if (started.kind === "error") return `${started.message} ${started.hint}`;
  const outcome = await started.session.done;
  if (outcome.kind !== "completed")
    return outcome.kind === "failed" ? `${outcome.message} ${outcome.hint}` : "stopped";
  const tokens = new Map<number, number>(
    readFileSync(join(runDir, "metrics.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { step: number; tokens: number })
      .map((m) => [m.step, m.tokens]),
  );
  const steps = [...stepEnds.keys()].sort((a, b) => a - b);
  const first = steps[0]!;
  const last = steps[steps.length - 1]!;
  const seconds = stepEnds.get(last)! - stepEnds.get(first)!;
  let counted = 0;
  for (const step of steps) if (step > first) counted += tokens.get(step) ?? 0;
  return {
    engine: `ours (${backend})`,
    tokensPerSecond: seconds > 0 ? counted / seconds : 0,
    secondsPerStep: seconds / Math.max(1, last - first),
    timedSteps: last - first,
  };
}

async function startService(dataset: string): Promise<{ child: ChildProcess; address: string } | string> {
  const cli = join(REPO, "dist", "cli.js");
  const child = spawn(
    process.execPath,
    [cli, "serve", "--project", EXAMPLE, "--dataset", dataset, "--simulator", "--port", "0"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((done) => {
    let text = "";
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => {
      text += chunk;
      const found = /listening on (\S+)/.exec(text);
      if (found) done({ child, address: found[1]! });
    });
    child.once("exit", (code) => done(`the verifier service exited (code ${code}) before listening`));
  });
}

function trl(
  options: GpuBenchOptions,
  work: string,
  dataset: string,
  model: string,
  address: string,
  vllm: boolean,
): Measured | string {
  const s = settings(options.smoke);
  const ran = python(options.python, [
    "trl",
    "--model",
    model,
    "--dataset",
    dataset,
    "--service",
    address,
    "--device",
    options.smoke ? "cpu" : "cuda",
    "--steps",
    String(options.steps),
    "--group",
    String(s.group),
    "--prompts",
    String(s.prompts),
    "--max-new-tokens",
    String(s.maxNewTokens),
    "--temperature",
    String(s.temperature),
    "--learning-rate",
    String(s.learningRate),
    "--beta",
    String(s.beta),
    "--output-dir",
    mkdtempSync(join(work, "trl-")),
    ...(vllm ? ["--vllm"] : []),
  ]);
  if (!ran.ok) return `TRL's run failed: ${ran.why}`;
  const j = ran.json;
  return {
    engine: String(j.engine),
    tokensPerSecond: Number(j.tokens_per_second),
    secondsPerStep: Number(j.seconds) / Math.max(1, Number(j.timed_steps)),
    timedSteps: Number(j.timed_steps),
  };
}

/**
 * Runs the comparison and prints the figures and ratios; returns the exit code. Everything it writes (the dataset,
 * the model, each engine's run) is in one temp folder, removed at the end.
 */
export async function benchGpu(options: GpuBenchOptions): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), "fim-bench-gpu-"));
  try {
    return await compare(options, work);
  } finally {
    rmSync(work, { recursive: true, force: true, maxRetries: 5 });
  }
}

async function compare(options: GpuBenchOptions, work: string): Promise<number> {
  const { out } = options;
  const dataset = join(work, "dataset");
  const exported = await exportDataset({
    workspace: EXAMPLE,
    out: dataset,
    kinds: [...HOLE_KINDS],
    seed: 0,
    maxFileBytes: 4 * 1024 * 1024,
    formats: ["native"],
  });
  if (exported.kind !== "ok") {
    out(`bench:train --gpu: exporting lean-env failed (${exported.kind})`);
    return 1;
  }
  const size = options.smoke ? "tiny" : "0.5b";
  const built = python(options.python, [
    "model",
    "--dataset",
    dataset,
    "--out",
    join(work, "model"),
    "--size",
    size,
    "--dtype",
    options.smoke ? "float32" : "bfloat16",
  ]);
  if (!built.ok) {
    out(`bench:train --gpu: building the model failed: ${built.why}`);
    return 1;
  }
  const model = String(built.json.path);
  const s = settings(options.smoke);
  const device = options.smoke
    ? "CPU (--cpu-smoke: checks the benchmark, measures nothing about GPUs)"
    : gpuName(options.python);
  out(
    `bench:train --gpu on ${device}: a ${(Number(built.json.parameters) / 1e6).toFixed(options.smoke ? 2 : 0)}M-parameter Qwen2-shaped model built from a config (${size}, random weights), ${options.smoke ? "float32" : "bf16"}`,
  );
  out(
    `settings held equal: ${options.steps} GRPO steps, ${s.prompts} prompts x ${s.group} completions, ${s.maxNewTokens} new tokens, temperature ${s.temperature}, lr ${s.learningRate}, beta ${s.beta}; rewards from the verifier service with the Lean server SIMULATOR (not Lean)`,
  );
  const service = await startService(dataset);
  if (typeof service === "string") {
    out(`bench:train --gpu: ${service}`);
    return 1;
  }
  const results: (Measured | string)[] = [];
  try {
    results.push(await ourLoop(options, work, dataset, model, "transformers"));
    results.push(trl(options, work, dataset, model, service.address, false));
    if (!options.smoke && hasModule(options.python, "vllm")) {
      results.push(await ourLoop(options, work, dataset, model, "vllm"));
      results.push(trl(options, work, dataset, model, service.address, true));
    } else {
      out(
        options.smoke
          ? "vLLM: not run in --cpu-smoke"
          : "vLLM: not installed for this Python; the vLLM rows are left out",
      );
    }
  } finally {
    service.child.kill("SIGINT");
  }
  out("");
  out("engine                 tokens/s   s/step   timed steps");
  let failed = false;
  for (const r of results) {
    if (typeof r === "string") {
      out(`  FAILED: ${r}`);
      failed = true;
      continue;
    }
    out(
      `${r.engine.padEnd(22)} ${r.tokensPerSecond.toFixed(1).padStart(8)} ${r.secondsPerStep.toFixed(2).padStart(8)} ${String(r.timedSteps).padStart(8)}`,
    );
  }
  const pairs: [number, number][] = [
    [0, 1],
    [2, 3],
  ];
  for (const [ours, theirs] of pairs) {
    const a = results[ours];
    const b = results[theirs];
    if (a && b && typeof a !== "string" && typeof b !== "string" && b.tokensPerSecond > 0)
      out(`ratio ${a.engine} / ${b.engine}: ${(a.tokensPerSecond / b.tokensPerSecond).toFixed(2)}x`);
  }
  return failed ? 1 : 0;
}
