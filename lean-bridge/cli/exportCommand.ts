/** `fim-rlvr export WORKSPACE --out DIR …`: mine a workspace and write a dataset (see README, "Datasets"). */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { DEFAULT_CONTEXT_CHARS } from "../dataset/context";
import { exportDataset, type ExportFormat, type ExportReport } from "../dataset/exporter";
import { DEFAULT_MAX_MIDDLE_CHARS } from "../dataset/mineWorkspace";
import { DEFAULT_SPLIT_MODE, SPLIT_MODES, type SplitMode } from "../dataset/writeTasks";
import { FIM_TOKEN_SETS, type FimTokens } from "../dataset/views";
import { HOLE_KINDS, type HoleKind } from "../holes/mine";
import type { Verifier } from "../verify/verifier";
import { type CliCommand, type OptionDefs, type ParsedArgs, flagOption, stringOption } from "./command";
import { SERVER_OPTIONS, openPool } from "./pool";
import { UsageError, parseCount } from "./usage";

function parseKinds(text: string | undefined): HoleKind[] {
  if (!text) return [...HOLE_KINDS];
  const kinds = text
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  for (const k of kinds)
    if (!HOLE_KINDS.includes(k as HoleKind))
      throw new UsageError(`--kinds: unknown kind "${k}" (choose from ${HOLE_KINDS.join(",")})`);
  return kinds as HoleKind[];
}

function parseFormats(text: string | undefined): ExportFormat[] {
  const formats = (text ?? "native").split(",").map((f) => f.trim());
  for (const f of formats)
    if (!["native", "lean-grpo", "fim-text"].includes(f))
      throw new UsageError(`--format: unknown format "${f}" (native, lean-grpo, fim-text)`);
  return formats as ExportFormat[];
}

function parseSplitMode(text: string | undefined): SplitMode {
  const mode = text ?? DEFAULT_SPLIT_MODE;
  if (!SPLIT_MODES.includes(mode as SplitMode))
    throw new UsageError(`--split must be ${SPLIT_MODES.join(", ")}, got "${mode}"`);
  return mode as SplitMode;
}

function parseFimTokens(values: {
  "fim-tokens"?: string;
  "fim-prefix"?: string;
  "fim-suffix"?: string;
  "fim-middle"?: string;
}): FimTokens | undefined {
  const name = values["fim-tokens"];
  if (!name) return undefined;
  if (name === "qwen" || name === "starcoder") return FIM_TOKEN_SETS[name];
  if (name !== "custom")
    throw new UsageError(`--fim-tokens must be qwen, starcoder or custom, got "${name}"`);
  const { "fim-prefix": prefix, "fim-suffix": suffix, "fim-middle": middle } = values;
  if (!prefix || !suffix || !middle)
    throw new UsageError("--fim-tokens custom needs --fim-prefix, --fim-suffix and --fim-middle");
  return { prefix, suffix, middle };
}

/** "train 190 (80.2%), validation 23 (9.7%), test 24 (10.1%)": counts and achieved shares. */
function splitSummary(report: ExportReport): string {
  return Object.entries(report.holes.kept.bySplit)
    .map(([s, n]) => `${s} ${n} (${((report.holes.kept.shares[s] ?? 0) * 100).toFixed(1)}%)`)
    .join(", ");
}

/** What `--split` held out and how held-out middles relate to training, in one clause. */
function overlapSummary(report: ExportReport): string {
  const o = report.overlap;
  const h = report.split.heldOut;
  const f = report.split.families;
  const heldOut =
    `held out: ${h.instance.validation + h.instance.test} instance tasks, ${h.family.validation + h.family.test} ` +
    `family tasks (${f.heldOut.validation + f.heldOut.test} of ${f.total} families)`;
  const test = `${o.test.inTraining} of ${o.test.tasks} test middles occur in training`;
  return o.splitMode === "dedup"
    ? `${heldOut}; ${test} (--split dedup dropped ${o.trainingDropped} training tasks sharing a held-out middle)`
    : `${heldOut}; ${test} (each held-out task says \`novel\`)`;
}

