/**
 * The dataset a run trains on: a dataset folder given as is, or a Lean workspace mined into RUN_DIR/dataset
 * first (kept there, so `--resume` trains on the very same task ids even if the workspace changed), with the goal
 * at each hole from the run's verifier (`withGoals`). Also decides which project folder the verifier runs in. Mining goes through an injected ExportRunner: the CLI
 * mines in its own process, the editor in a child process so that its extension host never stalls.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { exportDataset } from "../dataset/exporter";
import { readJsonl } from "../dataset/jsonl";
import type { FileRecord } from "../dataset/records";
import type { SplitFractions } from "../dataset/split";
import { TaskIndex } from "../dataset/taskIndex";
import { addGoals, recordedGoals, type GoalsReport } from "../dataset/taskGoals";
import type { Verifier } from "../verify/verifier";
import type { ExportRunner } from "../dataset/workerProtocol";
import { writeFileAtomic } from "../util/atomicWrite";
import { HOLE_KINDS, type HoleKind } from "../protocol/trainer";

export interface LoadedDataset {
  /** Absolute path of the folder holding tasks.jsonl. */
  dir: string;
  /** The tasks by id, read from disk when asked for (never all in memory). */
  tasks: TaskIndex;
  /** File texts by relative path (files.jsonl). */
  files: Map<string, string>;
  /** The workspace the dataset was exported from, when report.json names one that exists. */
  workspace: string | undefined;
}

export type DatasetResult =
  { kind: "ok"; dataset: LoadedDataset } | { kind: "error"; message: string; hint: string };

export function isDatasetDir(path: string): boolean {
  return existsSync(join(path, "tasks.jsonl"));
}

/**
 * Why a folder given to train or eval is neither a dataset nor a workspace (undefined when it is one, or is no
 * folder: a statement file is read elsewhere). The commands refuse it as bad usage before anything starts.
 */
export function folderTargetProblem(target: string): string | undefined {
  const path = resolve(target);
  if (!existsSync(path) || !statSync(path).isDirectory() || isDatasetDir(path) || isLeanWorkspace(path))
    return undefined;
  return `${target} is neither a dataset (no tasks.jsonl) nor a Lean workspace (no lean-toolchain, lakefile or .lean files)`;
}

function isLeanWorkspace(path: string): boolean {
  if (
    existsSync(join(path, "lean-toolchain")) ||
    existsSync(join(path, "lakefile.lean")) ||
    existsSync(join(path, "lakefile.toml"))
  )
    return true;
  try {
    return readdirSync(path).some((name) => name.endsWith(".lean"));
  } catch {
    return false;
  }
}

const REEXPORT_HINT =
  "Export it again with `fim-rlvr export WORKSPACE --out DIR`, or train on the workspace itself.";

