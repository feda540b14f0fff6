/**
 * The report's sections on what the model learned and how honestly it was scored: held-out pass@1 on novel and
 * memorised holes (eval.json `by_novelty`) and on held-out instances and families (`by_held_out`), the validation curve (validation.jsonl: greedy pass@1 and the unbiased
 * pass@k every N steps), the timeout rate per step (metrics.jsonl), and what a compute-matched SFT baseline run is.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { escapeXml, lineChart, type Series } from "../charts/svgCharts";

const esc = escapeXml;
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const pct = (x: number | undefined) => (x !== undefined ? `${(100 * x).toFixed(1)}%` : "–");

/** One stage's held-out evaluation as eval.json holds it (the fields read here). */
export interface EvalStageEntry {
  pass_at_1: number;
  tasks: number;
  by_novelty?: Record<string, { pass_at_1?: number; tasks?: number }>;
  /** Per held-out set ("instance", "family"), when the dataset says (tasks.jsonl `heldOut`). */
  by_held_out?: Record<string, { pass_at_1?: number; tasks?: number }>;
}

/** One point of the validation curve (a validation.jsonl line). */
interface ValidationLine {
  step: number;
  tasks?: number;
  greedy_pass_at_1?: number;
  pass_at_k?: Record<string, number>;
  samples?: number;
  temperature?: number;
}

const STAGE_LABELS = {
  before: "before training",
  sft: "after SFT warm start",
  after: "after RL",
  "baseline-sft": "compute-matched SFT baseline",
  "baseline-rft": "compute-matched expert iteration (RFT)",
  "baseline-sft_data": "data-matched SFT (reference + portfolio proofs)",
} as const;
/** eval.json's stages in the order a run measures them: the baseline arms run after RL, from the warm start. */
export const EVAL_STAGES = [
  "before",
  "sft",
  "after",
  "baseline-sft",
  "baseline-sft_data",
  "baseline-rft",
] as const;
const GROUPS = ["novel", "memorised", "unknown"] as const;

/**
 * The held-out table's row label of a stage; a baseline run's last stage is its baseline, not RL (`baseline`: the
 * run's config.baseline, "sft" or "rft"; true for "sft", as older callers say).
 */
export function stageLabel(stage: keyof typeof STAGE_LABELS, baseline: boolean | string): string {
  if (stage !== "after" || !baseline) return STAGE_LABELS[stage];
  return baseline === "rft"
    ? "after the expert-iteration baseline"
    : baseline === "sft_data"
      ? "after the data-matched SFT baseline"
      : "after the SFT baseline";
}

function table(head: string[], rows: string[][]): string {
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

/** Held-out pass@1 per novelty group and stage; empty when the dataset marks no test task. */
export function noveltyTable(
  evals: Record<string, EvalStageEntry | null | undefined>,
  baseline: boolean | string,
): string {
  const stages = EVAL_STAGES.filter((s) => evals[s]?.by_novelty);
  const groups = GROUPS.filter((g) => stages.some((s) => evals[s]!.by_novelty![g]));
  if (!groups.length) return "";
  const tasks = (g: string) =>
    stages.map((s) => num(evals[s]!.by_novelty![g]?.tasks)).find((n) => n !== undefined);
  // A de-duplicated split has no memorised held-out hole: say so, or a reader looks for the missing column.
  const allNovel = groups.length === 1 && groups[0] === "novel";
  return (
    `<p>Novel holes have a middle that occurs nowhere in the training split; memorised ones do. Only the novel ` +
    `holes measure what the model learned rather than recalled.` +
    (allNovel
      ? ` Every held-out hole here is novel (a de-duplicated split): no memorised hole to measure recall on.`
      : "") +
    `</p>` +
    table(
      ["held-out pass@1", ...groups.map((g) => `${g} (${tasks(g) ?? "?"} tasks)`)],
      stages.map((s) => [
        esc(stageLabel(s, baseline)),
        ...groups.map((g) => pct(num(evals[s]!.by_novelty![g]?.pass_at_1))),
      ]),
    )
  );
}

/** Held-out pass@1 on held-out instances and held-out families per stage; empty when the dataset does not say. */
export function heldOutTable(
  evals: Record<string, EvalStageEntry | null | undefined>,
  baseline: boolean | string,
): string {
  const stages = EVAL_STAGES.filter((s) => evals[s]?.by_held_out);
  const sets = (["instance", "family", "unknown"] as const).filter((g) =>
    stages.some((s) => evals[s]!.by_held_out![g]),
  );
  if (!sets.length) return "";
  const tasks = (g: string) =>
    stages.map((s) => num(evals[s]!.by_held_out![g]?.tasks)).find((n) => n !== undefined);
  const label = {
    instance: "held-out instances",
    family: "held-out families",
    unknown: "not marked",
  } as const;
  return (
    `<p>Held-out instances are statements never trained on, of families training has; held-out families are ` +
    `families training never saw (a family: a file's named namespace or section).</p>` +
    table(
      ["held-out pass@1", ...sets.map((g) => `${label[g]} (${tasks(g) ?? "?"} tasks)`)],
      stages.map((s) => [
        esc(stageLabel(s, baseline)),
        ...sets.map((g) => pct(num(evals[s]!.by_held_out![g]?.pass_at_1))),
      ]),
    )
  );
}

function readValidation(runDir: string): ValidationLine[] {
  const path = join(runDir, "validation.jsonl");
  if (!existsSync(path)) return [];
  const out: ValidationLine[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      const parsed = JSON.parse(line) as ValidationLine;
      if (typeof parsed.step === "number") out.push(parsed);
    } catch {
      // A line cut short by a kill: the curve shows what is whole.
    }
  }
  return out;
}

