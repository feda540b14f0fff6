/**
 * bench:seeds' result from its runs' eval.json files and each seed's baselines: per seed, held-out pass@1 (greedy)
 * and pass@k of the four compute-matched arms (RL, the SFT baseline, data-matched SFT, expert iteration) on held-out
 * instances and held-out families, what each arm generated and trained on, and per family what was learned; the
 * fixed portfolio and the best single tactic on the same held-out tasks; the split's figures; and, on held-out
 * instances, RL against each of the others paired by seed (an exact sign-flip p) and by task (discordant counts with
 * an exact sign test; pairedStats.ts). The JSON it writes (`--json FILE`) is `SeedsJson`, format "fim-rlvr-seeds/3"
 * (bench/seeds.schema.json; test/bench/seeds.test.ts).
 */
import { effects } from "../lean-bridge/train/reportArms";
import { signFlipP, signTestP } from "./pairedStats";

export const SEEDS_FORMAT = "fim-rlvr-seeds/3";

/** How the printout names RL's opponent in each pair. */
const PAIR_NAMES = {
  "rl-sft": "SFT",
  "rl-sft_data": "SFT+portfolio",
  "rl-rft": "RFT",
  "rl-portfolio": "the portfolio",
} as const;

/** The arms in the JSON's order, with the eval.json stage each reads (a run's RL is `after`). */
export const ARMS = [
  { arm: "sft", stage: "baseline-sft", label: "SFT only (compute-matched)" },
  { arm: "sft_data", stage: "baseline-sft_data", label: "SFT + portfolio proofs (data-matched)" },
  { arm: "rft", stage: "baseline-rft", label: "expert iteration (RFT, compute-matched)" },
  { arm: "rl", stage: "after", label: "RL" },
] as const;
export type Arm = (typeof ARMS)[number]["arm"];

/** The baselines in the JSON's order. */
export const BASELINES = [
  { baseline: "portfolio", label: "fixed portfolio" },
  { baseline: "best_tactic", label: "best single tactic (chosen on validation)" },
] as const;
export type Baseline = (typeof BASELINES)[number]["baseline"];

/** What RL is paired against, in the JSON's order: every arm and the portfolio. */
export const PAIRS = ["rl-sft", "rl-sft_data", "rl-rft", "rl-portfolio"] as const;
export type Pair = (typeof PAIRS)[number];

/** One held-out set's figures: greedy pass@1, its task count, and pass@n from n samples when measured. */
export interface SetScore {
  "pass@1": number;
  tasks: number;
  /** `pass@<n>`: the unbiased pass@k at k = n, from n completions per task at the training temperature. */
  [passAtK: `pass@${number}`]: number;
}

/** Sequences and their tokens. */
export interface Count {
  sequences: number;
  tokens: number;
}

/** One family's figures: pass@1, pass@n, tasks, and the distinct accepted proofs with how often each occurred. */
export interface FamilyScore {
  "pass@1": number;
  tasks: number;
  [passAtK: `pass@${number}`]: number;
  proofs: { proof: string; count: number }[];
}

export interface ArmEntry {
  seed: number;
  instances: SetScore;
  families: SetScore;
  /** Completions sampled (training draws, dynamic sampling's refills, the evaluation) and their tokens. */
  generated: Count;
  /** Sequences and tokens through forward and backward passes. */
  trained: Count;
  by_family: Record<string, FamilyScore>;
}

export interface BaselineEntry {
  seed: number;
  /** The proof tried on every task (the portfolio's `first | ...`, or the chosen tactic). */
  candidate: string;
  instances: { "pass@1": number; tasks: number };
  families: { "pass@1": number; tasks: number };
  by_family: Record<string, { "pass@1": number; tasks: number }>;
}

/** Per task, over every seed's held-out instances: who proved it (greedy). */
export interface TaskCounts {
  both: number;
  /** Proved by RL only. */
  first_only: number;
  /** Proved by the other only. */
  second_only: number;
  neither: number;
  /** Exact two-sided sign test over the discordant pairs (first_only against second_only). */
  p: number;
}

export interface PairedDifference {
  /** Mean over seeds of (first arm − second arm) held-out-instance pass@1, a fraction (0.05 is 5 points). */
  mean: number;
  /** Exact two-sided sign-flip permutation p over the seeds. */
  p: number;
  tasks: TaskCounts;
}

