/** `fim-rlvr verify` and `fim-rlvr verify-batch`. */
import { createReadStream, existsSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";
import type { Range } from "../protocol/lsp";
import { AtomicLineWriter } from "../util/atomicWrite";
import type { VerifyTask } from "../verify/pool";
import { rewardOf, type RewardMode } from "../verify/rewards";
import type { Verdict } from "../verify/verdict";
import { SERVER_OPTION_SPEC, openPool, requireProject } from "./pool";
import { UsageError, parseHole, parsePositiveInt } from "./usage";

function rewardMode(text: string | undefined): RewardMode {
  if (text === undefined || text === "binary") return "binary";
  if (text === "partial") return "partial";
  throw new UsageError(`--reward must be binary or partial, got "${text}"`);
}

export function verdictJson(verdict: Verdict, mode: RewardMode, candidate: string): Record<string, unknown> {
  const { reward } = rewardOf(verdict, mode, candidate.split("\n").length);
  const { kind, elapsedMs, verifier, diagnostics, ...details } = verdict;
  return {
    kind,
    reward,
    verifier: verifier.label,
    verifierKind: verifier.kind,
    elapsedMs,
    diagnostics,
    ...details,
  };
}

function describe(verdict: Verdict, reward: number): string {
  const head = `${verdict.kind} (reward ${reward}) — verifier: ${verdict.verifier.label}, ${verdict.elapsedMs} ms`;
  const detail =
    verdict.kind === "rejected" || verdict.kind === "crashed" || verdict.kind === "failed"
      ? `\n  ${verdict.reason}`
      : verdict.kind === "incomplete"
        ? `\n  ${verdict.reason}${verdict.goalsLeft ? `, ${verdict.goalsLeft} goal(s) left` : ""}`
        : verdict.kind === "timeout"
          ? `\n  no result within ${verdict.timeoutMs} ms`
          : verdict.kind === "proved" && !verdict.axiomsChecked
            ? "\n  axioms not checked: `#print axioms` needs a name, and this declaration has none"
            : "";
  const diags = verdict.diagnostics
    .filter((d) => d.severity <= 2)
    .map((d) => {
      const where = d.candidateRange
        ? `candidate ${d.candidateRange.start.line}:${d.candidateRange.start.character}`
        : `document ${d.range.start.line}:${d.range.start.character}`;
      return `\n  [${d.severity === 1 ? "error" : "warning"} at ${where}] ${d.message.replace(/\n/g, "\n    ")}`;
    })
    .join("");
  return head + detail + diags;
}

export async function verifyCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...SERVER_OPTION_SPEC,
      project: { type: "string" },
      file: { type: "string" },
      hole: { type: "string" },
      candidate: { type: "string" },
      json: { type: "boolean" },
      reward: { type: "string" },
    },
    strict: true,
  });
  const projectRoot = requireProject(values.project);
  if (!values.file) throw new UsageError("--file REL.lean is required: the file, relative to --project");
  if (!values.hole) throw new UsageError("--hole L:C-L:C is required (0-based line:character, UTF-16)");
  if (values.candidate === undefined)
    throw new UsageError("--candidate TEXT is required: the proof text to put in the hole");
  if (!existsSync(resolve(projectRoot, values.file)))
    throw new UsageError(`--file ${values.file}: no such file in ${projectRoot}`);
  const hole = parseHole(values.hole);
  const mode = rewardMode(values.reward);
  const pool = await openPool(projectRoot, values, 1);
  try {
    const verdict = await pool.verify({ file: values.file, hole }, values.candidate);
    if (verdict.kind === "rejected" && verdict.rule === "bad-task") throw new UsageError(verdict.reason);
    const json = verdictJson(verdict, mode, values.candidate);
    process.stdout.write(
      values.json ? JSON.stringify(json) + "\n" : describe(verdict, json.reward as number) + "\n",
    );
    return 0;
  } finally {
    await pool.stop();
  }
}

function isPosition(value: unknown): value is { line: number; character: number } {
  const v = value as { line?: unknown; character?: unknown } | null;
  return typeof v === "object" && v !== null && Number.isInteger(v.line) && Number.isInteger(v.character);
}

