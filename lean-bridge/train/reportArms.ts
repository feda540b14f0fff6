/**
 * The report's sections on the compute-matched arms and on what was learned per family: what each arm spent
 * (eval.json `compute`: sequences and tokens generated, its evaluation's included, and trained), the two effects
 * apart (what the verifier adds: RL and expert iteration against SFT; what the algorithm adds: RL against expert
 * iteration), and per family pass@1, pass@k and the distinct proofs Lean accepted with how often each occurred
 * (`by_family`). bench/seedsReport.ts prints the same effects over seeds.
 */
import { escapeXml } from "../charts/svgCharts";

const esc = escapeXml;
const pct = (x: number | undefined) => (x !== undefined ? `${(100 * x).toFixed(1)}%` : "–");
const points = (x: number) => `${x >= 0 ? "+" : ""}${(100 * x).toFixed(1)} points`;

/** Sequences and their tokens. */
export interface Count {
  sequences: number;
  tokens: number;
}

/** What an arm spent (eval.json `compute`, trainer/fim_rlvr/step/compute.py). */
export interface ArmCompute {
  optimizer_steps?: number;
  verifier_calls?: number;
  generated?: Count;
  trained?: Count;
  evaluation?: Count;
}

/** One family's figures at one stage (eval.json `by_family`). */
export interface FamilyEntry {
  pass_at_1?: number;
  tasks?: number;
  proofs?: { proof: string; count: number }[];
  [passAtK: string]: unknown;
}

/** The fields of one eval.json stage read here. */
export interface ArmStage {
  pass_at_1: number;
  tasks: number;
  samples?: number;
  compute?: ArmCompute;
  by_family?: Record<string, FamilyEntry>;
}

/** The arms in the report's order, with their eval.json stage. */
export const ARM_STAGES = [
  { key: "rl", stage: "after", label: "RL" },
  { key: "rft", stage: "baseline-rft", label: "expert iteration (RFT)" },
  { key: "sft", stage: "baseline-sft", label: "SFT (compute-matched)" },
  { key: "sft_data", stage: "baseline-sft_data", label: "SFT + portfolio proofs (data-matched)" },
] as const;
export type ArmKey = (typeof ARM_STAGES)[number]["key"];

/**
 * The two effects apart, from each arm's score (any measure: held-out pass@1, a mean over seeds): what the verifier
 * adds (RL and expert iteration, which practise with the verifier on the open goals, against SFT on the proofs, and
 * against SFT given the portfolio's proofs of the same goals) and what the algorithm adds (RL against expert
 * iteration, which spends the same generation and verification). Only the differences both arms of which are measured.
 */
export function effects(score: Partial<Record<ArmKey, number>>): { verifier: string[]; algorithm: string[] } {
  const diff = (a: ArmKey, b: ArmKey, label: string) =>
    score[a] !== undefined && score[b] !== undefined ? [`${label} ${points(score[a] - score[b])}`] : [];
  return {
    verifier: [
      ...diff("rl", "sft", "RL − SFT"),
      ...diff("rft", "sft", "RFT − SFT"),
      ...diff("rl", "sft_data", "RL − SFT+portfolio"),
      ...diff("rft", "sft_data", "RFT − SFT+portfolio"),
    ],
    algorithm: diff("rl", "rft", "RL − RFT"),
  };
}

function table(head: string[], rows: string[][]): string {
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

const count = (c: Count | undefined) =>
  c ? `${c.sequences.toLocaleString("en")} seq / ${c.tokens.toLocaleString("en")} tok` : "–";

/** The arms' spending and the two effects; empty when the run measured no arm beside RL. */
export function armsSection(evals: Record<string, ArmStage | null | undefined>): string {
  const arms = ARM_STAGES.filter(({ stage }) => evals[stage]?.compute);
  if (arms.length < 2) return "";
  const rows = arms.map(({ label, stage }) => {
    const e = evals[stage]!;
    const c = e.compute!;
    return [
      esc(label),
      `<b>${pct(e.pass_at_1)}</b>`,
      count(c.generated),
      count(c.evaluation),
      count(c.trained),
      String(c.optimizer_steps ?? "–"),
      String(c.verifier_calls ?? "–"),
    ];
  });
  const score = Object.fromEntries(arms.map(({ key, stage }) => [key, evals[stage]!.pass_at_1]));
  const { verifier, algorithm } = effects(score);
  return (
    `<h2>Compute-matched arms</h2>` +
    table(
      [
        "arm",
        "held-out pass@1",
        "generated (evaluation included)",
        "of which evaluation",
        "trained (forward + backward)",
        "optimiser steps",
        "verifier calls",
      ],
      rows,
    ) +
    `<p>What the verifier adds (arms that practised with the verifier, against SFT): ${esc(verifier.join("; ") || "–")}.<br>` +
    `What the algorithm adds (RL against expert iteration, the same generation and verification): ${esc(algorithm.join("; ") || "–")}.</p>`
  );
}

/** Per family: each arm's pass@1 (and pass@k) and the distinct proofs Lean accepted, most frequent first. */
export function familySection(evals: Record<string, ArmStage | null | undefined>, shown = 5): string {
  const arms = ARM_STAGES.filter(({ stage }) => evals[stage]?.by_family);
  if (!arms.length) return "";
  const families = [...new Set(arms.flatMap(({ stage }) => Object.keys(evals[stage]!.by_family!)))].sort();
  const k = evals[arms[0]!.stage]!.samples;
  const cell = (f: FamilyEntry | undefined) => {
    if (!f) return "–";
    const atK = k ? f[`pass_at_${k}`] : undefined;
    return `${pct(f.pass_at_1)}${typeof atK === "number" ? ` (pass@${k} ${pct(atK)})` : ""}`;
  };
  const proofs = (f: FamilyEntry | undefined) => {
    const list = f?.proofs ?? [];
    if (!list.length) return "none";
    const head = list
      .slice(0, shown)
      .map((p) => `<code>${esc(p.proof)}</code> ×${p.count}`)
      .join("<br>");
    return list.length > shown ? `${head}<br>(+${list.length - shown} more)` : head;
  };
  const rows = families.map((name) => {
    const entries = arms.map(({ stage }) => evals[stage]!.by_family![name]);
    const tasks = entries.find((e) => e?.tasks !== undefined)?.tasks;
    return [
      `<code>${esc(name)}</code>`,
      String(tasks ?? "–"),
      ...entries.map(cell),
      ...entries.map((e) => `<span style="text-align:left;display:block">${proofs(e)}</span>`),
    ];
  });
  return (
    `<h2>What was learned, per family</h2><p>Held-out pass@1 (greedy)${k ? ` and pass@${k}` : ""} per family, and the ` +
    `distinct proofs Lean accepted (greedy and sampled completions together) with how many completions each was.</p>` +
    table(
      [
        "family",
        "tasks",
        ...arms.map(({ label }) => `${label}`),
        ...arms.map(({ label }) => `accepted proofs: ${label}`),
      ],
      rows,
    )
  );
}