/** The split's figures, over the seeds' draws. */
export interface SplitFigures {
  /** How held-out tasks were chosen (the dataset's split mode) and which held-out split the arms were measured on. */
  mode: string;
  evaluated: string;
  /** The fewest held-out tasks (instances and families) any seed's evaluated split has. */
  heldout_tasks: number;
  /** The most holes one theorem has among any seed's held-out tasks. */
  max_holes_per_theorem: number;
  /** Held-out-family declarations, over every seed, whose statement shape occurs in that seed's training split. */
  family_shapes_in_training: number;
}

export interface SeedsJson {
  format: typeof SEEDS_FORMAT;
  split: SplitFigures;
  arms: Record<Arm, ArmEntry[]>;
  baselines: Record<Baseline, BaselineEntry[]>;
  /** On held-out instances, paired by seed and by task. */
  paired: Record<Pair, PairedDifference>;
}

/** The fields of one eval.json stage read here. */
export interface EvalStage {
  pass_at_1: number;
  tasks: number;
  samples?: number;
  proved?: string[];
  by_held_out?: Record<string, Record<string, number | undefined> | undefined>;
  by_family?: Record<string, Record<string, unknown>>;
  compute?: {
    optimizer_steps?: number;
    verifier_calls?: number;
    generated?: Count;
    trained?: Count;
    evaluation?: Count;
  };
}

/** One seed's run: its seed, its eval.json, and the ids of its evaluated split's held-out instances. */
export interface SeedRun {
  seed: number;
  evals: Record<string, EvalStage | undefined>;
  instanceTasks?: readonly string[];
}

/** One seed's baselines (bench/portfolio.ts), with the ids of the tasks each proved. */
export type SeedBaselines = Record<Baseline, BaselineEntry & { proved: readonly string[] }>;

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

function familyScores(stage: EvalStage): Record<string, FamilyScore> | undefined {
  if (!stage.by_family) return undefined;
  const n = stage.samples;
  return Object.fromEntries(
    Object.entries(stage.by_family).map(([name, f]) => {
      const out: FamilyScore = {
        "pass@1": Number(f.pass_at_1),
        tasks: Number(f.tasks),
        proofs: (f.proofs as FamilyScore["proofs"] | undefined) ?? [],
      };
      if (n && typeof f[`pass_at_${n}`] === "number") out[`pass@${n}`] = f[`pass_at_${n}`] as number;
      return [name, out];
    }),
  );
}

/** An arm's entry for one seed, or undefined when its stage, a held-out set or its counts are missing. */
export function armEntry(run: SeedRun, arm: Arm): ArmEntry | undefined {
  const stage = run.evals[ARMS.find((a) => a.arm === arm)!.stage];
  if (!stage) return undefined;
  const instances = setScore(stage, "instance");
  const families = setScore(stage, "family");
  const generated = stage.compute?.generated;
  const trained = stage.compute?.trained;
  const byFamily = familyScores(stage);
  if (!instances || !families || !generated || !trained || !byFamily) return undefined;
  return {
    seed: run.seed,
    instances,
    families,
    generated: { sequences: generated.sequences, tokens: generated.tokens },
    trained: { sequences: trained.sequences, tokens: trained.tokens },
    by_family: byFamily,
  };
}

/** The seeds whose run measured every arm, in seed order; the others are named in `left`. */
export function completeRuns(runs: readonly SeedRun[]): { runs: SeedRun[]; left: number[] } {
  const complete = runs.filter((r) => ARMS.every(({ arm }) => armEntry(r, arm) !== undefined));
  return {
    runs: [...complete].sort((a, b) => a.seed - b.seed),
    left: runs.filter((r) => !complete.includes(r)).map((r) => r.seed),
  };
}

/** Held-out-instance pass@1 of RL's opponent in `pair` for one seed. */
function opponentScore(run: SeedRun, baselines: ReadonlyMap<number, SeedBaselines>, pair: Pair): number {
  const other = pair.slice(3);
  if (other === "portfolio") return baselines.get(run.seed)!.portfolio.instances["pass@1"];
  return armEntry(run, other as Arm)!.instances["pass@1"];
}