/** The validation curve's chart and a sentence on how it was measured; a note when there is none. */
export function validationSection(runDir: string): string {
  const points = readValidation(runDir);
  if (!points.length)
    return "<p>No validation curve (validation.jsonl is missing: the dataset has no validation split, or <code>validation_every</code> is 0).</p>";
  const last = points[points.length - 1]!;
  const n = num(last.samples) ?? 1;
  const ks = Object.keys(last.pass_at_k ?? {}).sort((a, b) => Number(a) - Number(b));
  const series: Series[] = [
    {
      name: "greedy pass@1",
      points: points.flatMap((p) =>
        num(p.greedy_pass_at_1) !== undefined ? [{ x: p.step, y: p.greedy_pass_at_1! }] : [],
      ),
    },
    ...ks
      .filter((k) => k === "1" || k === String(n))
      .map((k) => ({
        name: `pass@${k} (sampled)`,
        points: points.flatMap((p) => {
          const y = num(p.pass_at_k?.[k]);
          return y !== undefined ? [{ x: p.step, y }] : [];
        }),
      })),
  ];
  return (
    `<p>${esc(String(last.tasks ?? "?"))} validation holes, evaluated every few RL steps: greedy pass@1, and the ` +
    `unbiased pass@k from ${n} samples per hole at the training temperature (${esc(String(last.temperature ?? "?"))}). ` +
    `Step 0 is the model RL starts from. Last point (step ${last.step}): ${ks.map((k) => `pass@${k} ${pct(num(last.pass_at_k?.[k]))}`).join(", ")}.</p>` +
    `<div class="charts">${lineChart(series, { title: "Validation pass@k per step", xLabel: "step", yMax: 1 })}</div>`
  );
}

/** Timeouts per step: the share of checks that timed out, and the share masked out of training. */
export function timeoutSeries(metrics: readonly { step: number; [key: string]: unknown }[]): Series[] {
  const share = (key: string, name: string): Series => ({
    name,
    points: metrics.flatMap((m) => {
      const total = Object.values((m.verdicts as Record<string, unknown> | undefined) ?? {}).reduce<number>(
        (a, v) => a + (num(v) ?? 0),
        0,
      );
      const value =
        key === "timeout_rate" ? num(m.timeout_rate) : total > 0 ? (num(m[key]) ?? 0) / total : undefined;
      return value !== undefined ? [{ x: m.step, y: value }] : [];
    }),
  });
  return [share("timeout_rate", "timed out"), share("masked_samples", "masked out of training")];
}

/** What a baseline run is, said at the top of its report. */
export function baselineNote(config: Record<string, unknown>): string {
  if (config.baseline === "rft")
    return `<p class="banner">This run is the <b>compute-matched expert-iteration (RFT) baseline</b>: after the same warm start as an RL run with the same seed, it sampled and checked what ${esc(String(config.steps ?? "?"))} RL steps would, and fine-tuned on its own verified proofs instead of RL (the same optimiser steps on as many sequences). Compare its held-out pass@1 with the RL run's.</p>`;
  if (config.baseline === "sft_data")
    return `<p class="banner">This run is the <b>data-matched SFT baseline</b>: after the same warm start as an RL run with the same seed, it trained with SFT on as many sequences as ${esc(String(config.steps ?? "?"))} RL steps would, on the reference proofs plus the fixed portfolio's proofs of the training open goals (checked by this run's verifier), instead of RL. Compare its held-out pass@1 with the RL run's.</p>`;
  if (config.baseline !== "sft") return "";
  // Every optimiser pass over a generated batch is another forward and backward pass (TrainConfig.baseline_sequences).
  const passes =
    typeof config.num_iterations === "number" && config.num_iterations > 1 ? config.num_iterations : 1;
  const perStep = `${esc(String(config.batch_size ?? "?"))} × ${esc(String(config.group_size ?? "?"))}${passes > 1 ? `, ${passes} passes each,` : ""}`;
  return `<p class="banner">This run is the <b>compute-matched SFT baseline</b>: after the same warm start as an RL run with the same seed, it trained with SFT on as many sequences as ${esc(String(config.steps ?? "?"))} RL steps of ${perStep} would, instead of RL. Compare its held-out pass@1 with the RL run's: RL added something only where it does better, on novel holes above all.</p>`;
}