export const EXPORT_OPTIONS = {
  out: {
    type: "string",
    value: "DIR",
    help: "The dataset folder to write (replaced atomically if it is a dataset).",
  },
  kinds: {
    type: "string",
    value: "LIST",
    help: "Hole kinds to keep, comma-separated.",
    default: HOLE_KINDS.join(","),
  },
  verify: {
    type: "boolean",
    help: "Keep only holes whose own middle verifies (needs --simulator, --server or lake).",
  },
  workers: { type: "string", value: "K", help: "Parallel checks with --verify.", default: "4" },
  seed: { type: "string", value: "S", help: "Seed of the split assignment.", default: "0" },
  split: {
    type: "string",
    value: "family|declaration|dedup",
    help: "family: held-out instances and whole held-out families; declaration: by declaration; dedup: also drops training tasks whose middle (normalised) a held-out task has.",
    default: DEFAULT_SPLIT_MODE,
  },
  "context-chars": {
    type: "string",
    value: "N",
    help: "Each task's prefix keeps at most N characters of its declaration before the hole (the suffix N/4).",
    default: String(DEFAULT_CONTEXT_CHARS),
  },
  "max-middle-chars": {
    type: "string",
    value: "N",
    help: "Drop holes whose middle is longer than N characters.",
    default: String(DEFAULT_MAX_MIDDLE_CHARS),
  },
  "max-file-bytes": {
    type: "string",
    value: "N",
    help: "Skip (and report) source files larger than N bytes.",
    default: String(4 * 1024 * 1024),
  },
  format: {
    type: "string",
    value: "LIST",
    help: "Outputs, comma-separated: native, lean-grpo, fim-text.",
    default: "native",
  },
  "fim-tokens": { type: "string", value: "qwen|starcoder|custom", help: "Sentinels of --format fim-text." },
  "fim-prefix": { type: "string", value: "TEXT", help: "With --fim-tokens custom: the prefix sentinel." },
  "fim-suffix": { type: "string", value: "TEXT", help: "With --fim-tokens custom: the suffix sentinel." },
  "fim-middle": { type: "string", value: "TEXT", help: "With --fim-tokens custom: the middle sentinel." },
  ...SERVER_OPTIONS,
} as const satisfies OptionDefs;

/** Every reason a hole was dropped for, with its count (the counts add up to the dropped total). */
export function droppedReasons(byReason: Record<string, number>): string {
  const parts = Object.entries(byReason)
    .filter(([, n]) => n > 0)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, n]) => `${n} ${reason}`);
  return parts.length ? ` (${parts.join(", ")}; reasons and examples in report.json)` : "";
}

/** UNREADABLE_SHOWN of the declarations whose proof does not read as whole tactics, by place and name. */
const UNREADABLE_SHOWN = 5;

function unreadableSummary(d: ExportReport["declarations"]): string {
  if (d.unreadableCount === 0) return "";
  const shown = d.unreadable
    .slice(0, UNREADABLE_SHOWN)
    .map((u) => `${u.file}:${u.line} ${u.decl}`)
    .join(", ");
  const more = d.unreadableCount - Math.min(UNREADABLE_SHOWN, d.unreadable.length);
  return (
    `  ${d.unreadableCount} declaration(s) whose tactic proof does not read as whole tactics (a syntax error?): ` +
    `${shown}${more > 0 ? `, and ${more} more (report.json)` : ""}; holes that cut such a proof are dropped\n`
  );
}

export const exportCommand: CliCommand = {
  name: "export",
  summary: "Mine a Lean workspace into a dataset of fill-in-the-middle tasks",
  synopsis: "WORKSPACE --out DIR [options]",
  description: [
    "Cuts holes out of every tactic proof of the workspace (kinds: proof, steps, block, tactic) and writes a",
    "dataset folder: tasks.jsonl, files.jsonl, report.json, summary.svg, README.md (the dataset card) and the",
    "views chosen with --format. The folder appears atomically when complete. Exit 0 when written, 1 when the",
    "workspace gives no tasks (the message says what was found), 2 for bad usage, 130 on Ctrl-C.",
  ].join("\n"),
  positionals: { name: "WORKSPACE", help: "The Lean workspace folder to mine.", max: 1 },
  options: EXPORT_OPTIONS,
  examples: [
    "fim-rlvr export lean-env --out out/dataset --verify --simulator",
    "fim-rlvr export lean-env --out out/fim --kinds tactic,steps --format native,fim-text --fim-tokens qwen",
  ],
  run: runExport,
};

