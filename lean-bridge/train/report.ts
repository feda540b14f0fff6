/**
 * RUN_DIR/report.html: one self-contained page (inline CSS and SVG, no script, nothing fetched) rendered from
 * the files the trainer wrote — metrics.jsonl, samples.jsonl, eval.json, config.json — at the end of a run
 * and when it stops. The verifier is named at the top; a simulator run says "simulator (not Lean)" there.
 */
import { existsSync, readFileSync } from "node:fs";
import { basename, join } from "node:path";
import type { VerifierIdentity } from "../protocol/trainer";
import { writeFileAtomic } from "../util/atomicWrite";
import { PALETTE, escapeXml, lineChart, stackedBar, type Series } from "../charts/svgCharts";
import {
  baselineNote,
  EVAL_STAGES,
  heldOutTable,
  noveltyTable,
  stageLabel,
  timeoutSeries,
  validationSection,
  type EvalStageEntry,
} from "./reportMeasures";
import { armsSection, familySection, type ArmStage } from "./reportArms";

const VERDICT_COLOURS: Record<string, string> = {
  proved: "#54a24b",
  incomplete: "#eeca3b",
  failed: "#e45756",
  rejected: "#b279a2",
  timeout: "#9d755d",
  crashed: "#7f7f7f",
  environment: "#bab0ac",
};

interface MetricsLine {
  step: number;
  [key: string]: unknown;
}

interface SampleLine {
  step?: number;
  task_id?: string;
  kind?: string;
  candidate?: string;
  verdict?: string;
  reward?: number;
}

interface EvalEntry extends EvalStageEntry, ArmStage {
  by_kind: Record<string, number>;
}

function readLines<T>(path: string): T[] {
  if (!existsSync(path)) return [];
  const out: T[] = [];
  for (const line of readFileSync(path, "utf8").split("\n")) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line) as T);
    } catch {
      // A line cut short by a kill: the report shows what is whole.
    }
  }
  return out;
}

function readJson<T>(path: string): T | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as T;
  } catch {
    return undefined;
  }
}

const esc = escapeXml;
const pct = (x: number | undefined) =>
  typeof x === "number" && Number.isFinite(x) ? `${(100 * x).toFixed(1)}%` : "–";
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);

function series(metrics: MetricsLine[], key: string, name: string): Series {
  return {
    name,
    points: metrics.flatMap((m) => (num(m[key]) !== undefined ? [{ x: m.step, y: num(m[key])! }] : [])),
  };
}

