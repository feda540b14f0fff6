/**
 * Export pass 1: reads the workspace file by file, writes each file's record to files.jsonl and each hole
 * that survives the filters to a pending tasks file, at once. Only one file's text and holes are in
 * memory at a time; what is kept across files is counts, a hash per (statement, middle) pair for
 * de-duplication, and each declaration's task count (for the splits).
 */
import { createHash } from "node:crypto";
import { parseFile } from "../lean/commands";
import { mineText, type HoleKind } from "../holes/mine";
import { normalisedMiddle, scopesInEffect } from "./context";
import type { JsonlWriter } from "./jsonl";
import { CodePointIndex, declKeyOf, fileRecord, taskRecord, type TaskRecord } from "./records";
import { declarationKey } from "./split";
import { listLeanFiles, readSource, type SkippedFile } from "./workspace";

export interface MiningOptions {
  workspace: string;
  kinds: HoleKind[];
  maxMiddleChars?: number;
  maxFileBytes: number;
  /** The prefix window of each task (`--context-chars`). */
  contextChars: number;
  cancelled: () => boolean;
  onProgress?: (done: number, total: number) => void;
}

export interface MiningResult {
  files: { mined: number; skipped: SkippedFile[] };
  declarations: { total: number; withTacticProofs: number; skipped: Record<string, number> };
  found: Record<string, number>;
  malformedDropped: number;
  duplicatesDropped: number;
  tooLongDropped: number;
  /** Tasks written to the pending file. */
  pending: number;
  /** Task count per declaration (`declarationKey`). */
  tasksPerDecl: Map<string, number>;
  /** Declaration keys by the index pending tasks carry in `_decl`. */
  declKeys: string[];
  /** Where each file's header (imports) ends, for the lean-grpo view. */
  headerEnds: Map<string, number>;
}

/**
 * A task as pass 1 writes it: the record, led by its declaration's index (into `declKeys`) and a digest of
 * its normalised middle (`middleKeyOf`), which pass 3 reads to assign splits and tell novel middles without re-lexing. Pass 3
 * drops both.
 */
export type PendingTask = { _decl: number; _mk: number } & TaskRecord;

/**
 * A normalised middle as a number: 52 bits of its SHA-1 (a chance of about 1 in 10,000 that two of 1.5
 * million different middles collide). A number, not a string, so that the sets pass 3 keeps hold no text.
 */
export function middleKeyOf(normalised: string): number {
  return parseInt(createHash("sha1").update(normalised).digest("hex").slice(0, 13), 16);
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
    duplicatesDropped: 0,
    tooLongDropped: 0,
    pending: 0,
    tasksPerDecl: new Map(),
    declKeys: [],
    headerEnds: new Map(),
  };
  const seen = new Set<string>();
  const declIndex = new Map<string, number>();
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
    const scopes = scopesInEffect(parsed);
    const context = {
      file,
      imports: mined.imports,
      scope: [] as string[],
      codePoints,
      contextChars: options.contextChars,
    };
    let command = 0;
    for (const hole of mined.holes) {
      count(result.found, hole.kind);
      if (!options.kinds.includes(hole.kind)) continue;
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
      // Holes come in file order: the command holding this one is at or after the previous hole's.
      while (command < parsed.commands.length - 1 && parsed.commands[command]!.end < hole.start) command++;
      context.scope = scopes[command] ?? [];
      const key = declarationKey(file, declKeyOf(hole));
      let decl = declIndex.get(key);
      if (decl === undefined) {
        decl = result.declKeys.length;
        declIndex.set(key, decl);
        result.declKeys.push(key);
      }
      const middleKey = middleKeyOf(normalisedMiddle(parsed.tokens, hole.start, hole.end));
      // The split is decided once all declarations are known (pass 3); "train" is a placeholder.
      const pending: PendingTask = { _decl: decl, _mk: middleKey, ...taskRecord(hole, "train", context) };
      pendingOut.write(pending);
      result.pending++;
      result.tasksPerDecl.set(key, (result.tasksPerDecl.get(key) ?? 0) + 1);
    }
  }
  options.onProgress?.(listed.files.length, listed.files.length);
  return { kind: "ok", result };
}
