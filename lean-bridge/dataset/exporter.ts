/**
 * `fim-rlvr export`: workspace → holes → dataset folder. Nothing is written to the target until the whole
 * dataset is ready; cancellation (Ctrl-C, the editor's Cancel) discards the staging folder.
 */
import { basename, resolve } from "node:path";
import { parseFile } from "../lean/commands";
import { mineText, type HoleKind } from "../holes/mine";
import { readToolchain } from "../server/launch";
import type { VerifierPool } from "../verify/pool";
import { StagingDir } from "./atomicDir";
import { datasetCard } from "./card";
import { kindSplitChart } from "./chart";
import { fileRecord, taskRecord, type FileRecord, type TaskRecord } from "./records";
import { SPLIT_FRACTIONS } from "./split";
import { fimText, leanGrpo, type FimTokens } from "./views";
import { listLeanFiles, readSource, type SkippedFile } from "./workspace";

export type ExportFormat = "native" | "lean-grpo" | "fim-text";

export interface ExportOptions {
  workspace: string;
  out: string;
  kinds: HoleKind[];
  seed: number;
  maxMiddleChars?: number;
  maxFileBytes: number;
  formats: ExportFormat[];
  fimTokens?: FimTokens;
  /** Verify each hole's own middle and keep only those that verify. */
  pool?: VerifierPool;
  signal?: AbortSignal;
  onProgress?: (progress: ExportProgress) => void;
}

export interface ExportProgress {
  phase: "mining" | "verifying" | "writing";
  done: number;
  total: number;
}

export interface ExportReport {
  workspace: string;
  workspaceName: string;
  toolchain: string | undefined;
  seed: number;
  kinds: HoleKind[];
  splitFractions: typeof SPLIT_FRACTIONS;
  files: { mined: number; skipped: SkippedFile[] };
  declarations: { total: number; withTacticProofs: number; skipped: Record<string, number> };
  holes: {
    found: Record<string, number>;
    duplicatesDropped: number;
    tooLongDropped: number;
    /** Spans that were not whole tactic sequences (broken source). */
    malformedDropped: number;
    kept: {
      total: number;
      byKind: Record<string, number>;
      bySplit: Record<string, number>;
      byKindAndSplit: Record<string, Record<string, number>>;
    };
  };
  verification?: {
    verifier: string;
    checked: number;
    kept: number;
    dropped: number;
    droppedByReason: Record<string, number>;
    examples: { id: string; kind: string; reason: string }[];
  };
  views: string[];
  timeMs: number;
}

export type ExportResult =
  | { kind: "ok"; report: ExportReport; out: string }
  | { kind: "cancelled" }
  | { kind: "error"; message: string };

function count(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}

