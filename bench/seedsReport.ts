/**
 * bench:seeds' result from its runs' eval.json files: per seed, held-out pass@1 (greedy) and pass@k of the three
 * compute-matched arms (RL, the SFT baseline, expert iteration) on held-out instances and held-out families, and the
 * paired per-seed differences on held-out instances with an exact sign-flip p (pairedStats.ts). The JSON it writes
 * (`--json FILE`) is `SeedsJson`, format "fim-rlvr-seeds/2" (bench/seeds.schema.json; test/bench/seeds.test.ts).
 */
import { signFlipP } from "./pairedStats";

export const SEEDS_FORMAT = "fim-rlvr-seeds/2";

/** The arms in the JSON's order, with the eval.json stage each reads (a run's RL is `after`). */
export const ARMS = [
  { arm: "sft", stage: "baseline-sft", label: "SFT only (compute-matched)" },
  { arm: "rft", stage: "baseline-rft", label: "expert iteration (RFT, compute-matched)" },
  { arm: "rl", stage: "after", label: "RL" },
] as const;
export type Arm = (typeof ARMS)[number]["arm"];

/** One held-out set's figures: greedy pass@1, its task count, and pass@n from n samples when measured. */
export interface SetScore {
  "pass@1": number;
  tasks: number;
  /** `pass@<n>`: the unbiased pass@k at k = n, from n completions per task at the training temperature. */
  [passAtK: `pass@${number}`]: number;
}

export interface ArmEntry {
  seed: number;
  instances: SetScore;
  families: SetScore;
}

export interface PairedDifference {
  /** Mean over seeds of (first arm − second arm) held-out-instance pass@1, a fraction (0.05 is 5 points). */
  mean: number;
  /** Exact two-sided sign-flip permutation p over the seeds. */
  p: number;
}

export interface SeedsJson {
  format: typeof SEEDS_FORMAT;
  /** How held-out tasks were chosen (the dataset's split mode) and which held-out split the arms were measured on. */
  split: { mode: string; evaluated: string };
  arms: Record<Arm, ArmEntry[]>;
  /** On held-out instances, paired by seed. */
  paired: { "rl-sft": PairedDifference; "rl-rft": PairedDifference };
}

/** The fields of one eval.json stage read here. */
export interface EvalStage {
  pass_at_1: number;
  tasks: number;
  samples?: number;
  by_held_out?: Record<string, Record<string, number | undefined> | undefined>;
  compute?: Record<string, number>;
}

/** One seed's run: its seed and its eval.json. */
export interface SeedRun {
  seed: number;
  evals: Record<string, EvalStage | undefined>;
}

function setScore(stage: EvalStage, set: "instance" | "family"): SetScore | undefined {
  const scores = stage.by_held_out?.[set];
  const passAt1 = scores?.pass_at_1;
  const tasks = scores?.tasks;
  if (passAt1 === undefined || tasks === undefined) return undefined;
  const out: SetScore = { "pass@1": passAt1, tasks };
  const n = stage.samples;
  const passAtN = n ? scores?.[`pass_at_${n}`] : undefined;
  if (n && passAtN !== undefined) out[`pass@${n}`] = passAtN;
  return out;
}

/** An arm's entry for one seed, or undefined when its stage or a held-out set is missing. */
export function armEntry(run: SeedRun, arm: Arm): ArmEntry | undefined {
  const stage = run.evals[ARMS.find((a) => a.arm === arm)!.stage];
  if (!stage) return undefined;
  const instances = setScore(stage, "instance");
  const families = setScore(stage, "family");
  return instances && families ? { seed: run.seed, instances, families } : undefined;
}

/** The seeds whose run measured every arm, in seed order; the others are named in `left`. */
export function completeRuns(runs: readonly SeedRun[]): { runs: SeedRun[]; left: number[] } {
  const complete = runs.filter((r) => ARMS.every(({ arm }) => armEntry(r, arm) !== undefined));
  return {
    runs: [...complete].sort((a, b) => a.seed - b.seed),
    left: runs.filter((r) => !complete.includes(r)).map((r) => r.seed),
  };
}

