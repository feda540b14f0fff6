/**
 * `fim-rlvr import`: a statement dataset (JSONL or Parquet) → Lean files under the project → a dataset folder
 * in the export's format, in bounded memory. Pass 1 reads the rows one at a time, keeps each statement once
 * and writes its Lean file (PROJECT/.fim-rlvr/statements/<id>/H<header>/P<n>/R<row>_<name>.lean, where mining
 * never looks: util/projectLayout.ts); pass 2 checks, in batches, that each statement elaborates with `sorry` as its proof (the verifier's statement pre-check),
 * drops those that do not (with Lean's message, in dropped.jsonl) and mines the rest; pass 3 assigns splits
 * and writes tasks.jsonl. The dataset folder is swapped in atomically; the generated folder replaces an earlier
 * import's only when everything succeeded.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, extname, join, relative, resolve, sep } from "node:path";
import type { HoleKind } from "../holes/mine";
import { readToolchain } from "../server/launch";
import type { Verifier } from "../verify/verifier";
import { StagingDir } from "../dataset/atomicDir";
import { JsonlWriter, readJsonl } from "../dataset/jsonl";
import { declKeyOf, fileRecord } from "../dataset/records";
import { declarationKey } from "../dataset/split";
import { importCard } from "./card";
import { tasksOfFile } from "./importedTasks";
import { generatedFile, headerKey, rowFileName, statementKey } from "./leanFile";
import { IMPORT_MARKER, importedDatasetPath, importedStatementsPath } from "../util/projectLayout";
import { readRows, rowFormatOf } from "./readRows";
import { shapeRow, type ColumnMap } from "./shapes";
import { writeImportedTasks } from "./writeImported";
import { emptyCounts, type ImportReport, type PendingRow } from "./report";

export interface ImportOptions {
  source: string;
  project: string;
  /** The dataset folder (default PROJECT/.fim-rlvr/imported/<id>). */
  out?: string;
  /** Names the generated folder and the dataset (default: from the file name). */
  datasetId?: string;
  columns?: ColumnMap;
  /** Checks each statement with `sorry`; undefined skips the pre-check (the report and card say so). */
  verifier?: Verifier;
  kinds: readonly HoleKind[];
  seed: number;
  contextChars?: number;
  signal?: AbortSignal;
  onProgress?: (phase: "reading" | "checking" | "writing", done: number) => void;
}

export type ImportResult =
  | { kind: "ok"; report: ImportReport; out: string }
  | { kind: "cancelled" }
  | { kind: "empty"; message: string; report: ImportReport }
  | { kind: "error"; message: string };

const ROWS = ".rows.jsonl";
const KEPT = ".kept.jsonl";
/** Rows checked at once: enough to keep every slot busy, few enough to keep memory flat. */
const BATCH = 256;
/** Files per folder: no directory grows past this, however large the dataset. */
const FILES_PER_FOLDER = 1000;

/** A Lean-module-safe name for the dataset from the file's name. */
export function datasetIdOf(source: string): string {
  const stem = basename(source, extname(source)).replace(/[^A-Za-z0-9_]/g, "_");
  return /^[A-Za-z]/.test(stem) ? stem : `D${stem}`;
}

/** Moves an earlier import's generated folder aside (ours only: it holds the marker). */
function setAside(dir: string): { kind: "ok"; previous?: string } | { kind: "error"; message: string } {
  if (!existsSync(dir)) return { kind: "ok" };
  if (!existsSync(join(dir, IMPORT_MARKER)))
    return {
      kind: "error",
      message: `${dir} exists and was not written by \`fim-rlvr import\`; choose another --id or move that folder`,
    };
  const previous = `${dir}.previous-${process.pid}`;
  rmSync(previous, { recursive: true, force: true });
  renameSync(dir, previous);
  return { kind: "ok", previous };
}