/** Per seed, RL − its opponent in `pair`, held-out-instance pass@1 (the runs must be complete). */
export function differences(
  runs: readonly SeedRun[],
  baselines: ReadonlyMap<number, SeedBaselines>,
  pair: Pair,
): number[] {
  return runs.map((r) => armEntry(r, "rl")!.instances["pass@1"] - opponentScore(r, baselines, pair));
}

/** Who proved each held-out instance, RL against the opponent, pooled over the seeds (greedy `proved` ids). */
export function taskCounts(
  runs: readonly SeedRun[],
  baselines: ReadonlyMap<number, SeedBaselines>,
  pair: Pair,
): TaskCounts {
  const counts = { both: 0, first_only: 0, second_only: 0, neither: 0 };
  const other = pair.slice(3);
  for (const run of runs) {
    const rl = new Set(run.evals.after?.proved ?? []);
    const opponent = new Set(
      other === "portfolio"
        ? baselines.get(run.seed)!.portfolio.proved
        : (run.evals[ARMS.find((a) => a.arm === other)!.stage]?.proved ?? []),
    );
    for (const id of run.instanceTasks ?? []) {
      const a = rl.has(id);
      const b = opponent.has(id);
      if (a && b) counts.both++;
      else if (a) counts.first_only++;
      else if (b) counts.second_only++;
      else counts.neither++;
    }
  }
  return { ...counts, p: signTestP(counts.first_only, counts.first_only + counts.second_only) };
}

function paired(
  runs: readonly SeedRun[],
  baselines: ReadonlyMap<number, SeedBaselines>,
  pair: Pair,
): PairedDifference {
  const diffs = differences(runs, baselines, pair);
  return {
    mean: diffs.reduce((a, b) => a + b, 0) / Math.max(1, diffs.length),
    p: signFlipP(diffs),
    tasks: taskCounts(runs, baselines, pair),
  };
}

/** The bench's JSON from complete runs (completeRuns), each seed's baselines and the split's figures. */
export function seedsJson(
  runs: readonly SeedRun[],
  baselines: ReadonlyMap<number, SeedBaselines>,
  split: SplitFigures,
): SeedsJson {
  const arms = Object.fromEntries(ARMS.map(({ arm }) => [arm, runs.map((r) => armEntry(r, arm)!)])) as Record<
    Arm,
    ArmEntry[]
  >;
  const baselineEntries = Object.fromEntries(
    BASELINES.map(({ baseline }) => [
      baseline,
      runs.map((r): BaselineEntry => {
        const { seed, candidate, instances, families, by_family } = baselines.get(r.seed)![baseline];
        return { seed, candidate, instances, families, by_family };
      }),
    ]),
  ) as Record<Baseline, BaselineEntry[]>;
  return {
    format: SEEDS_FORMAT,
    split,
    arms,
    baselines: baselineEntries,
    paired: Object.fromEntries(PAIRS.map((p) => [p, paired(runs, baselines, p)])) as Record<
      Pair,
      PairedDifference
    >,
  };
}