/** Per seed, `first` − `second` held-out-instance pass@1 (the runs must be complete). */
export function differences(runs: readonly SeedRun[], first: Arm, second: Arm): number[] {
  return runs.map((r) => armEntry(r, first)!.instances["pass@1"] - armEntry(r, second)!.instances["pass@1"]);
}

function paired(runs: readonly SeedRun[], first: Arm, second: Arm): PairedDifference {
  const diffs = differences(runs, first, second);
  return { mean: diffs.reduce((a, b) => a + b, 0) / Math.max(1, diffs.length), p: signFlipP(diffs) };
}

/** The bench's JSON from complete runs (completeRuns). */
export function seedsJson(runs: readonly SeedRun[], split: SeedsJson["split"]): SeedsJson {
  const arms = Object.fromEntries(ARMS.map(({ arm }) => [arm, runs.map((r) => armEntry(r, arm)!)])) as Record<
    Arm,
    ArmEntry[]
  >;
  return {
    format: SEEDS_FORMAT,
    split,
    arms,
    paired: { "rl-sft": paired(runs, "rl", "sft"), "rl-rft": paired(runs, "rl", "rft") },
  };
}

const pct = (x: number | undefined) => (x === undefined ? "    –" : `${(100 * x).toFixed(1).padStart(5)}%`);
const points = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)}`;

/** The bench's printed table and paired tests. */
export function seedsText(result: SeedsJson, runs: readonly SeedRun[]): string {
  const lines: string[] = [];
  const first = result.arms.rl[0];
  const n = Object.keys(first?.instances ?? {}).find((k) => /^pass@\d+$/.test(k) && k !== "pass@1");
  lines.push(
    `held-out pass@1 (greedy)${n ? ` and ${n} (sampled)` : ""} per seed, ${result.split.evaluated} split ` +
      `(${result.split.mode} split mode): instances (${first?.instances.tasks ?? "?"} tasks), families ` +
      `(${first?.families.tasks ?? "?"} tasks)`,
  );
  for (const { arm, label } of ARMS) {
    lines.push(`${label}:`);
    for (const e of result.arms[arm])
      lines.push(
        `  seed ${String(e.seed).padEnd(3)} instances ${pct(e.instances["pass@1"])}${n ? ` (${n} ${pct(e.instances[n as `pass@${number}`])})` : ""}` +
          `   families ${pct(e.families["pass@1"])}${n ? ` (${n} ${pct(e.families[n as `pass@${number}`])})` : ""}`,
      );
    const mean = (set: "instances" | "families") =>
      result.arms[arm].reduce((a, e) => a + e[set]["pass@1"], 0) / Math.max(1, result.arms[arm].length);
    lines.push(`  mean     instances ${pct(mean("instances"))}   families ${pct(mean("families"))}`);
  }
  const smallest = 2 / 2 ** runs.length;
  for (const [key, a, b] of [
    ["rl-sft", "rl", "sft"],
    ["rl-rft", "rl", "rft"],
  ] as const) {
    const d = result.paired[key];
    lines.push(
      `held-out instances, ${a.toUpperCase()} − ${b.toUpperCase()} per seed: ${differences(runs, a, b).map(points).join(", ")} points; ` +
        `mean ${points(d.mean)} points, sign-flip p = ${d.p.toFixed(3)} (smallest possible with ${runs.length} seeds: ${smallest.toFixed(3)})`,
    );
  }
  const spent = (stage: string) => {
    const c = runs[0]?.evals[stage]?.compute;
    return c
      ? `${c.optimizer_steps ?? "?"} optimiser steps, ${c.sequences ?? "?"} sequences trained, ${c.generated ?? "?"} generated, ${c.verifier_calls ?? "?"} verifier calls`
      : "not recorded";
  };
  lines.push(`compute per run (seed ${runs[0]?.seed ?? "?"}):`);
  for (const { label, stage } of ARMS) lines.push(`  ${label}: ${spent(stage)}`);
  return lines.join("\n");
}
