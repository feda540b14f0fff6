/**
 * Reading results.jsonl back, for `--resume` and the summary: whole lines only (a line torn by a kill is
 * dropped), and only tasks all of whose samples reached their final turn (the loop appends a task in one write,
 * so a torn write leaves at most one task short). `--resume` must run with the settings the file was written with.
 */
import { existsSync, readFileSync } from "node:fs";
import { writeFileAtomic } from "../util/atomicWrite";
import type { EvalIdentity, ResultLine } from "./records";

export interface ReadResults {
  lines: ResultLine[];
  /** Lines that did not parse (a torn last write), dropped. */
  torn: number;
  /** Task ids with all n samples final. */
  complete: Set<string>;
}

function isLine(value: unknown): value is ResultLine {
  const v = value as Partial<ResultLine> | null;
  return (
    typeof v === "object" &&
    v !== null &&
    typeof v.task_id === "string" &&
    typeof v.sample === "number" &&
    typeof v.final === "boolean" &&
    typeof v.outcome === "string" &&
    typeof v.run === "object"
  );
}

export function readResults(path: string, n: number): ReadResults {
  const lines: ResultLine[] = [];
  let torn = 0;
  if (existsSync(path)) {
    for (const text of readFileSync(path, "utf8").split("\n")) {
      if (!text.trim()) continue;
      try {
        const parsed: unknown = JSON.parse(text);
        if (isLine(parsed)) lines.push(parsed);
        else torn++;
      } catch {
        torn++;
      }
    }
  }
  const finals = new Map<string, Set<number>>();
  for (const line of lines) {
    if (!line.final) continue;
    const samples = finals.get(line.task_id) ?? new Set<number>();
    samples.add(line.sample);
    finals.set(line.task_id, samples);
  }
  const complete = new Set([...finals].filter(([, s]) => s.size >= n).map(([id]) => id));
  return { lines: lines.filter((l) => complete.has(l.task_id)), torn, complete };
}

/** Rewrites results.jsonl with only whole tasks, when reading dropped anything. */
export function compactResults(path: string, read: ReadResults, linesOnDisk: number): void {
  if (read.torn === 0 && read.lines.length === linesOnDisk) return;
  writeFileAtomic(path, read.lines.map((l) => JSON.stringify(l) + "\n").join(""));
}

/** The settings that decide the figures, as one comparable text (labels and digests that may vary left out). */
function settingsKey(run: EvalIdentity): string {
  return JSON.stringify({
    model: run.model.spec,
    prompt: run.prompt,
    sampling: run.sampling,
    seed: run.seed,
    repair: run.repair,
    verifier: { kind: run.verifier.kind, version: run.verifier.version },
    dataset: run.dataset.sha256,
    selection: run.selection,
  });
}

/** Why results written under `recorded` cannot be continued under `now`, or undefined when they can. */
export function resumeMismatch(recorded: EvalIdentity, now: EvalIdentity): string | undefined {
  if (settingsKey(recorded) === settingsKey(now)) return undefined;
  const differ: string[] = [];
  const a = JSON.parse(settingsKey(recorded)) as Record<string, unknown>;
  const b = JSON.parse(settingsKey(now)) as Record<string, unknown>;
  for (const key of Object.keys(a)) if (JSON.stringify(a[key]) !== JSON.stringify(b[key])) differ.push(key);
  return differ.join(", ");
}

export function countLines(path: string): number {
  if (!existsSync(path)) return 0;
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim()).length;
}
