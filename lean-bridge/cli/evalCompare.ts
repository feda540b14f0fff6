/** `fim-rlvr eval --compare A B [...] [--out FILE]`: two or more evaluations side by side (text, and HTML with --out). */
import { existsSync, readFileSync, statSync } from "node:fs";
import { basename, join, resolve } from "node:path";
import type { EvalSummary } from "../eval/records";
import { comparabilityNotes, evalReportHtml, type NamedSummary } from "../eval/report";
import { summaryText } from "../eval/summaryText";
import { writeFileAtomic } from "../util/atomicWrite";
import { unreadableReason } from "../util/unreadable";
import { UsageError, requireExisting } from "./usage";

/** An evaluation folder (or its summary.json) read back; a usage error says which argument is not one. */
export function readSummary(path: string): NamedSummary {
  const evaluations = "folders written by `fim-rlvr eval --out`";
  requireExisting(path, evaluations);
  const folder = statSync(path).isDirectory();
  const file = folder ? join(path, "summary.json") : path;
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const why = folder && !existsSync(file) ? "it has no summary.json" : unreadableReason(error);
    throw new UsageError(`${path}: not an evaluation (${why}); give ${evaluations}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new UsageError(
      `${path}: not an evaluation (not JSON: ${error instanceof Error ? error.message : String(error)}); give ${evaluations}`,
    );
  }
  const summary = parsed as Partial<EvalSummary>;
  if (summary.format !== "fim-rlvr-eval/1" || !summary.run || !summary.overall)
    throw new UsageError(`${file} is not an evaluation summary (format fim-rlvr-eval/1)`);
  const name = basename(file === path ? resolve(path, "..") : resolve(path));
  return { name, summary: summary as EvalSummary };
}

export function compareEvaluations(paths: readonly string[], out: string | undefined): number {
  if (paths.length < 2) throw new UsageError("--compare needs two or more evaluation folders");
  const runs = paths.map(readSummary);
  // Two folders of the same name still get distinct columns.
  const seen = new Map<string, number>();
  for (const run of runs) {
    const count = (seen.get(run.name) ?? 0) + 1;
    seen.set(run.name, count);
    if (count > 1) run.name = `${run.name} (${count})`;
  }
  process.stdout.write(runs.map((r, k) => summaryText(r.summary, paths[k]!)).join("\n\n") + "\n");
  const notes = comparabilityNotes(runs);
  if (notes.length)
    process.stderr.write(
      `eval: warning: not like for like: ${notes.join("; ")}; compare evaluations of one dataset, split and verifier with the same -n\n`,
    );
  if (out) {
    writeFileAtomic(resolve(out), evalReportHtml(runs));
    process.stderr.write(`eval: the comparison is in ${resolve(out)}\n`);
  }
  return 0;
}