function table(head: string[], rows: string[][]): string {
  return `<table><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join("")}</tr></thead><tbody>${rows
    .map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join("")}</tr>`)
    .join("")}</tbody></table>`;
}

/** The page's HTML from the run's files (exported for tests). */
/**
 * config.json as the report's configuration table: every option with the value the run used. An option the user
 * left to the trainer (null in the TrainConfig) shows what the trainer resolved it to (its `resolved` record), so
 * the table never says null where the run had a value; config.json itself keeps the null as given.
 */
export function configTableRows(config: Record<string, unknown>): [string, string][] {
  const resolved = (config.resolved ?? {}) as Record<string, unknown>;
  return Object.entries(config)
    .filter(([key]) => key !== "resolved")
    .map(([key, value]) => {
      if (isRecord(value)) return [key, JSON.stringify(withResolvedFields(value, resolved[key]))];
      if (value !== null) return [key, JSON.stringify(value)];
      const chosen = resolved[key];
      if (chosen === undefined || chosen === null) return [key, "the trainer's default"];
      return [key, `${typeof chosen === "string" ? chosen : JSON.stringify(chosen)} (the trainer's default)`];
    });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** An option holding options (the algorithm's): each null field as the trainer's `resolved` record words it. */
function withResolvedFields(value: Record<string, unknown>, words: unknown): Record<string, unknown> {
  const said = isRecord(words) ? words : {};
  return Object.fromEntries(
    Object.entries(value).map(([field, v]) => [
      field,
      v === null ? (said[field] ?? "the trainer's default") : v,
    ]),
  );
}

export function reportHtml(runDir: string, verifier: VerifierIdentity | undefined): string {
  const metrics = readLines<MetricsLine>(join(runDir, "metrics.jsonl")).filter(
    (m) => typeof m.step === "number",
  );
  const samples = readLines<SampleLine>(join(runDir, "samples.jsonl"));
  const evals = readJson<Record<string, EvalEntry | null>>(join(runDir, "eval.json")) ?? {};
  const config = readJson<Record<string, unknown>>(join(runDir, "config.json")) ?? {};
  const baseline = typeof config.baseline === "string" ? config.baseline : false;
  const simulator = verifier?.kind !== "lean";
  const verifierLabel = verifier ? verifier.label : "unknown verifier";
  const banner = simulator
    ? `<div class="banner sim">Verifier: <b>${esc(verifierLabel.includes("not Lean") ? verifierLabel : `${verifierLabel} — simulator (not Lean)`)}</b>. Rewards came from the Lean server simulator, a test double that accepts only the workspace's own proofs and listed alternatives: they are not evidence about Lean.</div>`
    : `<div class="banner lean">Verifier: <b>${esc(verifierLabel)}</b></div>`;

  const kinds = [
    ...new Set(metrics.flatMap((m) => Object.keys((m.pass_rate_by_kind as Record<string, number>) ?? {}))),
  ];
  const passByKind: Series[] = kinds.map((k) => ({
    name: k,
    points: metrics.flatMap((m) => {
      const v = num((m.pass_rate_by_kind as Record<string, unknown> | undefined)?.[k]);
      return v !== undefined ? [{ x: m.step, y: v }] : [];
    }),
  }));

  const evalStages = EVAL_STAGES.filter((s) => evals[s]);
  const evalKinds = [...new Set(evalStages.flatMap((s) => Object.keys(evals[s]!.by_kind ?? {})))];
  // Stages that evaluated no task measured nothing: a sentence, not a row of 0.0% (an empty test split).
  const measured = evalStages.some((s) => evals[s]!.tasks !== 0);
  const evalTable = !evalStages.length
    ? "<p>No evaluation yet (eval.json is missing).</p>"
    : !measured
      ? `<p>Not measured: the dataset's ${esc(String(config.eval_split ?? "test"))} split has no tasks. Export a workspace with more declarations, or train on a dataset whose test split has tasks.</p>`
      : table(
          ["held-out pass@1", "all", ...evalKinds, "tasks"],
          evalStages.map((s) => [
            esc(stageLabel(s, baseline)),
            `<b>${pct(evals[s]!.pass_at_1)}</b>`,
            ...evalKinds.map((k) => pct(evals[s]!.by_kind?.[k])),
            String(evals[s]!.tasks ?? "–"),
          ]),
        );

  const perKind = new Map<string, { n: number; proved: number; reward: number }>();
  const verdicts: Record<string, number> = {};
  for (const s of samples) {
    const kind = s.kind ?? "?";
    const row = perKind.get(kind) ?? { n: 0, proved: 0, reward: 0 };
    row.n++;
    if (s.verdict === "proved") row.proved++;
    row.reward += num(s.reward) ?? 0;
    perKind.set(kind, row);
    verdicts[s.verdict ?? "?"] = (verdicts[s.verdict ?? "?"] ?? 0) + 1;
  }
  const kindTable = perKind.size
    ? table(
        ["hole kind", "samples", "proved", "pass rate", "mean reward"],
        [...perKind].map(([k, r]) => [
          esc(k),
          String(r.n),
          String(r.proved),
          pct(r.proved / r.n),
          (r.reward / r.n).toFixed(3),
        ]),
      )
    : "<p>No samples yet.</p>";
  const mix = stackedBar(
    Object.entries(verdicts).map(([name, value], k) => ({
      name,
      value,
      colour: VERDICT_COLOURS[name] ?? PALETTE[k % PALETTE.length]!,
    })),
    `Verdicts of ${samples.length} samples`,
  );

  // The last few distinct candidates of each sort (a group often repeats one answer).
  const lastDistinct = (rows: SampleLine[], n: number) => {
    const seen = new Set<string>();
    const out: SampleLine[] = [];
    for (const s of [...rows].reverse()) {
      const key = `${s.task_id}\0${s.candidate}`;
      if (seen.has(key)) continue;
      seen.add(key);
      out.unshift(s);
      if (out.length === n) break;
    }
    return out;
  };
  const proved = lastDistinct(
    samples.filter((s) => s.verdict === "proved"),
    3,
  );
  const others = lastDistinct(
    samples.filter((s) => s.verdict !== "proved"),
    3,
  );
  const sampleBlocks = [...proved, ...others]
    .map(
      (s) =>
        `<div class="sample"><div class="meta"><span class="v" style="background:${VERDICT_COLOURS[s.verdict ?? ""] ?? "#999"}">${esc(s.verdict ?? "?")}</span> step ${esc(String(s.step ?? "?"))} · ${esc(s.kind ?? "?")} · reward ${(num(s.reward) ?? 0).toFixed(2)} · <code>${esc(s.task_id ?? "")}</code></div><pre>${esc(s.candidate ?? "")}</pre></div>`,
    )
    .join("");

  const last = metrics[metrics.length - 1];
  const totalSteps = num(config.steps);
  const timing = metrics.length
    ? (() => {
        const sum = (k: string) => metrics.reduce((n, m) => n + (num(m[k]) ?? 0), 0);
        const verify = sum("verify_seconds");
        const wait = sum("verify_wait_seconds");
        return table(
          ["generation", "verification", "waited on verification", "optimisation", "hidden by overlap"],
          [
            [
              `${sum("gen_seconds").toFixed(1)} s`,
              `${verify.toFixed(1)} s`,
              `${wait.toFixed(1)} s`,
              `${sum("opt_seconds").toFixed(1)} s`,
              verify > 0 ? pct(1 - wait / verify) : "–",
            ],
          ],
        );
      })()
    : "";
  const configRows = configTableRows(config).map(([k, v]) => [`<code>${esc(k)}</code>`, esc(v)]);

  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>FIM-RLVR run ${esc(basename(runDir))}</title>
<style>
body{font-family:system-ui,sans-serif;margin:24px auto;max-width:1180px;padding:0 16px;color:#222}
h1{font-size:22px}h2{font-size:17px;margin-top:28px;border-bottom:1px solid #ddd;padding-bottom:4px}
.banner{padding:12px 16px;border-radius:6px;font-size:15px;margin:12px 0}.sim{background:#fff3cd;border:2px solid #e0a800}
.lean{background:#e6f4ea;border:2px solid #54a24b}.charts{display:flex;flex-wrap:wrap;gap:12px}
table{border-collapse:collapse;margin:8px 0}td,th{border:1px solid #ddd;padding:4px 10px;text-align:right}
th{background:#f5f5f5}td:first-child,th:first-child{text-align:left}
table.config td{text-align:left;max-width:820px;overflow-wrap:anywhere}
.sample{border:1px solid #ddd;border-radius:6px;margin:8px 0}.sample .meta{padding:6px 10px;background:#fafafa;font-size:13px}
.sample pre{margin:0;padding:8px 10px;overflow-x:auto;font-size:13px}.v{color:#fff;border-radius:4px;padding:1px 6px}
</style></head><body>
<h1>FIM-RLVR training run <code>${esc(basename(runDir))}</code></h1>
${banner}
<p>Algorithm <b>${esc(String(config.algorithm ?? "?"))}</b>, model <b>${esc(config.model ? String(config.model) : "embedded tiny model")}</b>; ${metrics.length} step(s) recorded${totalSteps !== undefined ? ` of ${totalSteps}` : ""}${last ? `; last reward ${(num(last.reward_mean) ?? 0).toFixed(3)}, pass rate ${pct(num(last.pass_rate))}` : ""}.</p>
${baselineNote(config)}
<h2>Held-out pass@1</h2>${evalTable}${heldOutTable(evals, baseline)}${noveltyTable(evals, baseline)}
${armsSection(evals)}${familySection(evals)}
<h2>Validation curve</h2>${validationSection(runDir)}
<h2>Training curves</h2><div class="charts">
${lineChart([series(metrics, "reward_mean", "mean reward")], { title: "Reward per step", xLabel: "step" })}
${lineChart([series(metrics, "pass_rate", "all kinds"), ...passByKind], { title: "Pass rate per step", xLabel: "step", yMax: 1 })}
${lineChart([series(metrics, "loss", "loss")], { title: "Loss per step", xLabel: "step" })}
${lineChart([series(metrics, "kl", "KL"), series(metrics, "clip_fraction", "clip fraction")], { title: "KL and clipping", xLabel: "step" })}
${lineChart(timeoutSeries(metrics), { title: "Timeouts per step (share of checks)", xLabel: "step", yMax: 1 })}
</div>
<h2>Per hole kind</h2>${kindTable}
<h2>Verdict mix</h2>${mix}
<h2>Time</h2>${timing || "<p>No steps yet.</p>"}
<h2>Samples (the last proved and the last others)</h2>${sampleBlocks || "<p>No samples yet.</p>"}
<h2>Configuration</h2>${configRows.length ? table(["key", "value"], configRows).replace("<table>", '<table class="config">') : "<p>config.json is missing.</p>"}
<p style="color:#777;font-size:12px">Rendered ${esc(new Date().toISOString())} from metrics.jsonl, samples.jsonl, eval.json and config.json in ${esc(runDir)}.</p>
</body></html>
`;
}

/** Writes RUN_DIR/report.html atomically. */
export function renderReport(runDir: string, path: string, verifier: VerifierIdentity | undefined): void {
  writeFileAtomic(path, reportHtml(runDir, verifier));
}
