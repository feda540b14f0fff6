/**
 * `fim-rlvr import FILE --project DIR [--out DATASET_DIR] [--simulator|--server "CMD"|--verifier …]`: a
 * statement dataset (JSONL or Parquet) becomes Lean files in the project and a dataset folder (README.md,
 * "Statement datasets"). `importForTraining` is what `train FILE --project DIR` (and `eval`) call.
 */
import { kernelGateModeText } from "../verify/gateStage";
import { existsSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { HOLE_KINDS, type HoleKind } from "../holes/mine";
import { importStatements, type ImportResult } from "../statements/importer";
import { rowFormatOf } from "../statements/readRows";
import type { TrainingOptions } from "../train/session";
import { parseColumnMap, type ColumnMap } from "../statements/shapes";
import type { Verifier } from "../verify/verifier";
import {
  type CliCommand,
  type OptionDefs,
  type ParsedArgs,
  type ParsedValues,
  flagOption,
  stringOption,
} from "./command";
import { SERVER_OPTIONS, openPool, requireProject } from "./pool";
import { UsageError, parseCount } from "./usage";
import { IMPORTED_STATEMENTS_DIR, PROJECT_DIR } from "../util/projectLayout";

export const IMPORT_OPTIONS = {
  project: {
    type: "string",
    value: "DIR",
    help: "The Lean project the statements are checked and written in.",
  },
  out: {
    type: "string",
    value: "DATASET_DIR",
    help: "The dataset folder to write (replaced atomically if it is a dataset).",
    default: `DIR/${PROJECT_DIR}/imported/<id>`,
  },
  columns: {
    type: "string",
    value: "ROLE=COL,…",
    help: "Which columns hold what, for rows of another shape: statement (required), name, header, imports, context, proof, informal.",
  },
  id: {
    type: "string",
    value: "NAME",
    help: `Names the generated folder DIR/${IMPORTED_STATEMENTS_DIR}/NAME and the dataset.`,
    default: "the file's name",
  },
  kinds: { type: "string", value: "K,…", help: "Hole kinds to keep.", default: HOLE_KINDS.join(",") },
  seed: { type: "string", value: "S", help: "Seed of the split assignment.", default: "0" },
  workers: { type: "string", value: "K", help: "Checks at once.", default: "4" },
  "no-precheck": {
    type: "boolean",
    help: "Do not check that each statement elaborates with `sorry` (nothing runs Lean; the card says so).",
    advanced: true,
  },
  ...SERVER_OPTIONS,
} as const satisfies OptionDefs;

export function parseImportKinds(text: string | undefined): HoleKind[] {
  const kinds = (text ?? HOLE_KINDS.join(","))
    .split(",")
    .map((k) => k.trim())
    .filter(Boolean);
  for (const k of kinds)
    if (!HOLE_KINDS.includes(k as HoleKind))
      throw new UsageError(`--kinds: unknown kind "${k}" (choose from ${HOLE_KINDS.join(",")})`);
  return kinds as HoleKind[];
}

export function parseColumns(text: string | undefined): ColumnMap | undefined {
  if (text === undefined) return undefined;
  const parsed = parseColumnMap(text);
  if (parsed.kind === "error") throw new UsageError(`--columns: ${parsed.message}`);
  return parsed.columns;
}

/**
 * Imports a statement file for a command that trains or evaluates on it: the statements are checked by the
 * verifier the command's options choose, then the dataset is written to `out`. Returns the result; the
 * caller stops nothing (the verifier is opened and stopped here).
 */
export async function importForTraining(
  source: string,
  project: string,
  out: string,
  values: ParsedValues,
  options: { signal?: AbortSignal; log?: (line: string) => void } = {},
): Promise<ImportResult> {
  const verifier = await openPool(
    project,
    values,
    parseCount("--workers", stringOption(values, "workers"), 4, 1),
  );
  try {
    options.log?.(`import: checking statements with ${verifier.identity.label}\n`);
    return await importStatements({
      source,
      project,
      out,
      kinds: [...HOLE_KINDS],
      seed: 0,
      verifier,
      ...(options.signal ? { signal: options.signal } : {}),
    });
  } finally {
    await verifier.stop();
  }
}

/** Whether a command's target is a statement file (JSONL or Parquet rows) rather than a folder. */
export function isStatementFile(target: string): boolean {
  return rowFormatOf(target) !== undefined && existsSync(target) && statSync(target).isFile();
}

/**
 * `train FILE --project DIR` (and `eval`): a statement file is imported into RUN_DIR/dataset first (kept, so
 * `--resume` trains on the same tasks), checked by the verifier the run uses; any other target is returned
 * as it is.
 */
export async function statementTarget(
  target: string,
  project: string | undefined,
  runDir: string,
  resume: boolean,
  verifier: TrainingOptions["verifier"],
): Promise<{ kind: "ok"; target: string } | { kind: "error"; message: string }> {
  if (!isStatementFile(target)) return { kind: "ok", target };
  if (project === undefined)
    return {
      kind: "error",
      message: `${target} is a statement file: give --project DIR, the Lean project to check and write its theorems in`,
    };
  const datasetDir = join(runDir, "dataset");
  if (resume && existsSync(join(datasetDir, "tasks.jsonl"))) return { kind: "ok", target: datasetDir };
  const chosen: ParsedValues =
    verifier.kind === "simulator"
      ? { simulator: true }
      : verifier.kind === "kimina"
        ? { verifier: `kimina:${verifier.url}` }
        : verifier.serverCommand
          ? { server: verifier.serverCommand.join(" ") }
          : {};
  // The run's --kernel-gate reaches its import too: a Kimina run that said `off` must not be refused there.
  const values: ParsedValues = verifier.kernelGate
    ? { ...chosen, "kernel-gate": kernelGateModeText(verifier.kernelGate) }
    : chosen;
  let result: ImportResult;
  try {
    result = await importForTraining(target, requireProject(project), datasetDir, values, {
      log: (line) => process.stderr.write(line),
    });
  } catch (error) {
    return { kind: "error", message: error instanceof Error ? error.message : String(error) };
  }
  if (result.kind === "ok") {
    process.stderr.write(describeImport(result));
    return { kind: "ok", target: datasetDir };
  }
  if (result.kind === "cancelled") return { kind: "error", message: "the import was cancelled" };
  return { kind: "error", message: `importing ${target} failed: ${result.message}` };
}

export function describeImport(result: Extract<ImportResult, { kind: "ok" }>): string {
  const r = result.report.rows;
  const t = result.report.tasks;
  const kinds = Object.entries(t.byKind)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  return (
    `import: ${r.read} rows → ${r.kept} statements kept (${r.withProof} with a proof), ${t.total} tasks (${kinds}) in ${result.out}\n` +
    `  dropped: ${r.malformed} malformed, ${r.duplicates} duplicates, ${r.dropped.doesNotElaborate} do not elaborate, ` +
    `${r.dropped.environment} header not loadable, ${r.dropped.inconclusive} inconclusive (each in dropped.jsonl)\n` +
    `  Lean files: ${resolve(result.report.project, result.report.generatedDir)} (${r.headers} distinct headers)\n` +
    `  checked by: ${result.report.verifier ?? "nothing (--no-precheck)"}\n` +
    `  dataset card: ${resolve(result.out, "README.md")}\n`
  );
}

async function runImport({ values, positionals }: ParsedArgs): Promise<number> {
  const source = positionals[0];
  if (!source) throw new UsageError("give the statement file: fim-rlvr import FILE --project DIR");
  if (!existsSync(source) || !statSync(source).isFile()) throw new UsageError(`${source}: no such file`);
  const project = requireProject(stringOption(values, "project"));
  const noPrecheck = flagOption(values, "no-precheck");
  if (
    noPrecheck &&
    (flagOption(values, "simulator") || stringOption(values, "server") || stringOption(values, "verifier"))
  )
    throw new UsageError("--no-precheck runs no verifier: drop --simulator, --server or --verifier");
  const columns = parseColumns(stringOption(values, "columns"));
  const kinds = parseImportKinds(stringOption(values, "kinds"));
  const seed = parseCount("--seed", stringOption(values, "seed"), 0);
  const verifier: Verifier | undefined = noPrecheck
    ? undefined
    : await openPool(project, values, parseCount("--workers", stringOption(values, "workers"), 4, 1));
  const abort = new AbortController();
  const onSigint = () => {
    process.stderr.write("\nimport: interrupted; the previous dataset (if any) is left untouched\n");
    abort.abort();
    process.off("SIGINT", onSigint);
  };
  process.on("SIGINT", onSigint);
  let last = 0;
  try {
    const id = stringOption(values, "id");
    const out = stringOption(values, "out");
    const result = await importStatements({
      source,
      project,
      kinds,
      seed,
      ...(out ? { out } : {}),
      ...(id ? { datasetId: id } : {}),
      ...(columns ? { columns } : {}),
      ...(verifier ? { verifier } : {}),
      signal: abort.signal,
      onProgress: (phase, done) => {
        const now = performance.now();
        if (now - last < 1000) return;
        last = now;
        process.stderr.write(
          `import: ${phase} ${done} rows${verifier && phase === "checking" ? ` (${verifier.identity.label})` : ""}\n`,
        );
      },
    });
    if (result.kind === "cancelled") return 130;
    if (result.kind === "error") throw new UsageError(result.message);
    if (result.kind === "empty") {
      process.stderr.write(`fim-rlvr import: no dataset written: ${result.message}\n`);
      return 1;
    }
    process.stderr.write(describeImport(result));
    return 0;
  } finally {
    process.off("SIGINT", onSigint);
    await verifier?.stop();
  }
}

export const importCommand: CliCommand = {
  name: "import",
  summary: "Turn a statement dataset (JSONL or Parquet) into Lean files and a dataset of tasks",
  synopsis:
    'FILE --project DIR [--out DATASET_DIR] [--simulator|--server "CMD"|--verifier kimina:URL] [options]',
  description: [
    "Reads rows in the shapes statement datasets come in: lean-grpo {name, statement, context, imports};",
    "{formal_statement, header, informal_prefix} (miniF2F, ProofNet, Lean Workbook); NuminaMath-LEAN",
    "{formal_statement, formal_ground_truth}; or any columns named with --columns. Each statement becomes a Lean",
    `file under DIR/${IMPORTED_STATEMENTS_DIR}/<id>/ (where mining of the project never looks) whose proof is the`,
    "hole; a row's own tactic proof also gives the finer holes. Each statement is first checked with `sorry` as",
    "its proof on the project's toolchain: those that do not elaborate are dropped with Lean's message",
    "(dropped.jsonl). Duplicate statements are kept once. Exit 0 when written, 1 when no row became a task, 2",
    "for bad usage, 130 on Ctrl-C.",
  ].join("\n"),
  positionals: { name: "FILE", help: "A .jsonl or .parquet file of statements.", max: 1 },
  options: IMPORT_OPTIONS,
  examples: [
    "fim-rlvr import theorems.jsonl --project lean-env --simulator",
    "fim-rlvr import minif2f.parquet --project my-mathlib-project --out out/minif2f",
    "fim-rlvr import rows.jsonl --project lean-env --columns statement=problem,name=id --verifier kimina:http://127.0.0.1:8000",
  ],
  run: runImport,
};
