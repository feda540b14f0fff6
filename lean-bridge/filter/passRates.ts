/**
 * Per-task pass rates from an evaluation's results.jsonl lines, and the filter's decision for each task. The
 * rate counts a sample's final turn (as pass@k does); samples whose outcome is `infrastructure` (the model's
 * server or the verifier failed, not the model) are left out of it. A task none of whose samples was measured
 * has no rate and is dropped as `unmeasured`, never counted as too hard.
 */
import type { ResultLine } from "../eval/records";
import type { KeepBand } from "./band";

export type DropReason = "too-easy" | "too-hard" | "unmeasured";

export interface TaskRate {
  task_id: string;
  file: string;
  kind: string;
  split: string;
  /** Samples whose outcome says something about the model. */
  samples: number;
  proved: number;
  /** Samples left out: their outcome was `infrastructure`. */
  infrastructure: number;
  /** proved / samples; null when no sample was measured. */
  pass_rate: number | null;
  kept: boolean;
  /** Why a dropped task was dropped. */
  reason?: DropReason;
}

/** The tasks' rates, in the order their first line appears. */
export function taskRates(lines: Iterable<ResultLine>, band: KeepBand): TaskRate[] {
  const byTask = new Map<string, TaskRate>();
  for (const line of lines) {
    if (!line.final) continue;
    let rate = byTask.get(line.task_id);
    if (!rate) {
      rate = {
        task_id: line.task_id,
        file: line.file,
        kind: line.kind,
        split: line.split,
        samples: 0,
        proved: 0,
        infrastructure: 0,
        pass_rate: null,
        kept: false,
      };
      byTask.set(line.task_id, rate);
    }
    if (line.outcome === "infrastructure") rate.infrastructure++;
    else {
      rate.samples++;
      if (line.outcome === "proved") rate.proved++;
    }
  }
  for (const rate of byTask.values()) {
    if (rate.samples === 0) {
      rate.reason = "unmeasured";
      continue;
    }
    rate.pass_rate = rate.proved / rate.samples;
    if (rate.pass_rate < band.low) rate.reason = "too-hard";
    else if (rate.pass_rate > band.high) rate.reason = "too-easy";
    else rate.kept = true;
  }
  return [...byTask.values()];
}

/** How many tasks had each pass rate (rounded to 3 places), lowest first: the card's histogram. */
export function rateHistogram(rates: readonly TaskRate[]): [string, number][] {
  const counts = new Map<number, number>();
  for (const r of rates)
    if (r.pass_rate !== null) {
      const key = Math.round(r.pass_rate * 1000) / 1000;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  return [...counts].sort((a, b) => a[0] - b[0]).map(([rate, n]) => [rate.toFixed(3), n]);
}
