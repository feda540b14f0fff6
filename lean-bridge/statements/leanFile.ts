/**
 * The Lean file a statement row becomes: its header (imports and `open`s as the row gave them), its context,
 * then the theorem inside a namespace of its own (so a dataset's `add_zero` never clashes with Mathlib's),
 * proved by the row's own tactic proof or by `sorry`. The proof is the hole. Rows with the same header get
 * byte-identical header text, so a Lean worker that loaded it for one row reuses it for the next.
 */
import { createHash } from "node:crypto";
import { normalisedCode } from "../lean/sameCode";
import { isBlank, signatureTokens, type StatementRow } from "./shapes";

import { IMPORT_NAMESPACE } from "../util/projectLayout";

export { IMPORT_NAMESPACE };

export interface GeneratedFile {
  text: string;
  /** The theorem's namespace in the file (`FimRlvrImported.R000042`). */
  namespace: string;
  /** Whether the proof is the row's own (a reference middle) or `sorry` (statement only). */
  hasProof: boolean;
}

export function rowNamespace(row: number): string {
  return `${IMPORT_NAMESPACE}.R${String(row).padStart(6, "0")}`;
}

export function generatedFile(row: StatementRow): GeneratedFile {
  const namespace = rowNamespace(row.row);
  const theorem = row.proved ?? `${row.head} := by\n  sorry`;
  const parts = [
    row.header,
    isBlank(row.context) ? "" : row.context,
    `namespace ${namespace}`,
    theorem,
    `end ${namespace}`,
  ];
  const text = parts.filter((p) => p.trim() !== "").join("\n\n") + "\n";
  return { text, namespace, hasProof: row.proved !== undefined };
}

/** A short hash naming a header (its folder): rows with equal headers share it. */
export function headerKey(header: string): string {
  return createHash("sha256").update(normalisedCode(header)).digest("hex").slice(0, 10);
}

/**
 * Two rows state the same theorem when header, context and statement (after the name) have the same code
 * tokens: layout, comments and the theorem's name do not count.
 */
export function statementKey(row: StatementRow): string {
  return createHash("sha1")
    .update(normalisedCode(row.header))
    .update("\0")
    .update(normalisedCode(row.context))
    .update("\0")
    .update(signatureTokens(row.head, row.name !== undefined).join(" "))
    .digest("base64");
}

/** A file name (and Lean module component) for a row: letters, digits and underscores, starting with a letter. */
export function rowFileName(row: StatementRow): string {
  const safe = (row.name ?? "").replace(/[^A-Za-z0-9_]/g, "").slice(0, 40);
  return `R${String(row.row).padStart(6, "0")}${safe ? `_${safe}` : ""}.lean`;
}
