/**
 * `fim-rlvr export`: workspace → holes → dataset folder, in bounded memory. Pass 1 mines file by file and
 * streams files.jsonl and contexts.jsonl to a staging folder, with an 84-byte sketch of each task
 * (taskSketches.ts); with verification, pass 2 checks the sketched tasks in batches and keeps the sketches
 * (and goals) of those that verify. Then the splits are assigned (balanced, by declaration) and each task's
 * row is written once to tasks.jsonl with its split, rebuilt from its sketch and files.jsonl by the one
 * task-row encoder (taskRows.ts), with the views. Writing ~1 GB of pending rows for a Mathlib-sized workspace
 * and rewriting them cost more than keeping 84 bytes per task. Nothing is written to the target until the
 * whole dataset is ready; cancellation (Ctrl-C, the editor's Cancel) discards the staging folder.
 */
import { basename, resolve } from "node:path";
import type { HoleKind } from "../holes/mine";
import { readToolchain } from "../server/launch";
import type { Verifier as VerifierPool } from "../verify/verifier";
import { StagingDir } from "./atomicDir";
import { datasetCard } from "./card";
import { kindSplitChart } from "./chart";
import { DEFAULT_CONTEXT_CHARS } from "./context";
import { JsonlWriter } from "./jsonl";
import { DEFAULT_MAX_MIDDLE_CHARS, mineWorkspace, type MiningResult } from "./mineWorkspace";
import { TERM_SORRY } from "./openGoals";
import { PendingHeads } from "./pendingHeads";
import { sketchedRows } from "./taskRows";
import { TaskSketchWriter } from "./taskSketches";
import { SPLIT_FRACTIONS, splitFractionsProblem, type SplitFractions } from "./split";
import {
  DEFAULT_SPLIT_MODE,
  declarationTable,
  planSplits,
  splitWarnings,
  type SplitReport,
} from "./splitPlan";
import { verifySketches, type VerificationReport } from "./verifyTasks";
import type { FimTokens } from "./views";
import type { SkippedFile } from "./workspace";
import {
  writeTasks,
  type HeldOutCounts,
  type OverlapReport,
  type SplitMode,
  type TaskSource,
} from "./writeTasks";

export type ExportFormat = "native" | "lean-grpo" | "fim-text";

export interface ExportOptions {
  workspace: string;
  out: string;
  kinds: HoleKind[];
  seed: number;
  /** Holes whose middle is longer are dropped; default DEFAULT_MAX_MIDDLE_CHARS. */
  maxMiddleChars?: number;
  maxFileBytes: number;
  /** Each task's prefix window in characters (its suffix gets a quarter); default DEFAULT_CONTEXT_CHARS. */
  contextChars?: number;
  /** Default `family`: held-out instances and held-out families (splitPlan.ts); `dedup` and `declaration` by name. */
  splitMode?: SplitMode;
  /**
   * Target share of tasks per split (default SPLIT_FRACTIONS, 80/10/10). A workspace meant for measuring, such
   * as lean-env-prelude/, asks for larger held-out splits so that the test set is not a few dozen tasks.
   */
  splitFractions?: SplitFractions;
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
  splitFractions: SplitFractions;
  /** The prefix window of every task (its suffix: a quarter of it). */
  contextChars: number;
  /** Holes whose middle is longer than this many characters were dropped (`holes.tooLongDropped`). */
  maxMiddleChars: number;
  /** Held-out middles that also occur in training, and training tasks dropped to keep them apart. */
  overlap: OverlapReport;
  /** How the splits were made: the mode, the families and those held out whole, kinds training lacks. */
  split: SplitReport & {
    /** Held-out tasks per held-out set: "instance" (their family is in training) or "family" (it is not). */
    heldOut: HeldOutCounts;
  };
  /** What a user should know about the dataset (a hole kind with no training task, …). */
  warnings: string[];
  files: { mined: number; skipped: SkippedFile[] };
  /**
   * `withoutProofs`: declarations whose proof is `sorry`, one task each without a reference. `unreadable`: those
   * whose tactic proof does not read as whole tactics (a syntax error, as a rule), file (1-based line) and name,
   * the first 50 of `unreadableCount`.
   */
  declarations: MiningResult["declarations"];
  holes: {
    found: Record<string, number>;
    duplicatesDropped: number;
    tooLongDropped: number;
    /** Spans that were not whole tactic sequences (broken source, ambiguous one-line alternatives). */
    malformedDropped: number;
    /** Holes the project's Lean cannot axiom-check (`module` files before Lean 4.30), with why. */
    uncheckableDropped: number;
    uncheckableReason?: string;
    kept: {
      total: number;
      byKind: Record<string, number>;
      bySplit: Record<string, number>;
      /** Achieved share of tasks per split (0..1), next to `splitFractions`, the targets. */
      shares: Record<string, number>;
      byKindAndSplit: Record<string, Record<string, number>>;
      /** Tasks without a reference (`"reference": false`: statements whose proof is `sorry`), per split. */
      withoutReference: { total: number; bySplit: Record<string, number> };
    };
  };
  verification?: VerificationReport;
  views: string[];
  timeMs: number;
}

