/**
 * Where `fim-rlvr import` writes the Lean files of a dataset's statements: PROJECT/.fim-rlvr/statements/<id>/.
 * Inside the project, so the project's Lean checks them (the verifier never opens a task's file in Lean: it reads
 * the file's text and checks a document of its own under `.fim-rlvr/`, whose imports `lake serve` resolves in
 * the project like any file there); under `.fim-rlvr/`, which mining of the workspace skips (dataset/workspace.ts),
 * so an import never changes what `export WORKSPACE` or `train WORKSPACE` produce (issue 25).
 *
 * Imports before this layout wrote to PROJECT/FimRlvrImported/<id>/, into the user's sources. Those folders are
 * known by the marker file each import leaves in its folder; mining skips a folder holding it and says why.
 *
 * No imports here: the miner, the simulator and the verifier read these names without depending on the importer.
 */

/** The folder, relative to the project, holding one folder of Lean files per imported dataset. */
export const IMPORTED_SOURCES_DIR = ".fim-rlvr/statements";

/** The file each import writes in its folder of Lean files: it says the folder is ours to replace. */
export const IMPORT_MARKER = ".fim-rlvr-import.json";

/** Where imports before this layout put their Lean files (the first segment of those files' paths). */
export const LEGACY_IMPORTED_DIR = "FimRlvrImported";

/** Whether a task's file (relative to the project, either slash) is one `fim-rlvr import` wrote. */
export function isImportedSource(file: string): boolean {
  const path = file.replace(/\\/g, "/");
  return path.startsWith(`${IMPORTED_SOURCES_DIR}/`) || path.startsWith(`${LEGACY_IMPORTED_DIR}/`);
}

/** Why mining skips a folder holding IMPORT_MARKER (an import's Lean files outside IMPORTED_SOURCES_DIR). */
export const IMPORTED_FOLDER_SKIPPED =
  "Lean files written by `fim-rlvr import` (statements, not your sources): not mined; imports now write under " +
  `${IMPORTED_SOURCES_DIR}/, so this folder can be deleted`;
