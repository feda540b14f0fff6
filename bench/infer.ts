/**
 * npm run bench:infer [-- --model SPEC] [-- --holes N] — fill-and-verify: for each tactic proof of the example
 * workspace, a model samples n candidates for the whole proof (the trainer's prompt), and the verifier pool checks
 * them. Prints candidates/s, p50/p95 latency of one hole's fill-and-verify, and the share of time in generation
 * and in verification. Verification runs against the Lean server SIMULATOR (simulated costs, not Lean's).
 *
 * Without --model it builds the trainer's tiny checkpoint (trainer/tests/export_fixtures.py, a ~1M-parameter
 * model, untrained: its candidates fail) and exports it with `fim-rlvr export-model --format onnx`, so the figures
 * measure the machinery (onnxruntime on CPU, prompts, the pool), not a model's quality. Needs trainer/.venv.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  parseModelSpec,
  type BackendOptions,
  type ModelSpec,
  type PromptParts,
} from "../lean-bridge/models/backend";
import { openBackend } from "../lean-bridge/models/open";
import { simulatorCommand } from "../lean-bridge/server/launch";
import { LineIndex } from "../lean-bridge/text/positions";
import { VerifierPool } from "../lean-bridge/verify/pool";
import { EXAMPLE, REPO, readExample } from "../test/helpers";
import { holes } from "./workload";

const N = 4;
const SAMPLING = { temperature: 0.8, topP: 0.95, maxNewTokens: 32, seed: 1 };

function line(label: string, value: string): void {
  process.stdout.write(`${label.padEnd(60)} ${value}\n`);
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** The tiny checkpoint's ONNX export, built here (nothing downloaded). */
function tinyModel(): ModelSpec {
  const python = join(REPO, "trainer", ".venv", "bin", "python");
  const run = join(mkdtempSync(join(tmpdir(), "fim-bench-infer-")), "run");
  process.stderr.write("bench:infer: building the tiny checkpoint and its ONNX export (a few minutes)\n");
  const made = spawnSync(
    python,
    [join(REPO, "trainer", "tests", "export_fixtures.py"), run, "--kind", "full"],
    { encoding: "utf8" },
  );
  if (made.status !== 0) throw new Error(`the tiny checkpoint could not be built: ${made.stderr}`);
  const cli = join(REPO, "dist", "cli.js");
  const exported = spawnSync(
    process.execPath,
    [cli, "export-model", run, "--format", "onnx", "--python", python],
    { encoding: "utf8" },
  );
  if (exported.status !== 0) throw new Error(`export-model failed: ${exported.stderr}`);
  return { kind: "onnx", dir: join(run, "exports", "step-3-onnx") };
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { model: { type: "string" }, holes: { type: "string" } } });
  let spec: ModelSpec;
  if (values.model) {
    const parsed = parseModelSpec(values.model);
    if (parsed.kind === "error") throw new Error(parsed.message);
    spec = parsed.spec;
  } else {
    spec = tinyModel();
  }
  const options: BackendOptions = {
    prompt: { style: "auto", showGoal: false, maxPromptTokens: 256 },
    apiKey: process.env.OPENAI_API_KEY,
  };
  const opened = await openBackend(spec, options);
  if (opened.kind === "error") throw new Error(`${opened.message} ${opened.hint}`);
  const backend = opened.backend;
  const started = await VerifierPool.start({
    projectRoot: EXAMPLE,
    launch: { command: simulatorCommand(), cwd: EXAMPLE },
    slots: 2,
    timeoutMs: 120_000,
    memoryPerWorkerMb: 1,
    memoryBudgetMb: 1024,
  });
  if (started.kind !== "ok") throw new Error(started.message);
  const pool = started.pool;
  const work = holes().slice(0, Number(values.holes ?? 40));
  const latencies: number[] = [];
  let generating = 0;
  let verifying = 0;
  let candidates = 0;
  let proved = 0;
  // One warm-up hole (JIT, the model's first session run, the simulator's first document) is not measured.
  for (const [index, hole] of work.entries()) {
    const text = readExample(hole.task.file);
    const lines = new LineIndex(text);
    const parts: PromptParts = {
      kind: "proof",
      prefix: text.slice(0, lines.offsetAt(hole.task.hole.start)),
      suffix: "",
      indent: hole.task.hole.start.character,
    };
    const t0 = performance.now();
    const result = await backend.generate(parts, N, SAMPLING);
    if (result.kind === "error") throw new Error(`${result.cause}: ${result.message}`);
    const t1 = performance.now();
    const verdicts = await pool.verifyMany(
      result.candidates.map((c) => ({ task: hole.task, candidate: c.text })),
    );
    const t2 = performance.now();
    if (index === 0) continue;
    generating += t1 - t0;
    verifying += t2 - t1;
    latencies.push(t2 - t0);
    candidates += result.candidates.length;
    proved += verdicts.filter((v) => v.kind === "proved").length;
  }
  await pool.stop();
  await backend.close();
  const total = generating + verifying;
  const sorted = [...latencies].sort((a, b) => a - b);
  process.stdout.write(
    `\nFill-and-verify: ${backend.identity.spec} (prompt style ${backend.identity.promptStyle}), the simulator (not Lean), 2 slots\n`,
  );
  line("   holes (tactic proofs of lean-env, first one warm-up)", String(latencies.length));
  line("   candidates per hole, max new tokens", `${N}, ${SAMPLING.maxNewTokens}`);
  line(
    "   candidates/s (generate then verify, one hole at a time)",
    (candidates / (total / 1000)).toFixed(1),
  );
  line(
    "   latency of one hole's fill-and-verify, p50 / p95",
    `${percentile(sorted, 50).toFixed(0)} ms / ${percentile(sorted, 95).toFixed(0)} ms`,
  );
  line(
    "   time in generation / verification",
    `${((100 * generating) / total).toFixed(0)}% / ${((100 * verifying) / total).toFixed(0)}%`,
  );
  line("   proved", `${proved} of ${candidates}`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:infer: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
