/**
 * npm run bench:rl-variants [-- --seeds N] [--split validation|test] [--target DIR] [--jobs J] [--out DIR] [--json FILE]
 *                            --variant NAME=CONFIG [--variant NAME=CONFIG ...] [-- TRAIN_ARGS...]
 *
 * Which RL settings to take, chosen on the validation split as bench:seeds' record requires: per variant and seed S,
 * one `fim-rlvr train TARGET --seed S --split-seed S` with the variant's TrainConfig keys (CONFIG: inline JSON or a
 * YAML/JSON file) and no compared arms, so only the RL arm trains. Every variant of a seed has the same split and,
 * at the same model size, the same SFT warm start; the first variant is the reference the others are paired with.
 *
 * Per variant and seed it prints RL's held-out pass@1 (greedy) on instances and families, what RL generated and
 * trained on (sequences, tokens: eval.json `compute`, dynamic sampling's extra draws included), the share of RL's
 * groups whose rewards were all equal (bench/rewardSignal.ts), and RL's training-time pass rate; then each variant
 * against the first, per seed and mean, with the exact sign-flip p. A variant's run that already has its evaluation
 * is reused (a bench cut short goes on where it stopped). `--json FILE` writes the figures (format
 * "fim-rlvr-rl-variants/1").
 */
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import {
  RL_VARIANTS_FORMAT,
  compareVariants,
  parseVariant,
  variantSeed,
  variantsText,
  withPortfolio,
  type Variant,
  type VariantSeed,
} from "./rlVariantsReport";
import { seedBaselines, type Evaluated } from "./seedsData";
import { BENCH_OWNED_TRAIN_FLAGS, REPO, judge, pool, runTrain, writeAtomic } from "./trainRuns";

/** The variant's keys whose value in the run's config.json differs (a reused run must have been made with them). */
function differingKeys(config: Record<string, unknown>, runDir: string): string[] {
  let made: Record<string, unknown>;
  try {
    made = JSON.parse(readFileSync(join(runDir, "config.json"), "utf8")) as Record<string, unknown>;
  } catch {
    return Object.keys(config);
  }
  return Object.keys(config).filter((key) => JSON.stringify(made[key]) !== JSON.stringify(config[key]));
}