export type ExportResult =
  | { kind: "ok"; report: ExportReport; out: string }
  | { kind: "cancelled" }
  /** The workspace gave no tasks: the message says what was found and what is needed. */
  | { kind: "empty"; message: string }
  | { kind: "error"; message: string };

const SKETCHES = ".sketches.bin";
/** With verification: the sketches of the tasks kept, and their goals (one line each). */
const KEPT_SKETCHES = ".kept.bin";
const GOALS = ".goals.jsonl";

/** Each task's declaration, middle key, kind and reference, in one object reused for every task (read at once). */
function* headsOf(
  heads: PendingHeads,
): Generator<{ decl: number; middleKey: number; kind: string; reference: boolean }> {
  const head = { decl: 0, middleKey: 0, kind: "", reference: true };
  for (let k = 0; k < heads.count; k++) {
    head.decl = heads.decl(k);
    head.middleKey = heads.middleKey(k);
    head.kind = heads.kind(k);
    head.reference = heads.reference(k);
    yield head;
  }
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** Why a workspace gave no tasks, in terms of what was found. */
function emptyMessage(workspace: string, mined: MiningResult, kinds: HoleKind[]): string | undefined {
  const skippedFiles = mined.files.skipped.length
    ? ` (${plural(mined.files.skipped.length, ".lean file")} skipped: ${mined.files.skipped
        .slice(0, 3)
        .map((s) => `${s.file}: ${s.reason}`)
        .join("; ")})`
    : "";
  if (mined.files.mined === 0)
    return `found no readable Lean source files in ${workspace}${skippedFiles}. Export needs a folder holding .lean files, e.g. a Lean project (lean-env/ in this repository).`;
  const found = Object.values(mined.found).reduce((a, b) => a + b, 0);
  if (found === 0) {
    const reasons = Object.entries(mined.declarations.skipped)
      .map(([r, n]) => `${r} ${n}`)
      .join(", ");
    return (
      `found ${plural(mined.files.mined, "Lean file")} with ${plural(mined.declarations.total, "declaration")}, but no tactic proofs to cut holes from` +
      `${reasons ? ` (skipped: ${reasons})` : ""}. Export needs theorems proved with tactics (\`:= by …\`)` +
      (mined.declarations.skipped[TERM_SORRY]
        ? "; a statement whose proof is `sorry` is a task when written `:= by sorry`."
        : ".")
    );
  }
  if (mined.pending === 0 && mined.uncheckableDropped > 0)
    return `found ${plural(found, "hole")}, but ${plural(mined.uncheckableDropped, "hole")} could not be offered: ${mined.uncheckableReason ?? ""}.`;
  if (mined.pending === 0)
    return (
      `found ${plural(found, "hole")} in ${plural(mined.files.mined, "file")}, but none is left after the filters ` +
      `(--kinds ${kinds.join(",")}: ${kinds.reduce((n, k) => n + (mined.found[k] ?? 0), 0)} of that kind; ` +
      `${mined.duplicatesDropped} duplicates; ${mined.tooLongDropped} longer than --max-middle-chars). Widen --kinds or --max-middle-chars.`
    );
  return undefined;
}

export async function exportDataset(options: ExportOptions): Promise<ExportResult> {
  const started = performance.now();
  const workspace = resolve(options.workspace);
  if (options.formats.includes("fim-text") && !options.fimTokens)
    return { kind: "error", message: "--format fim-text needs --fim-tokens qwen|starcoder|custom" };
  const fractions = options.splitFractions ?? SPLIT_FRACTIONS;
  const fractionsProblem = splitFractionsProblem(fractions);
  if (fractionsProblem) return { kind: "error", message: fractionsProblem };
  const prepared = StagingDir.prepare(resolve(options.out));
  if (prepared.kind === "error") return prepared;
  const staging = prepared.staging;
  const cancelled = () => options.signal?.aborted === true;
  try {
    // Pass 1: mine, streaming files.jsonl, contexts.jsonl and a sketch per task.
    const filesOut = new JsonlWriter(staging.file("files.jsonl"));
    const contextsOut = new JsonlWriter(staging.file("contexts.jsonl"));
    const sketchesOut = new TaskSketchWriter(staging.file(SKETCHES));
    const mining = await mineWorkspace(
      {
        workspace,
        kinds: options.kinds,
        maxMiddleChars: options.maxMiddleChars ?? DEFAULT_MAX_MIDDLE_CHARS,
        maxFileBytes: options.maxFileBytes,
        contextChars: options.contextChars ?? DEFAULT_CONTEXT_CHARS,
        cancelled,
        onProgress: (done, total) => options.onProgress?.({ phase: "mining", done, total }),
      },
      filesOut,
      contextsOut,
      sketchesOut,
    ).finally(() => {
      filesOut.close();
      contextsOut.close();
      sketchesOut.close();
    });
    if (mining.kind === "cancelled") return { kind: "cancelled" };
    const mined = mining.result;
    const empty = emptyMessage(workspace, mined, options.kinds);
    if (empty) return { kind: "empty", message: empty };

    // Pass 2: keep only holes whose own middle verifies.
    let sketchesPath = staging.file(SKETCHES);
    let heads = mined.heads;
    let goalsPath: string | undefined;
    let verification: VerificationReport | undefined;
    if (options.pool) {
      const kept = {
        sketches: new TaskSketchWriter(staging.file(KEPT_SKETCHES)),
        goals: new JsonlWriter(staging.file(GOALS), { durable: false }),
        heads: new PendingHeads(),
      };
      const verified = await verifySketches(
        options.pool,
        staging.file(SKETCHES),
        staging.file("files.jsonl"),
        mined.heads,
        kept,
        {
          ...(options.signal ? { signal: options.signal } : {}),
          onProgress: (done, total) => options.onProgress?.({ phase: "verifying", done, total }),
        },
      ).finally(() => {
        kept.sketches.close();
        kept.goals.close();
      });
      if (verified.kind === "cancelled") return { kind: "cancelled" };
      verification = verified.report;
      if (verification.kept === 0)
        return {
          kind: "empty",
          message:
            `none of the ${plural(verification.checked, "hole")} verified with ${verification.verifier} ` +
            `(${Object.entries(verification.droppedByReason)
              .map(([k, n]) => `${k} ${n}`)
              .join(", ")}; first: ${verification.examples[0]?.reason ?? "?"}). ` +
            "Check that the project builds (`lake build`) and that the verifier is the one you meant.",
        };
      sketchesPath = staging.file(KEPT_SKETCHES);
      heads = kept.heads;
      goalsPath = staging.file(GOALS);
    }
    if (cancelled()) return { kind: "cancelled" };

    // Pass 3: splits, tasks.jsonl and the views, streamed.
    options.onProgress?.({ phase: "writing", done: 0, total: 1 });
    const source: TaskSource = {
      heads: () => headsOf(heads),
      rows: () => sketchedRows(staging.file("files.jsonl"), sketchesPath, heads, mined.declNames, goalsPath),
    };
    const splitMode = options.splitMode ?? DEFAULT_SPLIT_MODE;
    const plan = planSplits(
      options.seed,
      splitMode,
      options.kinds,
      declarationTable(source.heads(), mined.declKeys, mined.declFamilies, options.kinds),
      fractions,
    );
    const written = writeTasks(staging, source, plan, {
      splitMode,
      kinds: options.kinds,
      formats: options.formats,
      ...(options.fimTokens ? { fimTokens: options.fimTokens } : {}),
      headerEnds: mined.headerEnds,
    });
    staging.remove(SKETCHES);
    staging.remove(KEPT_SKETCHES);
    staging.remove(GOALS);
    const { byKind, bySplit, byKindAndSplit, total } = written;
    const withoutReference = {
      total: Object.values(written.withoutReference).reduce((a, b) => a + b, 0),
      bySplit: written.withoutReference,
    };
    const shares = Object.fromEntries(
      Object.entries(bySplit).map(([s, n]) => [s, total ? Math.round((n / total) * 10_000) / 10_000 : 0]),
    );
    const report: ExportReport = {
      workspace,
      workspaceName: basename(workspace),
      toolchain: readToolchain(workspace),
      seed: options.seed,
      kinds: options.kinds,
      splitFractions: fractions,
      contextChars: options.contextChars ?? DEFAULT_CONTEXT_CHARS,
      maxMiddleChars: options.maxMiddleChars ?? DEFAULT_MAX_MIDDLE_CHARS,
      overlap: written.overlap,
      split: { ...plan.report, heldOut: written.heldOut },
      warnings: splitWarnings(byKindAndSplit, options.kinds),
      files: mined.files,
      declarations: mined.declarations,
      holes: {
        found: mined.found,
        duplicatesDropped: mined.duplicatesDropped,
        tooLongDropped: mined.tooLongDropped,
        malformedDropped: mined.malformedDropped,
        uncheckableDropped: mined.uncheckableDropped,
        ...(mined.uncheckableReason ? { uncheckableReason: mined.uncheckableReason } : {}),
        kept: { total, byKind, bySplit, shares, byKindAndSplit, withoutReference },
      },
      ...(verification ? { verification } : {}),
      views: written.views,
      timeMs: Math.round(performance.now() - started),
    };
    staging.write("report.json", JSON.stringify(report, null, 2) + "\n");
    staging.write(
      "summary.svg",
      kindSplitChart(byKindAndSplit, `${total} tasks from ${report.workspaceName}`),
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
