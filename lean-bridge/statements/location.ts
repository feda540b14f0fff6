/**
 * Where `fim-rlvr import` puts what it generates in a project, named once for everything that must find it or
 * keep clear of it: the Lean files live under the project's `.fim-rlvr/` folder, which mining (dataset/
 * workspace.ts skips every dot folder) never reads, so importing never changes what `export`/`train WORKSPACE`
 * produce (issue 25); Lean elaborates them there as it does the verifier's check documents (files under the
 * project root are checked with the project's search path), and the simulator reads their proofs there.
 * Imports before issue 25 wrote to PROJECT/FimRlvrImported/<id>/, among the sources: mining skips any folder
 * holding IMPORT_MARKER and lists it as skipped, with IMPORTED_FOLDER_SKIPPED as the reason.
 */

/** The namespace every imported theorem lives in (its own segment per row under it). */
export const IMPORT_NAMESPACE = "FimRlvrImported";

/** The folder, relative to the project root, that holds each import's generated Lean files (`<id>/H…/P…/R….lean`). */
export const IMPORTED_STATEMENTS_DIR = ".fim-rlvr/statements";

/** The file each import writes in its folder of Lean files: the folder is ours to replace, and never mined. */
export const IMPORT_MARKER = ".fim-rlvr-import.json";

/** Why mining skips a folder holding IMPORT_MARKER outside IMPORTED_STATEMENTS_DIR (an earlier layout's). */
export const IMPORTED_FOLDER_SKIPPED =
  "Lean files written by `fim-rlvr import` (statements, not your sources): not mined; imports now write under " +
  `${IMPORTED_STATEMENTS_DIR}/, so this folder can be deleted`;
