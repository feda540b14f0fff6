/**
 * What the benches that train share: one `fim-rlvr train` run as a child process, a pool that runs them a few at a
 * time, a run's eval.json, a config file, an atomic write, and how a target is judged (the embedded Lean where it can
 * judge every file, else the simulator).
 */
import { spawn } from "node:child_process";
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { VerifierSpec } from "../lean-bridge/verifiers/startVerifier";
import { REAL_LEAN_SPLIT_FRACTIONS, embeddedCanJudge } from "./portfolio";
import type { EvalStage } from "./seedsReport";

export const REPO = resolve(__dirname, "..", "..");

/** `train` flags a bench sets itself for every run (seed, split, arms, verifier): refused among TRAIN_ARGS. */
export const BENCH_OWNED_TRAIN_FLAGS = [
  "--config",
  "--compare",
  "--seed",
  "--split-seed",
  "--split-fractions",
  "--simulator",
  "--lean",
] as const;

export function runTrain(args: string[], log: string): Promise<number> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [join(REPO, "dist", "cli.js"), "train", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let tail = "";
    const keep = (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("close", (code) => {
      if (code !== 0) process.stderr.write(`${log} failed (exit ${code}):\n${tail}\n`);
      resolveRun(code ?? 1);
    });
  });
}

/** Runs the jobs at most `jobs` at a time. */
export async function pool(tasks: (() => Promise<void>)[], jobs: number): Promise<void> {
  const queue = [...tasks];
  await Promise.all(
    Array.from({ length: Math.max(1, jobs) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await next();
    }),
  );
}

export function readEvals(runDir: string): Record<string, EvalStage | undefined> {
  try {
    return JSON.parse(readFileSync(join(runDir, "eval.json"), "utf8")) as Record<string, EvalStage>;
  } catch {
    return {};
  }
}

export function readConfig(path: string): Record<string, unknown> {
  const text = readFileSync(path, "utf8");
  const raw: unknown = path.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  if (raw === null || raw === undefined) return {};
  if (typeof raw !== "object" || Array.isArray(raw))
    throw new Error(`${path} must hold a mapping of TrainConfig keys`);
  return raw as Record<string, unknown>;
}

/** Writes `text` to `path` atomically (a temporary file, then a rename). */
export function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/** How the runs are judged: the embedded Lean where it can judge every file of the target, else the simulator. */
export function judge(target: string): {
  trainArgs: string[];
  baselines: VerifierSpec;
  /** The runs' verifier, and the baselines' (bench:seeds). */
  runLabel: string;
  label: string;
  real: boolean;
} {
  if (embeddedCanJudge(target))
    return {
      trainArgs: [
        "--lean",
        "embedded",
        "--split-fractions",
        [
          REAL_LEAN_SPLIT_FRACTIONS.train,
          REAL_LEAN_SPLIT_FRACTIONS.validation,
          REAL_LEAN_SPLIT_FRACTIONS.test,
        ].join(","),
      ],
      baselines: { kind: "lean", lean: "embedded", kernelGate: { kind: "off" } },
      runLabel: "the embedded Lean 4.35.0 (real Lean)",
      label: "the embedded Lean 4.35.0 (real Lean; the baselines with the kernel gate off)",
      real: true,
    };
  return {
    trainArgs: ["--simulator"],
    baselines: { kind: "simulator" },
    runLabel: "the simulator (not Lean)",
    label: "the simulator (not Lean)",
    real: false,
  };
}