export async function exportDataset(options: ExportOptions): Promise<ExportResult> {
  const started = performance.now();
  const workspace = resolve(options.workspace);
  const prepared = StagingDir.prepare(resolve(options.out));
  if (prepared.kind === "error") return prepared;
  const staging = prepared.staging;
  const cancelled = () => options.signal?.aborted === true;
  try {
    const listed = listLeanFiles(workspace);
    const skippedFiles = [...listed.skipped];
    const files: FileRecord[] = [];
    const headerEnds = new Map<string, number>();
    let tasks: TaskRecord[] = [];
    const found: Record<string, number> = {};
    const declSkipped: Record<string, number> = {};
    let declarations = 0;
    let withTactic = 0;
    let malformedDropped = 0;
    for (const [k, path] of listed.files.entries()) {
      // Yield to the event loop between files so a Ctrl-C (or the editor's Cancel) is seen promptly.
      if (k % 8 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (cancelled()) return { kind: "cancelled" };
      options.onProgress?.({ phase: "mining", done: k, total: listed.files.length });
      const read = readSource(workspace, path, options.maxFileBytes);
      if (read.kind === "skipped") {
        skippedFiles.push(read.skipped);
        continue;
      }
      const { file, text } = read.source;
      files.push(fileRecord(file, text));
      const parsed = parseFile(text);
      headerEnds.set(file, parsed.headerEnd);
      const mined = mineText(text, parsed);
      declarations += mined.declarations;
      for (const [reason, n] of Object.entries(mined.skipped)) if (n) count(declSkipped, reason, n);
      withTactic += mined.declarations - Object.values(mined.skipped).reduce((a, b) => a + b, 0);
      malformedDropped += mined.malformedHoles;
      for (const hole of mined.holes) {
        count(found, hole.kind);
        if (options.kinds.includes(hole.kind))
          tasks.push(taskRecord(file, mined.imports, hole, options.seed));
      }
    }
    // Identical (statement, middle) pairs teach nothing new: keep the first.
    const seen = new Set<string>();
    const before = tasks.length;
    tasks = tasks.filter((t) => {
      const key = `${t.statement}\0${t.middle}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    });
    const duplicatesDropped = before - tasks.length;
    const textOf = new Map(files.map((f) => [f.file, f.text]));
    const beforeLength = tasks.length;
    if (options.maxMiddleChars !== undefined)
      tasks = tasks.filter((t) => t.middle.length <= options.maxMiddleChars!);
    const tooLongDropped = beforeLength - tasks.length;
    let verification: ExportReport["verification"];
    if (options.pool) {
      const pool = options.pool;
      const verdicts = await pool.verifyMany(
        tasks.map((t) => ({
          task: { file: t.file, hole: t.range, text: textOf.get(t.file)! },
          candidate: t.middle,
        })),
        (done, total) => options.onProgress?.({ phase: "verifying", done, total }),
        options.signal,
      );
      if (cancelled()) return { kind: "cancelled" };
      const droppedByReason: Record<string, number> = {};
      const examples: { id: string; kind: string; reason: string }[] = [];
      const kept = tasks.filter((t, k) => {
        const v = verdicts[k]!;
        if (v.kind === "proved") return true;
        const reason = "reason" in v ? `${v.kind}: ${String(v.reason).split("\n")[0]}` : v.kind;
        count(droppedByReason, v.kind);
        if (examples.length < 20) examples.push({ id: t.id, kind: v.kind, reason });
        return false;
      });
      verification = {
        verifier: pool.identity.label,
        checked: tasks.length,
        kept: kept.length,
        dropped: tasks.length - kept.length,
        droppedByReason,
        examples,
      };
      tasks = kept;
    }
    if (cancelled()) return { kind: "cancelled" };
    const byKind: Record<string, number> = {};
    const bySplit: Record<string, number> = { train: 0, validation: 0, test: 0 };
    const byKindAndSplit: Record<string, Record<string, number>> = {};
    for (const t of tasks) {
      count(byKind, t.kind);
      count(bySplit, t.split);
      count((byKindAndSplit[t.kind] ??= {}), t.split);
    }
    const views: string[] = [];
    options.onProgress?.({ phase: "writing", done: 0, total: 1 });
    staging.write("files.jsonl", files.map((f) => JSON.stringify(f)).join("\n") + (files.length ? "\n" : ""));
    staging.write("tasks.jsonl", tasks.map((t) => JSON.stringify(t)).join("\n") + (tasks.length ? "\n" : ""));
    if (options.formats.includes("lean-grpo")) {
      const rows = tasks
        .filter((t) => t.kind === "proof")
        .map((t) => JSON.stringify(leanGrpo(t, textOf.get(t.file)!, headerEnds.get(t.file) ?? 0)));
      staging.write("lean-grpo.jsonl", rows.join("\n") + (rows.length ? "\n" : ""));
      views.push("lean-grpo.jsonl");
    }
    if (options.formats.includes("fim-text")) {
      if (!options.fimTokens)
        return { kind: "error", message: "--format fim-text needs --fim-tokens qwen|starcoder|custom" };
      const rows = tasks.map((t) => JSON.stringify(fimText(t, textOf.get(t.file)!, options.fimTokens!)));
      staging.write("fim-text.jsonl", rows.join("\n") + (rows.length ? "\n" : ""));
      views.push("fim-text.jsonl");
    }
    const report: ExportReport = {
      workspace,
      workspaceName: basename(workspace),
      toolchain: readToolchain(workspace),
      seed: options.seed,
      kinds: options.kinds,
      splitFractions: SPLIT_FRACTIONS,
      files: { mined: files.length, skipped: skippedFiles },
      declarations: { total: declarations, withTacticProofs: withTactic, skipped: declSkipped },
      holes: {
        found,
        duplicatesDropped,
        tooLongDropped,
        malformedDropped,
        kept: { total: tasks.length, byKind, bySplit, byKindAndSplit },
      },
      ...(verification ? { verification } : {}),
      views,
      timeMs: Math.round(performance.now() - started),
    };
    staging.write("report.json", JSON.stringify(report, null, 2) + "\n");
    staging.write(
      "summary.svg",
      kindSplitChart(byKindAndSplit, `${tasks.length} tasks from ${report.workspaceName}`),
    );
    staging.write("README.md", datasetCard(report));
    if (cancelled()) return { kind: "cancelled" };
    staging.commit();
    options.onProgress?.({ phase: "writing", done: 1, total: 1 });
    return { kind: "ok", report, out: staging.target };
  } finally {
    staging.discard();
  }
}
