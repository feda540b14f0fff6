/**
 * npm run bench:train [-- --steps N] [--python PATH] [--gpu | --cpu-smoke] — where a training step's time goes, measured
 * in a real run of the trainer on lean-env, verified by the Lean server SIMULATOR with every check charged
 * 200 ms, four at a time (a timer, not Lean): generation, verification and optimisation per step, and the share of
 * verification time hidden by overlapping it with the next step's generation (1 − waited / verifying;
 * target ≥ 80%). `--gpu` compares our loop's tokens/s with TRL's GRPOTrainer on a 0.5B model in bf16 (and with vLLM
 * where installed; bench/trainGpu.ts), and says so and exits 0 where there is no GPU; `--cpu-smoke` runs that
 * comparison's path on the CPU with a tiny model, to check the benchmark itself.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import type { ServiceVerifier } from "../lean-bridge/serve/service";
import { defaultTrainerRoot, startTraining } from "../lean-bridge/train/session";
import { EXAMPLE } from "../test/helpers";
import { benchGpu } from "./trainGpu";

const CHECK_MS = 200;
const SLOTS = 4;

/**
 * Charges every check that is not a cache hit CHECK_MS, SLOTS at a time, like a verifier whose checks all
 * take that long; the verdicts are still the simulator's.
 */
function withSimulatedCost(inner: ServiceVerifier): ServiceVerifier {
  return {
    identity: inner.identity,
    stats: inner.stats,
    slotCount: inner.slotCount,
    async verifyMany(items, onProgress, signal) {
      const verdicts = await inner.verifyMany(items, onProgress, signal);
      const charged = verdicts.filter((v) => v && !v.cached).length;
      await new Promise((resolve) => setTimeout(resolve, Math.ceil(charged / SLOTS) * CHECK_MS));
      return verdicts;
    },
  };
}

interface Metrics {
  step: number;
  gen_seconds: number;
  verify_seconds: number;
  verify_wait_seconds: number;
  opt_seconds: number;
  checks_per_second?: number;
  cache_hits?: number;
  tokens?: number;
}

function out(text: string): void {
  process.stdout.write(text + "\n");
}

function hasCuda(python: string): boolean {
  const r = spawnSync(python, ["-c", "import torch; print(torch.cuda.is_available())"], { encoding: "utf8" });
  return r.stdout.trim() === "True";
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    args: process.argv.slice(2),
    options: {
      steps: { type: "string" },
      python: { type: "string" },
      gpu: { type: "boolean" },
      "cpu-smoke": { type: "boolean" },
    },
  });
  const venv = join(defaultTrainerRoot(), ".venv", "bin", "python");
  const python = values.python ?? (existsSync(venv) ? venv : undefined);
  const steps = Number(values.steps ?? 6);
  if (values.gpu || values["cpu-smoke"]) {
    if (!python) {
      out("bench:train: no trainer Python (trainer/.venv); run `npm run test:setup` or pass --python PATH");
      return 1;
    }
    if (values.gpu && !hasCuda(python)) {
      out(
        "bench:train --gpu: no GPU here (torch.cuda.is_available() is False); run without --gpu for the CPU figures.",
      );
      return 0;
    }
    return benchGpu({ python, steps: Number(values.steps ?? (values.gpu ? 6 : 3)), smoke: !values.gpu, out });
  }
  const runDir = mkdtempSync(join(tmpdir(), "fim-bench-train-"));
  out(
    `bench:train: ${steps} RL steps of the embedded tiny model on lean-env, CPU, default group and batch sizes`,
  );
  out(
    `verifier: the Lean server SIMULATOR (not Lean), each check charged ${CHECK_MS} ms, ${SLOTS} at a time; run folder ${runDir}`,
  );
  const started = await startTraining(
    {
      target: EXAMPLE,
      runDir,
      config: {
        steps,
        sft_steps: 0,
        eval_limit: 8,
        checkpoint_every: 1000,
        device: "cpu",
        compare: [], // the compute-matched baseline is not what this bench measures
      },
      reward: "binary",
      verifier: { kind: "simulator", slots: SLOTS },
      resume: false,
      ...(python ? { python } : {}),
      advanced: { wrapVerifier: withSimulatedCost },
    },
    {
      onProgress: (p) =>
        out(
          `  step ${p.step}/${p.totalSteps}: generation ${p.metrics.gen_seconds?.toFixed(2)} s, verification ${p.metrics.verify_seconds?.toFixed(2)} s (waited ${p.metrics.verify_wait_seconds?.toFixed(2)} s), optimisation ${p.metrics.opt_seconds?.toFixed(2)} s`,
        ),
      onLog: (l) => (l.level !== "debug" ? out(`  trainer: ${l.message}`) : undefined),
    },
  );
  if (started.kind === "error") {
    out(`bench:train: could not start: ${started.message}\n  ${started.hint}`);
    return 1;
  }
  const outcome = await started.session.done;
  if (outcome.kind !== "completed") {
    out(
      `bench:train: the run did not complete: ${outcome.kind === "failed" ? `${outcome.message}\n  ${outcome.hint}` : "stopped"}`,
    );
    return 1;
  }
  const metrics = readFileSync(join(runDir, "metrics.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Metrics);
  const sum = (rows: Metrics[], key: keyof Metrics) => rows.reduce((n, m) => n + (Number(m[key]) || 0), 0);
  const mean = (rows: Metrics[], key: keyof Metrics) => sum(rows, key) / Math.max(1, rows.length);
  const hidden = (rows: Metrics[]) => {
    const verify = sum(rows, "verify_seconds");
    return verify > 0 ? 1 - sum(rows, "verify_wait_seconds") / verify : NaN;
  };
  // The last step's checks have no next generation to hide behind: report with and without it.
  const overlapped = metrics.slice(0, -1);
  out("");
  out(
    `per step (mean of ${metrics.length}): generation ${mean(metrics, "gen_seconds").toFixed(2)} s, verification ${mean(metrics, "verify_seconds").toFixed(2)} s, waited on verification ${mean(metrics, "verify_wait_seconds").toFixed(2)} s, optimisation ${mean(metrics, "opt_seconds").toFixed(2)} s`,
  );
  out(
    `verification hidden by overlap: ${(100 * hidden(metrics)).toFixed(1)}% over all steps, ${(100 * hidden(overlapped)).toFixed(1)}% over the steps followed by another (target ≥ 80%)`,
  );
  // What any overlap could hide at most: a step's verification can hide only behind the trainer's own work
  // (generation and optimisation); when checks take longer than that, the rest is waited for whatever we do.
  const bound = (rows: Metrics[]) => {
    const verify = sum(rows, "verify_seconds");
    const work = sum(rows, "gen_seconds") + sum(rows, "opt_seconds");
    return verify > 0 ? Math.min(1, work / verify) : NaN;
  };
  out(
    `hideable at most (trainer work / verification): ${(100 * bound(overlapped)).toFixed(1)}%; the overlap reached ${(100 * (hidden(overlapped) / bound(overlapped))).toFixed(1)}% of that`,
  );
  out(
    `verifier: ${(mean(metrics, "checks_per_second") || 0).toFixed(1)} checks/s, ${sum(metrics, "cache_hits")} cache hits`,
  );
  return 0;
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(
      `bench:train: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exitCode = 1;
  },
);
