/**
 * summary.json from results.jsonl: unbiased pass@k overall, per hole kind, per file and for novel against
 * memorised tasks; the outcome and verdict mix; model latency and tokens; the turn that proved each repaired
 * sample. Only final turns count for pass@k, and infrastructure outcomes are left out of n (never misses).
 */
import { OUTCOMES, type Outcome } from "./outcomes";
import { meanPassAtK, type TaskCounts } from "./passAtK";
import type { EvalIdentity, EvalSummary, GroupFigures, ResultLine } from "./records";

function emptyOutcomes(): Record<Outcome, number> {
  return Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as Record<Outcome, number>;
}

/** The value below which `q` of the sorted values lie (nearest rank). */
export function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank]!;
}

function figures(lines: readonly ResultLine[], ks: readonly number[]): GroupFigures {
  const perTask = new Map<string, TaskCounts>();
  const outcomes = emptyOutcomes();
  let counted = 0;
  for (const line of lines) {
    outcomes[line.outcome]++;
    const task = perTask.get(line.task_id) ?? { n: 0, c: 0 };
    perTask.set(line.task_id, task);
    if (line.outcome === "infrastructure") continue;
    counted++;
    task.n++;
    if (line.outcome === "proved") task.c++;
  }
  const tasks = [...perTask.values()];
  return {
    tasks: tasks.length,
    samples: lines.length,
    counted,
    outcomes,
    passAtK: Object.fromEntries(ks.map((k) => [String(k), meanPassAtK(tasks, k)])),
  };
}

function grouped(
  lines: readonly ResultLine[],
  key: (line: ResultLine) => string,
  ks: readonly number[],
): Record<string, GroupFigures> {
  const groups = new Map<string, ResultLine[]>();
  for (const line of lines) {
    const name = key(line);
    const group = groups.get(name) ?? [];
    group.push(line);
    groups.set(name, group);
  }
  return Object.fromEntries(
    [...groups].sort(([a], [b]) => a.localeCompare(b)).map(([k, g]) => [k, figures(g, ks)]),
  );
}

export function noveltyGroup(novel: boolean | null): "novel" | "memorised" | "unknown" {
  return novel === true ? "novel" : novel === false ? "memorised" : "unknown";
}

export function summarise(
  all: readonly ResultLine[],
  options: {
    run: EvalIdentity;
    ks: readonly number[];
    selected: number;
    partial: boolean;
    wallSeconds: number;
  },
): EvalSummary {
  const finals = all.filter((l) => l.final);
  const verdicts: Record<string, number> = {};
  const backendErrors: Record<string, number> = {};
  const provedAtTurn: Record<string, number> = {};
  for (const line of finals) {
    const name = line.verdict?.kind ?? "not verified";
    verdicts[name] = (verdicts[name] ?? 0) + 1;
    if (line.backendError)
      backendErrors[line.backendError.cause] = (backendErrors[line.backendError.cause] ?? 0) + 1;
    if (line.outcome === "proved" && options.run.repair > 0)
      provedAtTurn[String(line.turn)] = (provedAtTurn[String(line.turn)] ?? 0) + 1;
  }
  const latencies = all
    .filter((l) => !l.backendError)
    .map((l) => l.latency_ms)
    .sort((a, b) => a - b);
  const verifyTimes = all
    .flatMap((l) => (l.verdict && !l.verdict.cached ? [l.verdict.elapsedMs] : []))
    .sort((a, b) => a - b);
  let prompt = 0;
  let completion = 0;
  let known = 0;
  for (const line of all) {
    if (line.prompt_tokens === null && line.completion_tokens === null) continue;
    known++;
    prompt += line.prompt_tokens ?? 0;
    completion += line.completion_tokens ?? 0;
  }
  const done = new Set(finals.map((l) => l.task_id)).size;
  return {
    format: "fim-rlvr-eval/1",
    run: options.run,
    ks: [...options.ks],
    tasks: { selected: options.selected, done },
    partial: options.partial,
    overall: figures(finals, options.ks),
    byKind: grouped(finals, (l) => l.kind, options.ks),
    byFile: grouped(finals, (l) => l.file, options.ks),
    byNovelty: grouped(finals, (l) => noveltyGroup(l.novel), options.ks),
    byHeldOut: finals.some((l) => l.held_out)
      ? grouped(finals, (l) => l.held_out ?? "unknown", options.ks)
      : {},
    verdicts,
    latencyMs: {
      p50: percentile(latencies, 0.5),
      p95: percentile(latencies, 0.95),
      mean: latencies.length
        ? Math.round((latencies.reduce((a, b) => a + b, 0) / latencies.length) * 10) / 10
        : null,
    },
    verifyMs: { p50: percentile(verifyTimes, 0.5), p95: percentile(verifyTimes, 0.95) },
    tokens: { prompt, completion, known },
    provedAtTurn,
    backendErrors,
    wallSeconds: Math.round(options.wallSeconds * 10) / 10,
    writtenAt: new Date().toISOString(),
  };
}