export async function importStatements(options: ImportOptions): Promise<ImportResult> {
  const started = performance.now();
  const project = resolve(options.project);
  const source = resolve(options.source);
  const format = rowFormatOf(source);
  if (!format) return { kind: "error", message: `${options.source}: expected a .jsonl or .parquet file` };
  if (!existsSync(source)) return { kind: "error", message: `${options.source}: no such file` };
  const id = options.datasetId ?? datasetIdOf(source);
  if (!/^[A-Za-z][A-Za-z0-9_]*$/.test(id))
    return {
      kind: "error",
      message: `--id ${id}: use letters, digits and _ (it becomes a Lean module name)`,
    };
  const generated = importedStatementsPath(project, id);
  const out = resolve(options.out ?? importedDatasetPath(project, id));
  const aside = setAside(generated);
  if (aside.kind === "error") return aside;
  const prepared = StagingDir.prepare(out);
  if (prepared.kind === "error") {
    if (aside.previous) renameSync(aside.previous, generated);
    return prepared;
  }
  const staging = prepared.staging;
  let succeeded = false;
  try {
    mkdirSync(generated, { recursive: true });
    writeFileSync(
      join(generated, IMPORT_MARKER),
      JSON.stringify({ source, importedBy: "fim-rlvr import" }) + "\n",
    );
    const report: ImportReport = {
      source,
      format,
      project,
      workspace: project,
      datasetId: id,
      generatedDir: relative(project, generated).split(sep).join("/"),
      toolchain: readToolchain(project),
      verifier: options.verifier?.identity.label ?? null,
      seed: options.seed,
      kinds: [...options.kinds],
      rows: emptyCounts(),
      droppedExamples: [],
      malformedExamples: [],
      duplicateExamples: [],
      tasks: { total: 0, byKind: {}, bySplit: {}, statementOnly: 0, heldOutSeenInTraining: 0 },
      timeMs: 0,
    };
    // Every row that does not become a statement, whichever pass drops it, gets a line here with its reason.
    const droppedOut = new JsonlWriter(staging.file("dropped.jsonl"));
    let read: "ok" | "cancelled";
    let kept: Awaited<ReturnType<typeof checkPass>>;
    try {
      read = await readPass(options, source, format, generated, project, staging, report, droppedOut);
      kept =
        read === "cancelled" ? "cancelled" : await checkPass(options, project, staging, report, droppedOut);
    } finally {
      droppedOut.close();
    }
    if (read === "cancelled" || kept === "cancelled") return { kind: "cancelled" };
    if (report.rows.kept === 0) {
      report.timeMs = Math.round(performance.now() - started);
      return { kind: "empty", message: emptyMessage(report), report };
    }
    options.onProgress?.("writing", 0);
    const written = writeImportedTasks(staging, staging.file(KEPT), kept, options.seed);
    report.tasks = written;
    staging.remove(ROWS);
    staging.remove(KEPT);
    report.timeMs = Math.round(performance.now() - started);
    staging.write("report.json", JSON.stringify(report, null, 2) + "\n");
    staging.write("README.md", importCard(report));
    if (options.signal?.aborted) return { kind: "cancelled" };
    staging.commit();
    succeeded = true;
    return { kind: "ok", report, out: staging.target };
  } catch (error) {
    return { kind: "error", message: error instanceof Error ? error.message : String(error) };
  } finally {
    staging.discard();
    if (succeeded) {
      if (aside.previous) rmSync(aside.previous, { recursive: true, force: true });
    } else {
      rmSync(generated, { recursive: true, force: true });
      if (aside.previous) renameSync(aside.previous, generated);
    }
  }
}

function emptyMessage(report: ImportReport): string {
  const r = report.rows;
  const first = report.droppedExamples[0];
  return (
    `no statement of ${report.source} could become a task (${r.read} rows: ${r.malformed} malformed, ${r.duplicates} duplicates, ` +
    `${r.dropped.doesNotElaborate} do not elaborate, ${r.dropped.environment} could not load their header, ${r.dropped.inconclusive} inconclusive)` +
    (first ? `; first: row ${first.row}: ${first.message}${first.action ? ` (${first.action})` : ""}` : "")
  );
}

/** Pass 1: rows → shaped, de-duplicated → Lean files and one pending line each. */
async function readPass(
  options: ImportOptions,
  source: string,
  format: "jsonl" | "parquet",
  generated: string,
  project: string,
  staging: StagingDir,
  report: ImportReport,
  droppedOut: JsonlWriter,
): Promise<"ok" | "cancelled"> {
  const rows = new JsonlWriter(staging.file(ROWS));
  /** Each statement's key, and the row that gave it first. */
  const seen = new Map<string, number>();
  const perHeader = new Map<string, number>();
  const counts = report.rows;
  try {
    for await (const read of readRows(source, format)) {
      counts.read++;
      if (counts.read % BATCH === 0) {
        options.onProgress?.("reading", counts.read);
        await new Promise<void>((r) => setImmediate(r));
        if (options.signal?.aborted) return "cancelled";
      }
      const shaped = read.kind === "row" ? shapeRow(read.value, read.row, options.columns) : read;
      if (shaped.kind !== "ok") {
        counts.malformed++;
        if (report.malformedExamples.length < 20)
          report.malformedExamples.push({ row: shaped.row, reason: shaped.reason });
        droppedOut.write({ row: shaped.row, kind: "malformed", message: shaped.reason });
        continue;
      }
      const row = shaped.row;
      const key = statementKey(row);
      const first = seen.get(key);
      if (first !== undefined) {
        counts.duplicates++;
        if (report.duplicateExamples.length < 20)
          report.duplicateExamples.push({ row: row.row, label: row.label });
        droppedOut.write({
          row: row.row,
          label: row.label,
          kind: "duplicate",
          message: `the same statement as row ${first} (kept once)`,
        });
        continue;
      }
      seen.set(key, row.row);
      counts.byShape[row.shape] = (counts.byShape[row.shape] ?? 0) + 1;
      if (row.proofNote) counts.proofNotUsed[row.proofNote] = (counts.proofNotUsed[row.proofNote] ?? 0) + 1;
      const header = headerKey(row.header);
      const n = perHeader.get(header) ?? 0;
      perHeader.set(header, n + 1);
      const folder = join(
        generated,
        `H${header}`,
        `P${String(Math.floor(n / FILES_PER_FOLDER)).padStart(4, "0")}`,
      );
      mkdirSync(folder, { recursive: true });
      const path = join(folder, rowFileName(row));
      const file = generatedFile(row);
      writeFileSync(path, file.text);
      const pending: PendingRow = {
        row: row.row,
        label: row.label,
        file: relative(project, path).split(sep).join("/"),
        namespace: file.namespace,
        hasProof: file.hasProof,
      };
      rows.write(pending);
    }
  } finally {
    rows.close();
  }
  counts.headers = perHeader.size;
  return "ok";
}

