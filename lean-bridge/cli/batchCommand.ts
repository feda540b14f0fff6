/** `fim-rlvr verify-batch`: many candidates, one verdict line per input line, in order. */
import { resolve } from "node:path";
import { readLineBytes } from "../dataset/jsonl";
import { AtomicLineWriter } from "../util/atomicWrite";
import type { Verdict } from "../verify/verdict";
import {
  parseCandidateLine,
  jsonLines,
  parseBatchLine,
  resolveInput,
  tasksById,
  type BatchLine,
  type TaskLookup,
} from "./batchInput";
import { type CliCommand, stringOption } from "./command";
import { stopOnInterrupt } from "./interrupt";
import { SERVER_OPTIONS, WORKERS_OPTION, openPool, requireProject } from "./pool";
import { UsageError, parseCount } from "./usage";
import { rewardMode, verdictJson } from "./verdictOutput";

/** Verdict kinds in the order the tally lists them (kinds added later come last). */
const KIND_ORDER = ["proved", "failed", "incomplete", "rejected", "timeout", "crashed"];

/** The running tally: every line written is counted, bad lines (rejected as bad tasks) included. */
export class Tally {
  private readonly counts = new Map<string, number>();
  done = 0;
  badLines = 0;

  add(kind: string, badLine = false): void {
    this.done++;
    if (badLine) this.badLines++;
    this.counts.set(kind, (this.counts.get(kind) ?? 0) + 1);
  }

  summary(): string {
    if (this.done === 0) return "nothing checked yet";
    const order = (k: string) => {
      const i = KIND_ORDER.indexOf(k);
      return i === -1 ? KIND_ORDER.length : i;
    };
    const sorted = [...this.counts].sort(([a], [b]) => order(a) - order(b));
    const parts = sorted.map(([k, n]) =>
      k === "rejected" && this.badLines > 0
        ? `${k} ${n} (${this.badLines} bad line${this.badLines > 1 ? "s" : ""})`
        : `${k} ${n}`,
    );
    return parts.join(", ");
  }
}

/** Lines checked together: enough to keep every worker busy, few enough that a huge input is never held whole. */
const WINDOW = 4096;

/** The input's lines, parsed, a window at a time (a dataset of a million tasks streams through). */
async function* lineWindows(source: string, tasks: TaskLookup | undefined): AsyncGenerator<BatchLine[]> {
  let window: BatchLine[] = [];
  for await (const line of jsonLines(source)) {
    window.push(tasks ? parseCandidateLine(line, tasks) : parseBatchLine(line));
    if (window.length >= WINDOW) {
      yield window;
      window = [];
    }
  }
  if (window.length) yield window;
}

/** How many lines a run will write (the non-blank lines of its input), counted without parsing them. */
function countLines(source: string): number {
  let n = 0;
  for (const [bytes, start, end] of readLineBytes(source))
    if (bytes.toString("utf8", start, end).trim() !== "") n++;
  return n;
}

