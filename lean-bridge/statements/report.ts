/** report.json of an imported dataset: what was read, kept, dropped and why (README.md "Statement datasets"). */
import type { RowShape } from "./shapes";

export interface DroppedRow {
  row: number;
  label: string;
  /** doesNotElaborate: Lean's error; environment: the header could not be loaded; inconclusive: no answer. */
  kind: "doesNotElaborate" | "environment" | "inconclusive";
  /** Lean's message (or why there was none). */
  message: string;
  action?: string;
}

export interface ImportReport {
  source: string;
  format: "jsonl" | "parquet";
  /** The Lean project the files were generated in (the verifier's project root: `workspace` for training). */
  project: string;
  /**
   * The same folder under the name every dataset reader looks for (train/dataset.ts `loadDataset`): the
   * verifier of `train`, `eval` and `filter` then runs in the project, where the generated files and their
   * imports are, rather than in a copy of files.jsonl.
   */
  workspace: string;
  datasetId: string;
  /** Where the generated Lean files are, relative to the project. */
  generatedDir: string;
  toolchain: string | undefined;
  /** The verifier of the statement pre-check; null when it was skipped (--no-precheck). */
  verifier: string | null;
  seed: number;
  kinds: string[];
  rows: {
    read: number;
    malformed: number;
    duplicates: number;
    byShape: Partial<Record<RowShape, number>>;
    /** Distinct headers (imports and opens): each is loaded once per Lean worker. */
    headers: number;
    /** Proofs a row gave that are not used (term-mode proofs; a ground truth for another statement). */
    proofNotUsed: Record<string, number>;
    dropped: Record<DroppedRow["kind"], number>;
    kept: number;
    /** Kept rows whose own tactic proof is in the file (the finer holes come from it). */
    withProof: number;
  };
  malformedExamples: { row: number; reason: string }[];
  duplicateExamples: { row: number; label: string }[];
  droppedExamples: DroppedRow[];
  tasks: {
    total: number;
    byKind: Record<string, number>;
    bySplit: Record<string, number>;
    /** Tasks whose proof is `sorry` in the file (`"reference": false`). */
    statementOnly: number;
    /** Held-out tasks whose middle some training task also has (`"novel": false`). */
    heldOutSeenInTraining: number;
  };
  timeMs: number;
}

/** One line of the pass-1 file: a row whose Lean file was written. */
export interface PendingRow {
  row: number;
  label: string;
  file: string;
  namespace: string;
  hasProof: boolean;
}

export function emptyCounts(): ImportReport["rows"] {
  return {
    read: 0,
    malformed: 0,
    duplicates: 0,
    byShape: {},
    headers: 0,
    proofNotUsed: {},
    dropped: { doesNotElaborate: 0, environment: 0, inconclusive: 0 },
    kept: 0,
    withProof: 0,
  };
}