async function runExport({ values: raw, positionals }: ParsedArgs): Promise<number> {
  const values = {
    out: stringOption(raw, "out"),
    kinds: stringOption(raw, "kinds"),
    verify: flagOption(raw, "verify"),
    workers: stringOption(raw, "workers"),
    seed: stringOption(raw, "seed"),
    split: stringOption(raw, "split"),
    "context-chars": stringOption(raw, "context-chars"),
    "max-middle-chars": stringOption(raw, "max-middle-chars"),
    "max-file-bytes": stringOption(raw, "max-file-bytes"),
    format: stringOption(raw, "format"),
    "fim-tokens": stringOption(raw, "fim-tokens"),
    "fim-prefix": stringOption(raw, "fim-prefix"),
    "fim-suffix": stringOption(raw, "fim-suffix"),
    "fim-middle": stringOption(raw, "fim-middle"),
    simulator: flagOption(raw, "simulator"),
    server: stringOption(raw, "server"),
  };
  const workspace = positionals[0];
  if (!workspace) throw new UsageError("give the workspace folder: fim-rlvr export WORKSPACE --out DIR");
  if (!existsSync(workspace) || !statSync(workspace).isDirectory())
    throw new UsageError(`${workspace}: no such folder`);
  if (!values.out) throw new UsageError("--out DIR is required: where to write the dataset");
  const formats = parseFormats(values.format);
  const fimTokens = parseFimTokens(values);
  if (formats.includes("fim-text") && !fimTokens)
    throw new UsageError("--format fim-text needs --fim-tokens qwen|starcoder|custom");
  if ((values.simulator || values.server) && !values.verify)
    throw new UsageError("--simulator and --server choose the verifier for --verify; add --verify");
  const root = resolve(workspace);
  const pool: Verifier | undefined = values.verify
    ? await openPool(root, raw, parseCount("--workers", values.workers, 4, 1), "results")
    : undefined;
  const abort = new AbortController();
  const onSigint = () => {
    process.stderr.write("\nexport: interrupted; the previous dataset (if any) is left untouched\n");
    abort.abort();
    process.off("SIGINT", onSigint); // A second Ctrl-C ends the process at once.
  };
  process.on("SIGINT", onSigint);
  let last = 0;
  try {
    const result = await exportDataset({
      workspace: root,
      out: values.out,
      kinds: parseKinds(values.kinds),
      seed: parseCount("--seed", values.seed, 0),
      splitMode: parseSplitMode(values.split),
      contextChars: parseCount("--context-chars", values["context-chars"], DEFAULT_CONTEXT_CHARS),
      ...(values["max-middle-chars"] !== undefined
        ? { maxMiddleChars: parseCount("--max-middle-chars", values["max-middle-chars"], 0) }
        : {}),
      maxFileBytes: parseCount("--max-file-bytes", values["max-file-bytes"], 4 * 1024 * 1024),
      formats,
      ...(fimTokens ? { fimTokens } : {}),
      ...(pool ? { pool } : {}),
      signal: abort.signal,
      onProgress: (p) => {
        const now = performance.now();
        if (now - last < 1000 && p.done !== p.total) return;
        last = now;
        process.stderr.write(
          `export: ${p.phase} ${p.done}/${p.total}${pool && p.phase === "verifying" ? ` (verifier: ${pool.identity.label})` : ""}\n`,
        );
      },
    });
    if (result.kind === "cancelled") return 130;
    if (result.kind === "error") throw new UsageError(result.message);
    if (result.kind === "empty") {
      process.stderr.write(`fim-rlvr export: no dataset written: ${result.message}\n`);
      return 1;
    }
    const r = result.report;
    const kinds = Object.entries(r.holes.kept.byKind)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ");
    process.stderr.write(
      `export: wrote ${r.holes.kept.total} tasks (${kinds}) from ${r.files.mined} files to ${result.out}\n` +
        `  splits: ${splitSummary(r)}; ${overlapSummary(r)}\n  ` +
        `skipped: ${r.files.skipped.length} files, ${Object.values(r.declarations.skipped).reduce((a, b) => a + b, 0)} declarations without tactic proofs, ${r.holes.duplicatesDropped} duplicates\n` +
        unreadableSummary(r.declarations) +
        (r.verification
          ? `  verified by ${r.verification.verifier}: of ${r.verification.kept + r.verification.dropped} mined holes, ${r.verification.kept} kept (before the split's drops: the tasks written are counted above), ${r.verification.dropped} dropped${droppedReasons(r.verification.droppedByReason)}; ${r.verification.withGoal} with the goal at the hole\n`
          : "") +
        r.warnings.map((w) => `  warning: ${w}\n`).join("") +
        `  dataset card: ${resolve(result.out, "README.md")}\n`,
    );
    return 0;
  } finally {
    process.off("SIGINT", onSigint);
    await pool?.stop();
  }
}