const pct = (x: number | undefined) => (x === undefined ? "    –" : `${(100 * x).toFixed(1).padStart(5)}%`);
const points = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)}`;
const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const count = (c: Count) => `${c.sequences} seq / ${c.tokens} tok`;

/** The bench's printed tables, paired tests and the two effects. */
export function seedsText(result: SeedsJson, runs: readonly SeedRun[]): string {
  const lines: string[] = [];
  const first = result.arms.rl[0];
  const n = Object.keys(first?.instances ?? {}).find((k) => /^pass@\d+$/.test(k) && k !== "pass@1");
  const s = result.split;
  lines.push(
    `split (${s.mode} mode, ${s.evaluated} split, over the seeds' held-out draws): at least ${s.heldout_tasks} held-out tasks per seed, ` +
      `at most ${s.max_holes_per_theorem} holes per theorem; held-out-family statement shapes that occur in training: ${s.family_shapes_in_training}` +
      (s.family_shapes_in_training === 0
        ? " (none: the families are new)"
        : " (NOT ZERO: held-out families resemble training)"),
  );
  lines.push(
    `held-out pass@1 (greedy)${n ? ` and ${n} (sampled)` : ""} per seed, ${s.evaluated} split: instances ` +
      `(${first?.instances.tasks ?? "?"} tasks in seed ${first?.seed ?? "?"}), families (${first?.families.tasks ?? "?"})`,
  );
  for (const { arm, label } of ARMS) {
    lines.push(`${label}:`);
    for (const e of result.arms[arm])
      lines.push(
        `  seed ${String(e.seed).padEnd(3)} instances ${pct(e.instances["pass@1"])}${n ? ` (${n} ${pct(e.instances[n as `pass@${number}`])})` : ""}` +
          `   families ${pct(e.families["pass@1"])}${n ? ` (${n} ${pct(e.families[n as `pass@${number}`])})` : ""}` +
          `   generated ${count(e.generated)}, trained ${count(e.trained)}`,
      );
    const m = (set: "instances" | "families") => mean(result.arms[arm].map((e) => e[set]["pass@1"]));
    lines.push(`  mean     instances ${pct(m("instances"))}   families ${pct(m("families"))}`);
  }
  for (const { baseline, label } of BASELINES) {
    lines.push(`${label}:`);
    for (const e of result.baselines[baseline])
      lines.push(
        `  seed ${String(e.seed).padEnd(3)} instances ${pct(e.instances["pass@1"])}   families ${pct(e.families["pass@1"])}   (${e.candidate})`,
      );
  }
  const smallest = 2 / 2 ** runs.length;
  for (const pair of PAIRS) {
    const d = result.paired[pair];
    const name = PAIR_NAMES[pair];
    const t = d.tasks;
    lines.push(
      `held-out instances, RL − ${name}: per seed ${result.arms.rl.map((e, k) => points(e.instances["pass@1"] - opponentOf(result, pair, k))).join(", ")} points; ` +
        `mean ${points(d.mean)} points, sign-flip p = ${d.p.toFixed(3)} (smallest possible with ${runs.length} seeds: ${smallest.toFixed(3)}); ` +
        `per task over the seeds: RL only ${t.first_only}, ${name} only ${t.second_only}, both ${t.both}, neither ${t.neither} (sign test p = ${t.p.toFixed(3)})`,
    );
  }
  const meanOf = (arm: Arm) => mean(result.arms[arm].map((e) => e.instances["pass@1"]));
  const { verifier, algorithm } = effects({
    rl: meanOf("rl"),
    rft: meanOf("rft"),
    sft: meanOf("sft"),
    sft_data: meanOf("sft_data"),
  });
  lines.push(`what the verifier adds (mean held-out-instance pass@1): ${verifier.join("; ")}`);
  lines.push(
    `what the algorithm adds (RL against expert iteration, the same generation and verification): ${algorithm.join("; ")}`,
  );
  return lines.join("\n");
}

function opponentOf(result: SeedsJson, pair: Pair, k: number): number {
  const other = pair.slice(3);
  if (other === "portfolio") return result.baselines.portfolio[k]!.instances["pass@1"];
  return result.arms[other as Arm][k]!.instances["pass@1"];
}

/** Per family, the arms' pass@1 over seeds and RL's most frequent accepted proofs, for the terminal. */
export function familiesText(result: SeedsJson, shown = 3): string {
  const names = [...new Set(result.arms.rl.flatMap((e) => Object.keys(e.by_family)))].sort();
  const lines = [
    `per family, mean pass@1 over seeds (RL / RFT / SFT / SFT+portfolio / portfolio) and RL's accepted proofs:`,
  ];
  for (const name of names) {
    const of = (entries: readonly { by_family: Record<string, { "pass@1": number }> }[]) =>
      pct(mean(entries.flatMap((e) => (e.by_family[name] ? [e.by_family[name]["pass@1"]] : []))));
    const proofs = new Map<string, number>();
    for (const e of result.arms.rl)
      for (const p of e.by_family[name]?.proofs ?? [])
        proofs.set(p.proof, (proofs.get(p.proof) ?? 0) + p.count);
    const top = [...proofs].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    lines.push(
      `  ${name}: ${of(result.arms.rl)} / ${of(result.arms.rft)} / ${of(result.arms.sft)} / ${of(result.arms.sft_data)} / ${of(result.baselines.portfolio)}; ` +
        (top.length
          ? `${top.length} distinct: ${top
              .slice(0, shown)
              .map(([p, c]) => `${JSON.stringify(p)} ×${c}`)
              .join(", ")}${top.length > shown ? ", …" : ""}`
          : "none accepted"),
    );
  }
  return lines.join("\n");
}
