/**
 * The project's own folder layout, named once for everything that writes there, reads there or must keep clear
 * of it. Everything FIM-RLVR writes inside a Lean project lives under `.fim-rlvr/`: the verifier's check
 * documents, the sandbox's temporary folder, the kernel gate's runs, the statements `fim-rlvr import` generates,
 * and the default folders of datasets, runs and evaluations. Mining never reads it (dataset/workspace.ts and the
 * simulator's reference walk skip it), so nothing written there changes what `export`/`train WORKSPACE` produce.
 *
 * Imported statements live there too: Lean elaborates them as it does the verifier's check documents (files
 * under the project root are checked with the project's search path), and the simulator reads their proofs
 * there. Imports by earlier versions wrote to PROJECT/FimRlvrImported/<id>/, among the sources: mining skips any
 * folder holding IMPORT_MARKER and lists it as skipped, with IMPORTED_FOLDER_SKIPPED as the reason.
 */
import { join, resolve } from "node:path";

/** The folder, directly under the project root, that holds everything FIM-RLVR writes into the project. */
export const PROJECT_DIR = ".fim-rlvr";

/** The verifier's check document of one slot (the scheduler's slots, `Slot<index>.lean`). */
export function slotDocumentPath(projectRoot: string, index: number): string {
  return join(projectRoot, PROJECT_DIR, `Slot${index}.lean`);
}

/** The sandbox's writable temporary folder. */
export function sandboxTmpPath(projectRoot: string): string {
  return join(resolve(projectRoot), PROJECT_DIR, "tmp");
}

/** The kernel gate's folder (inside the sandbox's writable project). */
export function kernelGatePath(projectRoot: string): string {
  return join(projectRoot, PROJECT_DIR, "gate");
}

/**
 * The kernel gate's statement references (each hole's check document compiled with \`sorry\` in the hole) and its
 * header-alone compiles: apart from the gate's folder, which the embedded gate's candidate compile server's
 * sandbox may write (each of its children only its own run folder there); only the trusted compile server, which
 * never runs candidate text, writes here.
 */
export function kernelGateReferencePath(projectRoot: string): string {
  return join(projectRoot, PROJECT_DIR, "gate-reference");
}

/**
 * The prefix-import form's compiled modules (verify/prefixModules.ts): a root of the embedded Lean's search path,
 * written only by the verifier's own compiles, read-only to everything that runs candidate code.
 */
export function prefixModulesPath(projectRoot: string): string {
  return join(resolve(projectRoot), PROJECT_DIR, "prefixes");
}

/** Where `fim-rlvr export` offers to write a project's dataset. */
export function defaultDatasetPath(projectRoot: string): string {
  return join(projectRoot, PROJECT_DIR, "dataset");
}

/** Where training writes its runs when no output folder is set. */
export function defaultRunsPath(projectRoot: string): string {
  return join(projectRoot, PROJECT_DIR, "runs");
}

/** Where the editor's evaluation of one model writes, one folder per start (`stamp`). */
export function evalRunPath(projectRoot: string, stamp: string): string {
  return join(projectRoot, PROJECT_DIR, "evals", stamp);
}

/** The namespace every imported theorem lives in (its own segment per row under it). */
export const IMPORT_NAMESPACE = "FimRlvrImported";

/** The folder, relative to the project root, that holds each import's generated Lean files (`<id>/H…/P…/R….lean`). */
export const IMPORTED_STATEMENTS_DIR = `${PROJECT_DIR}/statements`;

/** The folder of one import's generated Lean files, or of all imports' without `id`. */
export function importedStatementsPath(projectRoot: string, id?: string): string {
  return join(projectRoot, PROJECT_DIR, "statements", ...(id === undefined ? [] : [id]));
}

/** The default dataset folder of one import (`fim-rlvr import --out`). */
export function importedDatasetPath(projectRoot: string, id: string): string {
  return join(projectRoot, PROJECT_DIR, "imported", id);
}

/** The file each import writes in its folder of Lean files: the folder is ours to replace, and never mined. */
export const IMPORT_MARKER = ".fim-rlvr-import.json";

/** Why mining skips a folder holding IMPORT_MARKER outside IMPORTED_STATEMENTS_DIR (an earlier layout's). */
export const IMPORTED_FOLDER_SKIPPED =
  "Lean files written by `fim-rlvr import` (statements, not your sources): not mined; imports now write under " +
  `${IMPORTED_STATEMENTS_DIR}/, so this folder can be deleted`;
