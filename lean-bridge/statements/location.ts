/**
 * Where `fim-rlvr import` puts what it generates in a project, named once for everything that must find it or
 * keep clear of it: the Lean files live under the project's `.fim-rlvr/` folder, which mining (dataset/
 * workspace.ts skips every dot folder) never reads, so importing never changes what `export`/`train WORKSPACE`
 * produce (issue 25); Lean elaborates them there as it does the verifier's check documents (files under the
 * project root are checked with the project's search path), and the simulator reads their proofs there.
 */

/** The namespace every imported theorem lives in (its own segment per row under it). */
export const IMPORT_NAMESPACE = "FimRlvrImported";

/** The folder, relative to the project root, that holds each import's generated Lean files (`<id>/H…/P…/R….lean`). */
export const IMPORTED_STATEMENTS_DIR = ".fim-rlvr/statements";