/** An input line's own fields, kept in the output line beside the verdict. */
type LineFields = Record<string, unknown>;

/** Reads one input line; a malformed line becomes a task error instead of stopping the batch. */
export function parseBatchLine(
  line: string,
):
  | { kind: "ok"; task: VerifyTask; candidate: string; fields: LineFields }
  | { kind: "error"; message: string; fields: LineFields } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    return {
      kind: "error",
      message: `not JSON: ${error instanceof Error ? error.message : String(error)}`,
      fields: {},
    };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return { kind: "error", message: "each line must be a JSON object", fields: {} };
  const fields = value as LineFields;
  const v = value as { file?: unknown; hole?: { start?: unknown; end?: unknown }; candidate?: unknown };
  if (typeof v.file !== "string")
    return { kind: "error", message: 'missing "file" (a path relative to --project)', fields };
  if (!v.hole || !isPosition(v.hole.start) || !isPosition(v.hole.end))
    return {
      kind: "error",
      message: 'missing or malformed "hole": {"start":{"line","character"},"end":{…}}',
      fields,
    };
  if (typeof v.candidate !== "string")
    return { kind: "error", message: 'missing "candidate" (a string)', fields };
  return { kind: "ok", task: { file: v.file, hole: v.hole as Range }, candidate: v.candidate, fields };
}

export async function verifyBatchCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...SERVER_OPTION_SPEC,
      project: { type: "string" },
      input: { type: "string" },
      out: { type: "string" },
      workers: { type: "string" },
      reward: { type: "string" },
    },
    strict: true,
  });
  const projectRoot = requireProject(values.project);
  if (!values.input) throw new UsageError("--input CANDIDATES.jsonl is required");
  if (!values.out) throw new UsageError("--out VERDICTS.jsonl is required");
  if (!existsSync(values.input)) throw new UsageError(`--input ${values.input}: no such file`);
  const workers = parsePositiveInt("--workers", values.workers, 4) || 1;
  const mode = rewardMode(values.reward);
  const lines: string[] = [];
  for await (const line of createInterface({
    input: createReadStream(values.input, "utf8"),
    crlfDelay: Infinity,
  }))
    if (line.trim() !== "") lines.push(line);
  const parsed = lines.map(parseBatchLine);
  const pool = await openPool(projectRoot, values, workers);
  const writer = new AtomicLineWriter(resolve(values.out));
  const counts = new Map<string, number>();
  const started = performance.now();
  let lastReport = 0;
  const report = (done: number, force = false) => {
    const now = performance.now();
    if (!force && now - lastReport < 1000) return;
    lastReport = now;
    const rate = done / Math.max(0.001, (now - started) / 1000);
    const summary = [...counts].map(([k, n]) => `${k} ${n}`).join(", ") || "nothing checked yet";
    process.stderr.write(
      `verify-batch: ${done}/${parsed.length} checked (${rate.toFixed(1)}/s) — ${summary} — verifier: ${pool.identity.label}\n`,
    );
  };
  try {
    const jobs = parsed.flatMap((p, line) =>
      p.kind === "ok" ? [{ line, task: p.task, candidate: p.candidate }] : [],
    );
    let done = parsed.length - jobs.length;
    const verdicts = await pool.verifyMany(jobs, (_d, _t, verdict) => {
      done++;
      counts.set(verdict.kind, (counts.get(verdict.kind) ?? 0) + 1);
      report(done);
    });
    const byLine = new Map(jobs.map((j, i) => [j.line, verdicts[i]!]));
    parsed.forEach((p, k) => {
      const verdict: Verdict = byLine.get(k) ?? {
        kind: "rejected",
        rule: "bad-task",
        reason: `line ${k + 1}: ${p.kind === "error" ? p.message : "not checked"}`,
        elapsedMs: 0,
        verifier: pool.identity,
        diagnostics: [],
      };
      writer.line(
        JSON.stringify({
          ...p.fields,
          verdict: verdictJson(verdict, mode, p.kind === "ok" ? p.candidate : ""),
        }),
      );
    });
    writer.commit();
    report(parsed.length, true);
    return 0;
  } catch (error) {
    writer.abort();
    throw error;
  } finally {
    await pool.stop();
  }
}