/** What a run evaluated: the split and, when its config.json names them, the hole kinds. */
function evaluatedOf(runDir: string, split: Evaluated["split"]): Evaluated {
  const kinds = (JSON.parse(readFileSync(join(runDir, "config.json"), "utf8")) as { kinds?: unknown }).kinds;
  return { split, ...(Array.isArray(kinds) ? { kinds: kinds.map(String) } : {}) };
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: {
      seeds: { type: "string", default: "3" },
      split: { type: "string", default: "validation" },
      target: { type: "string", default: join(REPO, "lean-env-prelude") },
      jobs: { type: "string", default: "1" },
      out: { type: "string", default: join(REPO, "runs", "rl-variants") },
      json: { type: "string" },
      portfolio: { type: "boolean", default: false },
      variant: { type: "string", multiple: true, default: [] },
    },
    allowPositionals: true,
  });
  const usage = (message: string) => (process.stderr.write(`bench:rl-variants: ${message}\n`), 2);
  const seeds = Number(values.seeds);
  if (!Number.isInteger(seeds) || seeds < 1)
    return usage(`--seeds must be a whole number of at least 1, got "${values.seeds}"`);
  if (values.split !== "test" && values.split !== "validation")
    return usage(`--split must be validation or test, got "${values.split}"`);
  let variants: Variant[];
  try {
    variants = values.variant.map(parseVariant);
  } catch (error) {
    return usage((error as Error).message);
  }
  if (!variants.length) return usage('give at least one --variant NAME=CONFIG, e.g. --variant grpo="{}"');
  if (new Set(variants.map((v) => v.name)).size !== variants.length)
    return usage("variant names must differ");
  for (const owned of BENCH_OWNED_TRAIN_FLAGS)
    if (positionals.includes(owned))
      return usage(`${owned} is the bench's to set: put a variant's keys in its CONFIG`);
  if (!existsSync(join(REPO, "dist", "cli.js"))) {
    process.stderr.write("dist/cli.js is missing: run `npm run build` first\n");
    return 1;
  }
  const outDir = resolve(values.out);
  const target = resolve(values.target);
  const judged = judge(target);
  const runDir = (variant: Variant, seed: number) => join(outDir, variant.name, `seed-${seed}`);
  const jobs: (() => Promise<void>)[] = [];
  for (const variant of variants) {
    mkdirSync(join(outDir, variant.name), { recursive: true });
    const configPath = join(outDir, variant.name, "bench-config.json");
    const config = {
      ...variant.config,
      validation_every: 0,
      eval_samples: 0,
      eval_split: values.split,
      compare: [],
    };
    writeAtomic(configPath, JSON.stringify(config, null, 1) + "\n");
    for (let seed = 0; seed < seeds; seed++) {
      const dir = runDir(variant, seed);
      if (variantSeed(dir, seed)) {
        const differing = differingKeys(variant.config, dir);
        if (!differing.length) {
          process.stderr.write(`${variant.name} seed ${seed}: reused (${dir})\n`);
          continue;
        }
        process.stderr.write(
          `${variant.name} seed ${seed}: ${dir} was made with other ${differing.join(", ")}: trained again\n`,
        );
      }
      const args = [target, ...judged.trainArgs, "--seed", String(seed), "--split-seed", String(seed)];
      args.push("--out", dir, "--config", configPath, ...positionals);
      jobs.push(async () => {
        const started = performance.now();
        const code = await runTrain(args, `${variant.name} seed ${seed}`);
        const seconds = ((performance.now() - started) / 1000).toFixed(0);
        process.stderr.write(
          `${variant.name} seed ${seed}: ${code === 0 ? "done" : "FAILED"} in ${seconds} s\n`,
        );
      });
    }
  }
  await pool(jobs, Number(values.jobs));
  const seedsOf = (variant: Variant) =>
    Array.from({ length: seeds }, (_, seed) => variantSeed(runDir(variant, seed), seed)).filter(
      (s): s is VariantSeed => s !== undefined,
    );
  let results = compareVariants(variants, seedsOf);
  if (!results[0]?.seeds.length) {
    process.stderr.write(
      "bench:rl-variants: no seed has every variant's evaluation; see the failures above\n",
    );
    return 1;
  }
  // Every variant of a seed has the same split: the portfolio is scored once per seed, on the first variant's tasks.
  const portfolio = new Map<number, number>();
  if (values.portfolio) {
    for (const { seed } of results[0].seeds) {
      const dir = runDir(variants[0]!, seed);
      const got = await seedBaselines(
        seed,
        join(dir, "dataset"),
        target,
        evaluatedOf(dir, values.split),
        judged.baselines,
      );
      portfolio.set(seed, got.baselines.portfolio.instances["pass@1"]);
      process.stderr.write(`seed ${seed}: the fixed portfolio scored\n`);
    }
    results = withPortfolio(results, portfolio);
  }
  process.stdout.write(
    `bench:rl-variants on ${target}: ${results[0]!.seeds.length} seed(s), ${values.split} split, RL arm only; verifier: ${judged.runLabel}\n`,
  );
  process.stdout.write(variantsText(results, values.split, values.portfolio ? portfolio : undefined) + "\n");
  if (values.json) {
    writeAtomic(
      resolve(values.json),
      JSON.stringify(
        {
          format: RL_VARIANTS_FORMAT,
          split: values.split,
          ...(values.portfolio ? { portfolio: Object.fromEntries(portfolio) } : {}),
          variants: results,
        },
        null,
        1,
      ) + "\n",
    );
    process.stdout.write(`wrote ${values.json}\n`);
  }
  return 0;
}

void main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`bench:rl-variants failed: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