/** files.jsonl's texts by file, streamed line by line. */
function readFiles(
  path: string,
): { kind: "ok"; files: Map<string, string> } | { kind: "error"; message: string } {
  const files = new Map<string, string>();
  let line = 0;
  try {
    for (const row of readJsonl<Partial<FileRecord>>(path)) {
      line++;
      if (typeof row.file !== "string" || typeof row.text !== "string")
        return { kind: "error", message: `${path} line ${line} is not a file record ({file, sha256, text})` };
      files.set(row.file, row.text);
    }
  } catch (error) {
    return {
      kind: "error",
      message: `cannot read the dataset's files (${path}): ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  return { kind: "ok", files };
}

/**
 * Reads a dataset folder (tasks.jsonl, files.jsonl, report.json). Tasks are indexed, not loaded: a
 * million-task dataset costs its ids and line offsets (see TaskIndex), and each task is read when asked for.
 */
export function loadDataset(dir: string): DatasetResult {
  const root = resolve(dir);
  const tasksPath = join(root, "tasks.jsonl");
  if (!existsSync(tasksPath))
    return { kind: "error", message: `${root} holds no tasks.jsonl`, hint: REEXPORT_HINT };
  const opened = TaskIndex.open(tasksPath);
  if (opened.kind === "error")
    return { kind: "error", message: `${tasksPath}: ${opened.message}`, hint: REEXPORT_HINT };
  const tasks = opened.index;
  if (tasks.size === 0)
    return { kind: "error", message: `${root}/tasks.jsonl holds no tasks`, hint: REEXPORT_HINT };
  const filesRead = readFiles(join(root, "files.jsonl"));
  if (filesRead.kind === "error") return { ...filesRead, hint: REEXPORT_HINT };
  const files = filesRead.files;
  for (const file of tasks.files())
    if (!files.has(file))
      return {
        kind: "error",
        message: `tasks.jsonl names ${file}, which files.jsonl does not hold`,
        hint: REEXPORT_HINT,
      };
  let workspace: string | undefined;
  try {
    const report = JSON.parse(readFileSync(join(root, "report.json"), "utf8")) as { workspace?: unknown };
    if (typeof report.workspace === "string" && existsSync(report.workspace)) workspace = report.workspace;
  } catch {
    // A dataset without report.json still trains; the verifier then runs on its own copy of the files.
  }
  return { kind: "ok", dataset: { dir: root, tasks, files, workspace } };
}

/** Tasks per kind in the training split, for messages. */
export function kindCounts(dataset: LoadedDataset, split = "train"): Record<string, number> {
  return dataset.tasks.kindCounts(split);
}

/** One clear error when the training split has no task of the kinds asked for. */
export function checkKinds(dataset: LoadedDataset, kinds: readonly string[] | undefined): DatasetResult {
  const wanted = kinds ?? HOLE_KINDS;
  const unknown = wanted.filter((k) => !HOLE_KINDS.includes(k as HoleKind));
  if (unknown.length > 0)
    return {
      kind: "error",
      message: `unknown hole kind(s): ${unknown.join(", ")}`,
      hint: `Valid kinds: ${HOLE_KINDS.join(", ")}.`,
    };
  const counts = kindCounts(dataset);
  if (wanted.some((k) => (counts[k] ?? 0) > 0)) return { kind: "ok", dataset };
  const have =
    Object.entries(counts)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ") || "none";
  return {
    kind: "error",
    message: `the dataset ${dataset.dir} has no training tasks of the kinds ${wanted.join(", ")} (it has: ${have})`,
    hint: 'Ask for kinds the dataset has ("kinds" in --config), or export the workspace again with those --kinds.',
  };
}

/** Mines in this process: the CLI's way (its thread has nothing else to do meanwhile). */
export const inProcessExport: ExportRunner = async ({ verifier, ...options }, onProgress, signal) =>
  verifier
    ? {
        kind: "error",
        message: "internal: verifying while mining in process needs a pool (give one to exportDataset)",
      }
    : exportDataset({ ...options, onProgress, signal });

export type PreparedTarget =
  | {
      kind: "ok";
      dataset: LoadedDataset;
      projectRoot: string;
      /** The dataset was mined from the workspace into RUN_DIR/dataset (now or by the run resumed). */
      mined: boolean;
    }
  | { kind: "error"; message: string; hint: string };

/**
 * Whether a project holds every file of a dataset with the very text it was exported with (a hole's range means
 * nothing in another version of its file): undefined when it does, else the first file that differs, and how.
 */
function projectHolds(project: string, dataset: LoadedDataset): string | undefined {
  for (const [file, text] of dataset.files) {
    const path = resolve(project, file);
    if (!existsSync(path)) return `${file} is missing there`;
    if (readFileSync(path, "utf8") !== text) return `${file} differs from the dataset's copy`;
  }
  return undefined;
}

/** How a workspace target is split when mined (`train --split-seed`, `--split-fractions`). */
export interface MiningSplit {
  /** The seed of the held-out draw (the exporter's split seed); default 0. */
  seed?: number;
  /** The target share of tasks per split; default the exporter's (80/10/10). */
  fractions?: SplitFractions;
}

/**
 * Turns the command's target into a dataset and a project folder for the verifier. A workspace is mined into
 * RUN_DIR/dataset (reused on resume). A dataset whose workspace is gone is checked, with the simulator, in a
 * copy of its own files (RUN_DIR/workspace); Lean needs the real project.
 */
export async function prepareTarget(
  target: string,
  runDir: string,
  options: {
    resume: boolean;
    verifier: "lean" | "simulator" | "kimina";
    /** A dataset folder's project, in place of the workspace its report.json names (see `projectHolds`). */
    project?: string;
    onMining?: () => void;
    signal?: AbortSignal;
    /** How the workspace is mined (default: in this process). */
    exporter?: ExportRunner;
    /** How a mined workspace is split: the held-out draw's seed (default 0) and the split's fractions. */
    split?: MiningSplit;
  },
): Promise<PreparedTarget> {
  const path = resolve(target);
  if (!existsSync(path) || !statSync(path).isDirectory())
    return {
      kind: "error",
      message: `${target}: no such folder`,
      hint: "Give a Lean workspace (a folder with .lean files) or a dataset folder (with tasks.jsonl).",
    };
  let datasetDir = path;
  let projectRoot: string | undefined;
  const mined = !isDatasetDir(path);
  if (mined) {
    const problem = folderTargetProblem(target);
    if (problem !== undefined)
      return {
        kind: "error",
        message: problem,
        hint: "Give a Lean workspace or a folder written by `fim-rlvr export`.",
      };
    projectRoot = path;
    datasetDir = join(runDir, "dataset");
    if (!(options.resume && isDatasetDir(datasetDir))) {
      options.onMining?.();
      const exporter = options.exporter ?? inProcessExport;
      const exported = await exporter(
        {
          workspace: path,
          out: datasetDir,
          kinds: [...HOLE_KINDS],
          seed: options.split?.seed ?? 0,
          maxFileBytes: 4 * 1024 * 1024,
          formats: ["native"],
          ...(options.split?.fractions ? { splitFractions: options.split.fractions } : {}),
        },
        () => {},
        options.signal ?? new AbortController().signal,
      );
      if (exported.kind === "cancelled") return { kind: "error", message: "mining was cancelled", hint: "" };
      if (exported.kind === "error" || exported.kind === "empty")
        return {
          kind: "error",
          message: `mining ${target} failed: ${exported.message}`,
          hint: "Try `fim-rlvr export` on it to see what it finds.",
        };
    }
  }
  const loaded = loadDataset(datasetDir);
  if (loaded.kind === "error") return loaded;
  const dataset = loaded.dataset;
  if (!mined && options.project !== undefined) {
    const differs = projectHolds(options.project, dataset);
    if (differs)
      return {
        kind: "error",
        message: `--project ${options.project} does not hold the dataset's files as they were exported: ${differs}`,
        hint: "Give the project the dataset was exported from (at the same version), or export it again from this project.",
      };
    projectRoot = resolve(options.project);
  }
  projectRoot ??= dataset.workspace;
  if (!projectRoot) {
    if (options.verifier === "lean")
      return {
        kind: "error",
        message: `the dataset ${datasetDir} does not name a workspace that exists here, and Lean needs the project to check candidates`,
        hint: "Train on the workspace itself (fim-rlvr train WORKSPACE), or use --simulator for a dry run.",
      };
    projectRoot = join(runDir, "workspace");
    for (const [file, text] of dataset.files) {
      const out = resolve(projectRoot, file);
      if (!out.startsWith(projectRoot + "/"))
        return {
          kind: "error",
          message: `files.jsonl names ${file}, which lies outside the dataset`,
          hint: REEXPORT_HINT,
        };
      mkdirSync(dirname(out), { recursive: true });
      writeFileAtomic(out, text);
    }
  }
  return { kind: "ok", dataset, projectRoot, mined };
}

/**
 * The goal at every hole of a dataset the run mined, from the run's verifier (dataset/taskGoals.ts), so that its
 * prompts show it whichever verifier runs; then the dataset read again. A dataset given as a folder is the user's
 * and stays as it is (`export --verify` writes goals), and a resumed run finds its goals already recorded.
 */
export async function withGoals(
  dataset: LoadedDataset,
  verifier: Verifier,
  options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void } = {},
): Promise<
  | { kind: "ok"; dataset: LoadedDataset; report: GoalsReport }
  | { kind: "cancelled" }
  | (DatasetResult & { kind: "error" })
> {
  const recorded = recordedGoals(dataset.dir);
  if (recorded) return { kind: "ok", dataset, report: recorded };
  const added = await addGoals(dataset.dir, verifier, dataset.files, options);
  if (added.kind === "cancelled") return added;
  const loaded = loadDataset(dataset.dir);
  if (loaded.kind === "error") return loaded;
  return { kind: "ok", dataset: loaded.dataset, report: added.report };
}
