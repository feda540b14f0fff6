/**
 * npm run bench:seeds [-- --seeds N] [--split test|validation] [--samples K] [--target DIR] [--jobs J] [--out DIR]
 *                      [--reuse] [--json FILE] [--config FILE] [--one-split] [-- TRAIN_ARGS...]
 *
 * Does RL add anything over the same compute spent otherwise, and over a fixed prover? Per seed S (0..N-1), one run
 * of `fim-rlvr train TARGET --seed S --split-seed S --compare sft,sft_data,rft` trains four compute-matched arms from
 * one SFT warm start (same seed, same weights: the run's step-0 checkpoint), and measures each on the held-out split:
 *
 * - RL: the run's RL steps (the objective TRAIN_ARGS or the config choose; GRPO by default);
 * - SFT only: SFT on the reference proofs continued for as many sequences through forward and backward passes as the
 *   RL steps train on (no generation, no verification; trainer/fim_rlvr/run/measure.py);
 * - data-matched SFT: the same, on the reference proofs plus the fixed portfolio's proofs of the training split's
 *   open goals, checked by the run's verifier (trainer/fim_rlvr/step/portfolio.py);
 * - expert iteration (RFT): RL's task draws, samples and checks, then RL's optimiser steps on as many sequences with
 *   the supervised loss on the run's own verified proofs (trainer/fim_rlvr/step/rft.py).
 *
 * Beside them, per seed, the fixed portfolio (`first | rfl | decide | simp | …`) and the best single tactic (chosen
 * on validation) on exactly the held-out tasks the arms are measured on (bench/seedsData.ts, bench/portfolio.ts).
 *
 * The target is the real-Lean workspace lean-env-prelude/ by default, judged by the embedded Lean (`--lean embedded`:
 * mining, goals, rewards, the kernel gate and evaluation; the baselines with the kernel gate off, the server's
 * verdict), with its 60/15/25 split (bench/portfolio.ts REAL_LEAN_SPLIT_FRACTIONS). Another `--target` the embedded
 * Lean cannot judge whole (lean-env/) runs on the simulator (`--simulator`; on lean-env it judges with the
 * workspace's oracle), a dry run, not Lean, said on the first line. Each seed draws its own held-out split
 * (`--split-seed S`); the split's figures (held-out tasks, holes per theorem, held-out-family statement shapes found in
 * training, which must be 0) are computed from every seed's dataset and printed.
 *
 * Each arm's held-out pass@1 (greedy) and pass@K (K completions per task at the training temperature) on held-out
 * instances and held-out families, what it generated and trained on (sequences and tokens, eval.json `compute`), and
 * per family pass@1, pass@K and the distinct accepted proofs; then, on held-out instances, RL − SFT, RL − data-matched
 * SFT, RL − RFT and RL − portfolio per seed with an exact two-sided sign-flip p (the seed is the unit of replication:
 * each run is one draw of the whole training procedure, split included; with N seeds p cannot go below 2 / 2^N: 6
 * seeds are the fewest that can reach p < 0.05, and only with every seed one way), beside per-task paired counts
 * pooled over the seeds (RL only, the other only, both, neither, with an exact sign test on the discordant tasks);
 * what the verifier adds (RL and RFT against SFT) and what the algorithm adds (RL against RFT) apart; and RL's
 * learning signal per seed: the share of its groups whose rewards were all equal (bench/rewardSignal.ts). `--json
 * FILE` writes the result (format "fim-rlvr-seeds/3", bench/seeds.schema.json).
 *
 * `--one-split` keeps seed 0's held-out draw for every seed (format /2's runs did: `train` always mined with seed 0).
 * `--split validation` measures the validation split (for choosing settings without looking at the test split).
 * `--config FILE` (a TrainConfig, YAML or JSON) sets the runs' options; the bench adds its own keys (the validation
 * curve off, eval_samples, eval_split, compare) on top. `--reuse` keeps every run of OUT that already has all four
 * arms' evaluations and trains only the others (a bench cut short goes on where it stopped). Reused runs must have
 * been made with the same settings: their config.json says with which.
 *
 * Nothing here is a claim until these figures say so; docs quote only what this prints.
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { instanceTaskIds, seedBaselines, seedSplit, type Evaluated } from "./seedsData";
import {
  completeRuns,
  familiesText,
  seedsJson,
  seedsText,
  type SeedBaselines,
  type SeedRun,
  type SeedsJson,
} from "./seedsReport";
import { runRewardSignal } from "./rewardSignal";
import {
  BENCH_OWNED_TRAIN_FLAGS,
  REPO,
  judge,
  pool,
  readConfig,
  readEvals,
  runTrain,
  writeAtomic,
} from "./trainRuns";
import { trivialProofs, trivialScores } from "./trivialProvers";

function splitMode(runDir: string): string {
  try {
    const report = JSON.parse(readFileSync(join(runDir, "dataset", "report.json"), "utf8")) as {
      split?: { mode?: string };
    };
    return report.split?.mode ?? "unknown";
  } catch {
    return "unknown";
  }
}

/** The KL weight the runs' objective used (config.json's resolved algorithm options), for the printout's first line. */
function betaOf(runConfig: Record<string, unknown>): string {
  const resolved = runConfig.algo_config_resolved as Record<string, unknown> | undefined;
  return typeof resolved?.beta === "number" ? ` (beta ${resolved.beta})` : "";
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: {
      seeds: { type: "string", default: "6" },
      split: { type: "string", default: "test" },
      samples: { type: "string", default: "8" },
      target: { type: "string", default: join(REPO, "lean-env-prelude") },
      jobs: { type: "string", default: "1" },
      out: { type: "string", default: join(REPO, "runs", "seeds") },
      reuse: { type: "boolean", default: false },
      json: { type: "string" },
      config: { type: "string" },
      "one-split": { type: "boolean", default: false },
    },
    allowPositionals: true,
  });
  const seeds = Number(values.seeds);
  const samples = Number(values.samples);
  const usage = (message: string) => (process.stderr.write(`bench:seeds: ${message}\n`), 2);
  if (!Number.isInteger(seeds) || seeds < 1)
    return usage(`--seeds must be a whole number of at least 1, got "${values.seeds}"`);
  if (!Number.isInteger(samples) || samples < 0)
    return usage(`--samples must be a whole number, got "${values.samples}"`);
  if (values.split !== "test" && values.split !== "validation")
    return usage(`--split must be test or validation, got "${values.split}"`);
  for (const owned of BENCH_OWNED_TRAIN_FLAGS)
    if (positionals.includes(owned))
      return usage(
        `${owned} is the bench's to set (give --config to the bench itself, before --): it sets the seed, the split, the arms and the verifier for every run`,
      );
  if (!existsSync(join(REPO, "dist", "cli.js"))) {
    process.stderr.write("dist/cli.js is missing: run `npm run build` first\n");
    return 1;
  }
  const split: Evaluated["split"] = values.split;
  const outDir = resolve(values.out);
  mkdirSync(outDir, { recursive: true });
  const config = {
    ...(values.config ? readConfig(values.config) : {}),
    validation_every: 0,
    eval_samples: samples,
    eval_split: split,
    // sft_data last: the arms of format /2 run first, in their order, as they did.
    compare: ["sft", "rft", "sft_data"],
  };
  const configPath = join(outDir, "bench-config.json");
  writeAtomic(configPath, JSON.stringify(config, null, 1) + "\n");
  const target = resolve(values.target);
  const judged = judge(target);
  const complete = (runDir: string) =>
    completeRuns([{ seed: 0, evals: readEvals(runDir) }]).runs.length === 1;
  const jobs: (() => Promise<void>)[] = [];
  for (let seed = 0; seed < seeds; seed++) {
    const runDir = join(outDir, `seed-${seed}`);
    if (values.reuse && complete(runDir)) {
      process.stderr.write(`seed ${seed}: reused (${runDir})\n`);
      continue;
    }
    const args = [
      target,
      ...judged.trainArgs,
      "--seed",
      String(seed),
      "--split-seed",
      values["one-split"] ? "0" : String(seed),
      "--out",
      runDir,
      "--config",
      configPath,
      ...positionals,
    ];
    jobs.push(async () => {
      const started = performance.now();
      const code = await runTrain(args, `seed ${seed}`);
      const seconds = ((performance.now() - started) / 1000).toFixed(0);
      process.stderr.write(`seed ${seed}: ${code === 0 ? "done" : "FAILED"} in ${seconds} s (${runDir})\n`);
    });
  }
  await pool(jobs, Number(values.jobs));
  const runConfigOf = (seed: number) =>
    JSON.parse(readFileSync(join(outDir, `seed-${seed}`, "config.json"), "utf8")) as Record<string, unknown>;
  const evaluatedOf = (seed: number): Evaluated => {
    const kinds = runConfigOf(seed).kinds;
    return { split, ...(Array.isArray(kinds) ? { kinds: kinds.map(String) } : {}) };
  };
  const runs: SeedRun[] = Array.from({ length: seeds }, (_, seed) => {
    const runDir = join(outDir, `seed-${seed}`);
    const evals = readEvals(runDir);
    return existsSync(join(runDir, "dataset", "tasks.jsonl")) && existsSync(join(runDir, "config.json"))
      ? { seed, evals, instanceTasks: instanceTaskIds(join(runDir, "dataset"), evaluatedOf(seed)) }
      : { seed, evals };
  });
  const { runs: usable, left } = completeRuns(runs);
  for (const seed of left)
    process.stderr.write(`seed ${seed}: its run lacks an arm's evaluation; left out of the comparison\n`);
  if (!usable.length) return 1;
  const firstDir = join(outDir, `seed-${usable[0]!.seed}`);
  const runConfig = runConfigOf(usable[0]!.seed);
  if (runConfig.eval_limit !== null && runConfig.eval_limit !== undefined)
    process.stderr.write(
      `bench:seeds: eval_limit ${String(runConfig.eval_limit)} makes the arms measure a sample of the held-out tasks; the baselines and the per-task counts use them all\n`,
    );

  // Per seed: its split's figures and the baselines on the very held-out tasks its arms were measured on.
  const baselines = new Map<number, SeedBaselines>();
  const splits = usable.map(({ seed }) =>
    seedSplit(join(outDir, `seed-${seed}`, "dataset"), evaluatedOf(seed)),
  );
  let baselineVerifier = judged.label;
  for (const { seed } of usable) {
    const started = performance.now();
    const got = await seedBaselines(
      seed,
      join(outDir, `seed-${seed}`, "dataset"),
      target,
      evaluatedOf(seed),
      judged.baselines,
    );
    baselines.set(seed, got.baselines);
    baselineVerifier = got.verifierLabel;
    process.stderr.write(
      `seed ${seed}: baselines in ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
    );
  }
  const result: SeedsJson = seedsJson(usable, baselines, {
    mode: splitMode(firstDir),
    evaluated: split,
    heldout_tasks: Math.min(...splits.map((s) => s.heldoutTasks)),
    max_holes_per_theorem: Math.max(...splits.map((s) => s.maxHolesPerTheorem)),
    family_shapes_in_training: splits.reduce((a, s) => a + s.familyShapesInTraining, 0),
  });
  const out = (line: string) => process.stdout.write(line + "\n");
  out(
    `bench:seeds on ${target}: ${usable.length} seed(s); RL objective ${String(runConfig.algorithm)}${betaOf(runConfig)}, ` +
      `${String(runConfig.steps)} steps of ${String(runConfig.batch_size)} x ${String(runConfig.group_size)}; verifier: ${judged.label}; baselines judged by ${baselineVerifier}`,
  );
  out(
    `split per seed${values["one-split"] ? " (--one-split: seed 0's draw for every seed)" : " (each seed its own held-out draw)"}: ${usable.map(({ seed }, k) => `seed ${seed} ${splits[k]!.heldoutTasks} held-out tasks, ≤${splits[k]!.maxHolesPerTheorem} holes per theorem, ${splits[k]!.familyShapesInTraining} of ${splits[k]!.heldOutFamilyDeclarations} held-out-family shapes in training`).join("; ")}`,
  );
  out(seedsText(result, usable));
  out(familiesText(result));
  const signals = usable.map(({ seed }) => {
    const s = runRewardSignal(join(outDir, `seed-${seed}`, "samples.jsonl"));
    const share = (n: number) => (s && s.groups ? `${((100 * n) / s.groups).toFixed(0)}%` : "–");
    return s && s.groups
      ? `seed ${seed} ${share(s.flat)} (${share(s.allFailed)} all failed; ${(s.distinct / s.groups).toFixed(1)} distinct completions a group)`
      : `seed ${seed} –`;
  });
  out(
    `RL groups with every reward equal (no group-relative advantage: they train nothing): ${signals.join(", ")}`,
  );
  if (!judged.real) {
    const trivial = await trivialProofs(join(firstDir, "dataset"), target);
    out(
      `trivial provers on seed ${usable[0]!.seed}'s held-out tasks (${split} split; ${trivial.verifierLabel}):`,
    );
    for (const t of trivialScores(trivial, split))
      out(
        `  ${t.name.padEnd(28)} instances ${(100 * t.instances).toFixed(1).padStart(5)}%   families ${(100 * t.families).toFixed(1).padStart(5)}%`,
      );
  }
  if (values.json) {
    writeAtomic(resolve(values.json), JSON.stringify(result, null, 1) + "\n");
    out(`wrote ${values.json}`);
  }
  // Held-out families are new only when none of their statement shapes occurs in training: the split is checked.
  if (result.split.family_shapes_in_training > 0) {
    process.stderr.write(
      `bench:seeds: ${result.split.family_shapes_in_training} held-out-family declaration(s) have a statement shape their seed's training split has: the held-out families are not new, so their figures do not measure generalisation\n`,
    );
    return 1;
  }
  return 0;
}

void main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`bench:seeds failed: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
