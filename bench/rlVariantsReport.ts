/**
 * bench:rl-variants' figures (bench/rlVariants.ts): a variant's `NAME=CONFIG`, one run's RL figures read from its
 * folder (eval.json's `after`, samples.jsonl), the variants paired with the first over the seeds they all completed,
 * and the printout.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { signFlipP } from "./pairedStats";
import { runRewardSignal } from "./rewardSignal";
import type { EvalStage } from "./seedsReport";
import { readConfig, readEvals } from "./trainRuns";

export const RL_VARIANTS_FORMAT = "fim-rlvr-rl-variants/1";

export interface Variant {
  name: string;
  config: Record<string, unknown>;
}

export interface VariantSeed {
  seed: number;
  instances: number;
  families: number;
  /** The SFT warm start's held-out-instance pass@1 (eval.json's `sft`), what RL started from; NaN without one. */
  warm_start: number;
  generated: { sequences: number; tokens: number };
  trained: { sequences: number; tokens: number };
  /** Share of RL's groups whose rewards were all equal, and of those all failed (0..1). */
  equal_rewards: number;
  all_failed: number;
  /** Distinct completions per group, on average (bench/rewardSignal.ts): how much the policy explores. */
  distinct_per_group: number;
  /** Proved share of RL's training completions over the run (first attempts). */
  train_pass_rate: number;
}

export interface VariantResult {
  name: string;
  config: Record<string, unknown>;
  seeds: VariantSeed[];
  mean: { instances: number; families: number; equal_rewards: number; distinct_per_group: number };
  /** Against the first variant on held-out instances (absent for the first). */
  against_first?: Paired;
  /** Against the fixed portfolio on the same held-out instances (with `--portfolio`). */
  against_portfolio?: Paired;
}

export interface Paired {
  diffs: number[];
  mean: number;
  p: number;
}

function paired(diffs: number[]): Paired {
  return { diffs, mean: mean(diffs), p: signFlipP(diffs) };
}

/** Each variant paired with the fixed portfolio's held-out-instance pass@1 of the same seed (`portfolio` by seed). */
export function withPortfolio(
  results: readonly VariantResult[],
  portfolio: ReadonlyMap<number, number>,
): VariantResult[] {
  return results.map((r) => ({
    ...r,
    against_portfolio: paired(r.seeds.map((s) => s.instances - (portfolio.get(s.seed) ?? Number.NaN))),
  }));
}

/** `NAME=CONFIG`: CONFIG inline JSON (starts with `{`) or a config file's path. */
export function parseVariant(text: string): Variant {
  const at = text.indexOf("=");
  if (at <= 0) throw new Error(`--variant wants NAME=CONFIG (inline JSON or a file), got "${text}"`);
  const name = text.slice(0, at);
  const value = text.slice(at + 1).trim();
  if (!/^[A-Za-z0-9._-]+$/.test(name))
    throw new Error(`--variant name "${name}" names a folder: use letters, digits, . _ -`);
  let config: unknown;
  try {
    config = value.startsWith("{") ? JSON.parse(value) : readConfig(value);
  } catch (error) {
    throw new Error(`--variant ${name}: ${(error as Error).message}`, { cause: error });
  }
  if (typeof config !== "object" || config === null || Array.isArray(config))
    throw new Error(`--variant ${name}: CONFIG must be a mapping of TrainConfig keys`);
  return { name, config: config as Record<string, unknown> };
}

/** A run's RL figures, or undefined when its evaluation is missing. */
export function variantSeed(runDir: string, seed: number): VariantSeed | undefined {
  const evals = readEvals(runDir);
  const after: EvalStage | undefined = evals.after;
  const instances = after?.by_held_out?.instance?.pass_at_1;
  const families = after?.by_held_out?.family?.pass_at_1;
  const generated = after?.compute?.generated;
  const trained = after?.compute?.trained;
  if (instances === undefined || families === undefined || !generated || !trained) return undefined;
  const signal = runRewardSignal(join(runDir, "samples.jsonl"));
  return {
    seed,
    instances,
    families,
    warm_start: evals.sft?.by_held_out?.instance?.pass_at_1 ?? Number.NaN,
    generated: { sequences: generated.sequences, tokens: generated.tokens },
    trained: { sequences: trained.sequences, tokens: trained.tokens },
    equal_rewards: signal?.groups ? signal.flat / signal.groups : Number.NaN,
    all_failed: signal?.groups ? signal.allFailed / signal.groups : Number.NaN,
    distinct_per_group: signal?.groups ? signal.distinct / signal.groups : Number.NaN,
    train_pass_rate: trainPassRate(join(runDir, "samples.jsonl")),
  };
}