/** Pass 2: the statement pre-check in batches; kept rows are mined into pending tasks. */
async function checkPass(
  options: ImportOptions,
  project: string,
  staging: StagingDir,
  report: ImportReport,
  droppedOut: JsonlWriter,
): Promise<Map<string, number> | "cancelled"> {
  const filesOut = new JsonlWriter(staging.file("files.jsonl"));
  const keptOut = new JsonlWriter(staging.file(KEPT));
  const tasksPerDecl = new Map<string, number>();
  const counts = report.rows;
  let batch: { pending: PendingRow; text: string; hole: ReturnType<typeof tasksOfFile> }[] = [];
  const drop = (
    p: PendingRow,
    kind: keyof ImportReport["rows"]["dropped"],
    message: string,
    action?: string,
  ) => {
    counts.dropped[kind]++;
    const line = { row: p.row, label: p.label, kind, message, ...(action ? { action } : {}) };
    droppedOut.write(line);
    if (report.droppedExamples.length < 20) report.droppedExamples.push(line);
    try {
      unlinkSync(join(project, p.file));
    } catch {
      // Already gone: nothing to remove.
    }
  };
  const keep = (p: PendingRow, text: string, mined: ReturnType<typeof tasksOfFile>) => {
    counts.kept++;
    if (p.hasProof) counts.withProof++;
    filesOut.write(fileRecord(p.file, text));
    for (const task of mined.tasks) {
      keptOut.write(task);
      const key = declarationKey(task.file, declKeyOf(task));
      tasksPerDecl.set(key, (tasksPerDecl.get(key) ?? 0) + 1);
    }
  };
  const flush = async () => {
    const ready = batch.filter((b) => b.hole.proofHole !== undefined);
    for (const b of batch)
      if (b.hole.proofHole === undefined)
        drop(b.pending, "inconclusive", "the theorem's proof could not be cut out as a hole");
    const checks = options.verifier
      ? await options.verifier.checkStatements(
          ready.map((b) => ({ file: b.pending.file, hole: b.hole.proofHole!, text: b.text })),
          undefined,
          options.signal,
        )
      : undefined;
    if (options.signal?.aborted) return;
    ready.forEach((b, k) => {
      const check = checks?.[k] ?? { kind: "elaborates" as const };
      if (check.kind === "elaborates") keep(b.pending, b.text, b.hole);
      else if (check.kind === "does-not-elaborate") drop(b.pending, "doesNotElaborate", check.message);
      else if (check.kind === "environment") drop(b.pending, "environment", check.message, check.action);
      else drop(b.pending, "inconclusive", check.reason);
    });
    batch = [];
  };
  try {
    let done = 0;
    for (const pending of readJsonl<PendingRow>(staging.file(ROWS))) {
      const text = readFileSync(join(project, pending.file), "utf8");
      const mined = tasksOfFile(pending.file, text, {
        namespace: pending.namespace,
        hasProof: pending.hasProof,
        kinds: options.kinds,
        ...(options.contextChars !== undefined ? { contextChars: options.contextChars } : {}),
      });
      batch.push({ pending, text, hole: mined });
      if (batch.length >= BATCH) {
        await flush();
        options.onProgress?.("checking", (done += BATCH));
        if (options.signal?.aborted) return "cancelled";
      }
    }
    if (batch.length) await flush();
    if (options.signal?.aborted) return "cancelled";
    return tasksPerDecl;
  } finally {
    filesOut.close();
    keptOut.close();
  }
}
