/** The `filter` section of a filtered dataset's report.json, and its README.md (the dataset card). */
import { basename } from "node:path";
import { cardFrontMatter, type CardConfig } from "../dataset/cardSchema";
import type { KeepBand } from "./band";
import type { DropReason } from "./passRates";

export interface FilterReport {
  /** The dataset the tasks came from (absolute path) and its SHA-256 (as `eval` records it). */
  source: string;
  sourceSha256: string;
  /** The model that was sampled (its spec as given, never a key), its backend and name. */
  model: { spec: string; backend: string; name: string };
  sampling: { n: number; temperature: number; topP: number; maxNewTokens: number; seed: number };
  /** Which verifier judged the samples (the simulator is named as such). */
  verifier: string;
  keep: KeepBand;
  selection: { split: string; kinds: string[] };
  tasks: {
    /** Tasks of the source dataset. */
    source: number;
    /** Tasks the selection (split, kinds, limit) left out: not sampled, not in the new dataset. */
    notSelected: number;
    evaluated: number;
    kept: number;
    dropped: Record<DropReason, number>;
  };
  /** How many evaluated tasks had each pass rate. */
  histogram: [string, number][];
  timeMs: number;
}

/** The card; `configs`: the files the filtered dataset holds, with its source's row fields (an export's or an import's). */
export function filterCard(report: FilterReport, out: string, configs: readonly CardConfig[]): string {
  const t = report.tasks;
  const histogram = report.histogram.map(([rate, n]) => `| ${rate} | ${n} |`).join("\n") || "| (none) | 0 |";
  // The front matter 🤗 datasets reads, as an export's card has; the card names folders, never machine paths.
  return `${cardFrontMatter([], "FIM-RLVR: filtered by pass rate", configs)}
# FIM-RLVR dataset: filtered by pass rate

Made by \`fim-rlvr filter\` from \`${basename(report.source)}\`: every selected task was sampled ${report.sampling.n} times
from **${report.model.spec}** (temperature ${report.sampling.temperature}, top-p ${report.sampling.topP}, seed
${report.sampling.seed}), each sample verified by **${report.verifier}**, and a task was kept when its pass rate
(proved samples over samples, infrastructure failures left out) lies in **${report.keep.low}–${report.keep.high}**,
both ends included: tasks the model always or never proves teach a group-relative RL algorithm nothing.

- Source tasks: ${t.source} (${t.notSelected} outside the selection: split ${report.selection.split}, kinds ${report.selection.kinds.join(", ")})
- Evaluated: ${t.evaluated}; kept: ${t.kept}
- Dropped: ${t.dropped["too-easy"]} too easy (rate above ${report.keep.high}), ${t.dropped["too-hard"]} too hard (below ${report.keep.low}), ${t.dropped.unmeasured} unmeasured (every sample an infrastructure failure)

| pass rate | tasks |
| --- | --- |
${histogram}

Each evaluated task's rate is in \`pass_rates.jsonl\`; the samples themselves in \`filter/results.jsonl\`, their
summary in \`filter/summary.json\` and \`filter/report.html\`. Tasks keep their ids and splits; files.jsonl holds
the files of the kept tasks. Train on it with \`fim-rlvr train ${basename(out)}\`.
`;
}