/** Proved share of a run's first-attempt training completions (samples.jsonl; repair turns left out). */
export function trainPassRate(samplesPath: string): number {
  let proved = 0;
  let all = 0;
  let text: string;
  try {
    text = readFileSync(samplesPath, "utf8");
  } catch {
    return Number.NaN;
  }
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const row = JSON.parse(line) as { verdict?: unknown; turn?: unknown };
      if (row.turn) continue;
      all++;
      proved += row.verdict === "proved" ? 1 : 0;
    } catch {
      continue;
    }
  }
  return all ? proved / all : Number.NaN;
}

const mean = (xs: readonly number[]) => xs.reduce((a, x) => a + x, 0) / Math.max(1, xs.length);

/** Every variant's figures over the seeds they all completed, each paired with the first. */
export function compareVariants(
  variants: readonly Variant[],
  seedsOf: (variant: Variant) => VariantSeed[],
): VariantResult[] {
  const all = variants.map(seedsOf);
  const common = all
    .reduce<number[]>(
      (kept, seeds, k) =>
        k === 0 ? seeds.map((s) => s.seed) : kept.filter((x) => seeds.some((s) => s.seed === x)),
      [],
    )
    .sort((a, b) => a - b);
  const pick = (seeds: VariantSeed[]) => common.map((x) => seeds.find((s) => s.seed === x)!);
  const first = pick(all[0] ?? []);
  return variants.map((variant, k) => {
    const seeds = pick(all[k]!);
    const result: VariantResult = {
      name: variant.name,
      config: variant.config,
      seeds,
      mean: {
        instances: mean(seeds.map((s) => s.instances)),
        families: mean(seeds.map((s) => s.families)),
        equal_rewards: mean(seeds.map((s) => s.equal_rewards)),
        distinct_per_group: mean(seeds.map((s) => s.distinct_per_group)),
      },
    };
    if (k > 0) {
      result.against_first = paired(seeds.map((s, i) => s.instances - first[i]!.instances));
    }
    return result;
  });
}

const pct = (x: number) => (Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "–");
const pts = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)}`;

export function variantsText(
  results: readonly VariantResult[],
  split: string,
  portfolio?: ReadonlyMap<number, number>,
): string {
  const lines: string[] = [];
  if (portfolio && results[0])
    lines.push(
      `fixed portfolio (held-out instances, ${split} split): ${results[0].seeds.map((s) => `seed ${s.seed} ${pct(portfolio.get(s.seed) ?? Number.NaN)}`).join(", ")}; ` +
        `mean ${pct(mean(results[0].seeds.map((s) => portfolio.get(s.seed) ?? Number.NaN)))}`,
    );
  const first = results[0]?.name ?? "";
  for (const r of results) {
    lines.push(`${r.name}  ${JSON.stringify(r.config)}`);
    for (const s of r.seeds)
      lines.push(
        `  seed ${s.seed}   instances ${pct(s.instances).padStart(6)} (warm start ${pct(s.warm_start)})   families ${pct(s.families).padStart(6)}   ` +
          `generated ${s.generated.sequences} seq / ${s.generated.tokens} tok, trained ${s.trained.sequences} seq / ${s.trained.tokens} tok   ` +
          `equal-reward groups ${pct(s.equal_rewards)} (${pct(s.all_failed)} all failed, ${s.distinct_per_group.toFixed(1)} distinct completions a group)   training pass rate ${pct(s.train_pass_rate)}`,
      );
    lines.push(
      `  mean     instances ${pct(r.mean.instances).padStart(6)}   families ${pct(r.mean.families).padStart(6)}   equal-reward groups ${pct(r.mean.equal_rewards)}, ${r.mean.distinct_per_group.toFixed(1)} distinct completions a group`,
    );
    if (r.against_first)
      lines.push(
        `  against ${first} (held-out instances, ${split} split): per seed ${r.against_first.diffs.map(pts).join(", ")} points; ` +
          `mean ${pts(r.against_first.mean)} points, sign-flip p = ${r.against_first.p.toFixed(3)}`,
      );
    if (r.against_portfolio)
      lines.push(
        `  against the fixed portfolio: per seed ${r.against_portfolio.diffs.map(pts).join(", ")} points; ` +
          `mean ${pts(r.against_portfolio.mean)} points, sign-flip p = ${r.against_portfolio.p.toFixed(3)}`,
      );
  }
  return lines.join("\n");
}