export const verifyBatchCommand: CliCommand = {
  name: "verify-batch",
  summary: "Check many candidates (JSONL in, one verdict per line out)",
  synopsis: "--project DIR --input FILE|DATASET [--candidates FILE] --out VERDICTS.jsonl [options]",
  description: [
    'Reads --input line by line. A line is either a candidate {"file","hole","candidate"} or a dataset task',
    '(a tasks.jsonl line: its "range" is the hole and its "middle" the candidate, i.e. re-verify a dataset).',
    'With --candidates FILE, --input is a dataset (its folder or tasks.jsonl) and each line {"id","candidate"}',
    "of FILE is checked in the hole of the task with that id (score model outputs; several per id are fine).",
    'Writes one line per input line, in order, with its fields and a "verdict" added; a malformed line gets a',
    "rejected/bad-task verdict. The output appears atomically when the batch is done. Progress and the tally",
    "(which counts every line written) go to stderr. Exit 0 when done, 2 for bad usage, 130 on Ctrl-C.",
  ].join("\n"),
  options: {
    project: { type: "string", value: "DIR", help: "Root of the Lean project the files are relative to." },
    input: {
      type: "string",
      value: "FILE|DATASET",
      help: "Candidate lines or dataset task lines (a dataset folder means its tasks.jsonl).",
    },
    candidates: {
      type: "string",
      value: "FILE",
      help: 'Lines {"id","candidate"} scored against the tasks of --input by id.',
    },
    out: { type: "string", value: "VERDICTS.jsonl", help: "Where to write the verdict lines." },
    workers: WORKERS_OPTION,
    ...SERVER_OPTIONS,
  },
  examples: [
    "fim-rlvr verify-batch --project lean-env --input out/dataset --out verdicts.jsonl --simulator",
    "fim-rlvr verify-batch --project lean-env --input out/dataset --candidates samples.jsonl --out scored.jsonl",
  ],
  async run({ values }) {
    const projectRoot = requireProject(stringOption(values, "project"));
    const input = stringOption(values, "input");
    const out = stringOption(values, "out");
    if (!input)
      throw new UsageError("--input FILE is required: candidate lines, or a dataset (folder or tasks.jsonl)");
    if (!out) throw new UsageError("--out VERDICTS.jsonl is required");
    const workers = parseCount("--workers", stringOption(values, "workers"), 4, 1);
    const mode = rewardMode(stringOption(values, "reward"));
    // Usage errors in the input (a --candidates input that is no dataset) come before the verifier starts.
    const candidates = stringOption(values, "candidates");
    const inputPath = resolveInput(input);
    const tasks = candidates === undefined ? undefined : tasksById(inputPath);
    const source = candidates === undefined ? inputPath : resolveInput(candidates);
    const total = countLines(source);
    const windows = lineWindows(source, tasks);
    const pool = await openPool(projectRoot, values, workers);
    const writer = new AtomicLineWriter(resolve(out));
    const guard = stopOnInterrupt("verify-batch", pool, () => writer.abort());
    const tally = new Tally();
    const started = performance.now();
    let lastReport = 0;
    const report = (force = false) => {
      const now = performance.now();
      if (!force && now - lastReport < 1000) return;
      lastReport = now;
      const rate = tally.done / Math.max(0.001, (now - started) / 1000);
      process.stderr.write(
        `verify-batch: ${tally.done}/${total} checked (${rate.toFixed(1)}/s) — ${tally.summary()} — verifier: ${pool.identity.label}\n`,
      );
    };
    try {
      process.stderr.write(`verify-batch: ${total} to check — verifier: ${pool.identity.label}\n`);
      let lineNumber = 0;
      for await (const lines of windows) {
        const jobs = lines.flatMap((p, line) =>
          p.kind === "ok" ? [{ line, task: p.task, candidate: p.candidate }] : [],
        );
        for (const p of lines) if (p.kind === "error") tally.add("rejected", true);
        const verdicts = await pool.verifyMany(jobs, (_d, _t, verdict) => {
          if (guard.interrupted) return; // Checks cut short by Ctrl-C are not results.
          tally.add(verdict.kind);
          report();
        });
        if (guard.interrupted) return 130;
        const byLine = new Map(jobs.map((j, i) => [j.line, verdicts[i]!]));
        lines.forEach((p, k) => {
          const verdict: Verdict = byLine.get(k) ?? {
            kind: "rejected",
            rule: "bad-task",
            reason: `line ${lineNumber + k + 1}: ${p.kind === "error" ? p.message : "not checked"}`,
            elapsedMs: 0,
            verifier: pool.identity,
            diagnostics: [],
          };
          writer.line(
            JSON.stringify({
              ...p.fields,
              verdict: verdictJson(verdict, mode),
            }),
          );
        });
        lineNumber += lines.length;
      }
      writer.commit();
      report(true);
      return 0;
    } catch (error) {
      writer.abort();
      throw error;
    } finally {
      guard.release();
      await pool.stop();
    }
  },
};
