/**
 * Export pass 1: reads the workspace file by file, writes each file's record to files.jsonl and each hole
 * that survives the filters to a pending tasks file, at once. Only one file's text and holes are in
 * memory at a time; what is kept across files is counts, a hash per (statement, middle) pair for
 * de-duplication, and each declaration's task count (for the splits).
 */
import { createHash } from "node:crypto";
import { parseFile } from "../lean/commands";
import { mineText, type HoleKind } from "../holes/mine";
import type { JsonlWriter } from "./jsonl";
import { CodePointIndex, declKeyOf, fileRecord, taskRecord } from "./records";
import { declarationKey } from "./split";
import { listLeanFiles, readSource, type SkippedFile } from "./workspace";
import { isModuleFile } from "../verify/checkDocument";
import { featuresOfToolchain, moduleFilesUncheckable } from "../verify/toolchain";
import { readToolchain } from "../server/launch";

export interface MiningOptions {
  workspace: string;
  kinds: HoleKind[];
  maxMiddleChars?: number;
  maxFileBytes: number;
  cancelled: () => boolean;
  onProgress?: (done: number, total: number) => void;
}

export interface MiningResult {
  files: { mined: number; skipped: SkippedFile[] };
  declarations: { total: number; withTacticProofs: number; skipped: Record<string, number> };
  found: Record<string, number>;
  malformedDropped: number;
  /**
   * Holes in files the project's Lean cannot axiom-check (`module` files where `#print axioms` is refused or
   * not known to answer): never offered as tasks, so no task is one its verifier can only reject.
   */
  uncheckableDropped: number;
  /** Why, when any were dropped. */
  uncheckableReason?: string;
  duplicatesDropped: number;
  tooLongDropped: number;
  /** Tasks written to the pending file. */
  pending: number;
  /** Task count per declaration (`declarationKey`). */
  tasksPerDecl: Map<string, number>;
  /** Where each file's header (imports) ends, for the lean-grpo view. */
  headerEnds: Map<string, number>;
}

function count(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}

/** A short digest of a (statement, middle) pair: 27 characters per task instead of both texts. */
function pairDigest(statement: string, middle: string): string {
  return createHash("sha1").update(statement).update("\0").update(middle).digest("base64");
}

export async function mineWorkspace(
  options: MiningOptions,
  filesOut: JsonlWriter,
  pendingOut: JsonlWriter,
): Promise<{ kind: "ok"; result: MiningResult } | { kind: "cancelled" }> {
  const listed = listLeanFiles(options.workspace);
  const result: MiningResult = {
    files: { mined: 0, skipped: [...listed.skipped] },
    declarations: { total: 0, withTacticProofs: 0, skipped: {} },
    found: {},
    malformedDropped: 0,
    uncheckableDropped: 0,
    duplicatesDropped: 0,
    tooLongDropped: 0,
    pending: 0,
    tasksPerDecl: new Map(),
    headerEnds: new Map(),
  };
  const seen = new Set<string>();
  const moduleRefusal = moduleFilesUncheckable(featuresOfToolchain(readToolchain(options.workspace)));
  for (const [k, path] of listed.files.entries()) {
    // Yield to the event loop between files so a Ctrl-C (or the editor's Cancel) is seen promptly.
    await new Promise<void>((resolve) => setImmediate(resolve));
    if (options.cancelled()) return { kind: "cancelled" };
    options.onProgress?.(k, listed.files.length);
    const read = readSource(options.workspace, path, options.maxFileBytes);
    if (read.kind === "skipped") {
      result.files.skipped.push(read.skipped);
      continue;
    }
    const { file, text } = read.source;
    filesOut.write(fileRecord(file, text));
    result.files.mined++;
    const parsed = parseFile(text);
    result.headerEnds.set(file, parsed.headerEnd);
    const mined = mineText(text, parsed);
    result.declarations.total += mined.declarations;
    let skippedHere = 0;
    for (const [reason, n] of Object.entries(mined.skipped))
      if (n) {
        count(result.declarations.skipped, reason, n);
        skippedHere += n;
      }
    result.declarations.withTacticProofs += mined.declarations - skippedHere;
    result.malformedDropped += mined.malformedHoles;
    const codePoints = new CodePointIndex(text);
    const uncheckable = moduleRefusal !== undefined && isModuleFile(parsed);
    for (const hole of mined.holes) {
      count(result.found, hole.kind);
      if (!options.kinds.includes(hole.kind)) continue;
      if (uncheckable) {
        result.uncheckableDropped++;
        result.uncheckableReason = `holes in \`module\` files: ${moduleRefusal}`;
        continue;
      }
      // Identical (statement, middle) pairs teach nothing new: keep the first.
      const digest = pairDigest(hole.statement, hole.middle);
      if (seen.has(digest)) {
        result.duplicatesDropped++;
        continue;
      }
      seen.add(digest);
      if (options.maxMiddleChars !== undefined && hole.middle.length > options.maxMiddleChars) {
        result.tooLongDropped++;
        continue;
      }
      // The split is decided once all declarations are known (pass 3); "train" is a placeholder.
      pendingOut.write(taskRecord(file, mined.imports, hole, "train", codePoints));
      result.pending++;
      const key = declarationKey(file, declKeyOf(hole));
      result.tasksPerDecl.set(key, (result.tasksPerDecl.get(key) ?? 0) + 1);
    }
  }
  options.onProgress?.(listed.files.length, listed.files.length);
  return { kind: "ok", result };
}
