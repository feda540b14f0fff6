/**
 * Export pass 1: reads the workspace file by file, writes each file's record to files.jsonl, each declaration
 * with holes to contexts.jsonl, and each hole that survives the filters as a sketch (taskSketches.ts), at
 * once. Only one file's text and holes are in memory at a time; what is kept across files is counts, a hash
 * per (statement, middle) pair for de-duplication, each task's head (`PendingHeads`) and each declaration's
 * task count (for the splits).
 */
import { isModuleFile, parseFile } from "../lean/commands";
import { createHash } from "node:crypto";
import { mineDeclarations, type HoleKind, type MinedHole } from "../holes/mine";
import { scopesInEffect, tokensMiddleKey } from "./context";
import { hash53, hash53Units } from "./hash53";
import { unitsOf } from "../text/units";
import { HashSet53 } from "./hashSet";
import type { JsonlWriter } from "./jsonl";
import { CodePointIndex } from "./records";
import { FileRows } from "./rowBytes";
import { JsonText, OffsetTables } from "./jsonText";
import { OpenGoals, SORRY_IN_PROOF, TERM_SORRY } from "./openGoals";
import { declarationKey } from "./split";
import { familyOf } from "./splitPlan";
import { PendingHeads } from "./pendingHeads";
import type { TaskSketchWriter } from "./taskSketches";
import { listLeanFiles, readSource, type SkippedFile } from "./workspace";
import { featuresOfToolchain, moduleFilesUncheckable } from "../verify/toolchain";
import { readToolchain } from "../server/launch";

/**
 * Default `--max-middle-chars`: a hole whose middle is longer (UTF-16 units) is no task, and is counted. 1,024
 * characters of Lean are some 300 to 400 tokens, more than the completion budgets GRPO runs usually give, while the
 * few holes past that (5.5% of PrimeNumberTheoremAnd's, mostly runs of long steps) held a fifth of tasks.jsonl: the
 * bound takes it from 11.4 to 9.4 times the workspace, within the 10× a dataset may take, without shortening the
 * prompts' context (docs/BENCHMARKS.md, "tasks.jsonl on a real project"). `--max-middle-chars` widens it.
 */
export const DEFAULT_MAX_MIDDLE_CHARS = 1024;

export interface MiningOptions {
  workspace: string;
  kinds: HoleKind[];
  /** Holes whose middle is longer (UTF-16 units) are dropped and counted (`tooLongDropped`). */
  maxMiddleChars: number;
  maxFileBytes: number;
  /** The prefix window of each task (`--context-chars`). */
  contextChars: number;
  cancelled: () => boolean;
  onProgress?: (done: number, total: number) => void;
}

/** How many unreadable declarations report.json names (all are counted). */
export const UNREADABLE_NAMED = 50;

export interface MiningResult {
  files: { mined: number; skipped: SkippedFile[] };
  /**
   * `withoutProofs`: declarations whose whole proof is `sorry` (openGoals.ts), each one task without a
   * reference; `skipped` counts those with a `sorry` inside a proof (`sorry-in-proof`) among the other reasons.
   */
  declarations: {
    total: number;
    withTacticProofs: number;
    withoutProofs: number;
    skipped: Record<string, number>;
    /**
     * Declarations whose tactic proof does not read as whole tactics (a syntax error, as a rule: mine.ts
     * `unreadable`), named: all of them are counted in `unreadableCount`, the first UNREADABLE_NAMED listed.
     */
    unreadableCount: number;
    unreadable: { file: string; line: number; decl: string }[];
  };
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
  /** Tasks sketched. */
  pending: number;
  /** Task count per declaration (`declarationKey`). */
  tasksPerDecl: Map<string, number>;
  /** Declaration keys by the index tasks' sketches carry (also their `context` row). */
  declKeys: string[];
  /** Each declaration's family (splitPlan.ts `familyOf`), by the same index. */
  declFamilies: string[];
  /** Each declaration's name as JSON (UTF-8 bytes, one character per byte), by index. */
  declNames: string[];
  /** Each task's declaration, middle key and kind, in the sketches' order. */
  heads: PendingHeads;
  /** Where each file's header (imports) ends, for the lean-grpo view. */
  headerEnds: Map<string, number>;
}

function count(map: Record<string, number>, key: string, by = 1): void {
  map[key] = (map[key] ?? 0) + by;
}

export async function mineWorkspace(
  options: MiningOptions,
  filesOut: JsonlWriter,
  contextsOut: JsonlWriter,
  sketchesOut: TaskSketchWriter,
): Promise<{ kind: "ok"; result: MiningResult } | { kind: "cancelled" }> {
  const listed = listLeanFiles(options.workspace);
  const result: MiningResult = {
    files: { mined: 0, skipped: [...listed.skipped] },
    declarations: {
      total: 0,
      withTacticProofs: 0,
      withoutProofs: 0,
      skipped: {},
      unreadableCount: 0,
      unreadable: [],
    },
    found: {},
    malformedDropped: 0,
    uncheckableDropped: 0,
    duplicatesDropped: 0,
    tooLongDropped: 0,
    pending: 0,
    tasksPerDecl: new Map(),
    declKeys: [],
    declFamilies: [],
    declNames: [],
    heads: new PendingHeads(),
    headerEnds: new Map(),
  };
  const seen = new HashSet53();
  // One file's JsonText and task ids are alive at a time: their tables and buffer are reused.
  const offsetTables = new OffsetTables();
  const idBuffer = { buffer: Buffer.alloc(0) };

  const declIndex = new Map<string, number>();
  const tasksOfDecl: number[] = [];
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
    const { file, text, utf8 } = read.source;
    result.files.mined++;
    const parsed = parseFile(text);
    result.headerEnds.set(file, parsed.headerEnd);
    // The file as JSON, with its UTF-8 offsets and astral characters found in the same walk.
    const json = new JsonText(text, undefined, offsetTables);
    const codePoints = new CodePointIndex(text, json.pairs);
    const uncheckable = moduleRefusal !== undefined && isModuleFile(parsed);
    const scopes = scopesInEffect(parsed);
    const context = {
      file,
      imports: parsed.imports,
      scope: [] as string[],
      codePoints,
      contextChars: options.contextChars,
    };
    const rows = new FileRows(text, context, json, utf8, idBuffer);
    const units = unitsOf(text);
    // The file's hash from its bytes when they are the text's UTF-8 (not encoded again).
    rows.writeFile(
      filesOut,
      createHash("sha256")
        .update(utf8 ?? Buffer.from(text, "utf8"))
        .digest("hex"),
    );
    let command = 0;
    let lastDeclStart: MinedHole["declStart"] | undefined;
    let lastDecl: number | undefined;
    let declKey = "";
    let lastStatement: string | undefined;
    let statementHash = 0;
    const openGoals = new OpenGoals(parsed.tokens);
    let openHere = 0;
    // Each declaration's holes as they are found: the file's holes are never all held at once.
    const onHoles = (found: MinedHole[]) => {
      // A statement without a proof is its proof hole alone, without a reference; a proof with a `sorry`
      // inside is no task at all (openGoals.ts).
      const open = openGoals.classify(found);
      if (open.kind === "sorry-in-proof") {
        count(result.declarations.skipped, SORRY_IN_PROOF);
        openHere++;
        return;
      }
      const reference = open.kind === "proved";
      if (!reference) {
        result.declarations.withoutProofs++;
        openHere++;
      }
      const holes = open.kind === "statement" ? [open.hole] : found;
      for (const hole of holes) {
        count(result.found, hole.kind);
        if (!options.kinds.includes(hole.kind)) continue;
        if (uncheckable) {
          result.uncheckableDropped++;
          result.uncheckableReason = `holes in \`module\` files: ${moduleRefusal}`;
          continue;
        }
        // Identical (statement, middle) pairs teach nothing new: keep the first.
        // Holes of one declaration share its statement (the same string): hash it once.
        if (hole.statement !== lastStatement) {
          lastStatement = hole.statement;
          statementHash = hash53(hole.statement);
        }
        // A (statement, middle) pair as a number: a set of these instead of both texts per task.
        const digest = hash53Units(units, hole.start, hole.end, statementHash);
        if (!seen.addNew(digest)) {
          result.duplicatesDropped++;
          continue;
        }
        if (hole.middle.length > options.maxMiddleChars) {
          result.tooLongDropped++;
          continue;
        }
        // Holes come in file order: the command holding this one is at or after the previous hole's.
        while (command < parsed.commands.length - 1 && parsed.commands[command]!.end < hole.start) command++;
        context.scope = scopes[command] ?? [];
        if (hole.declStart !== lastDeclStart) {
          // A new declaration (its holes share one `declStart` and come together): look its index up once.
          lastDeclStart = hole.declStart;
          declKey = declarationKey(file, rows.declKey(hole));
          lastDecl = declIndex.get(declKey);
        }
        const key = declKey;
        let decl = lastDecl;
        if (decl === undefined) {
          // The declaration's first task: its context row, once. Rows are numbered as written.
          decl = result.declKeys.length;
          declIndex.set(key, decl);
          result.declKeys.push(key);
          result.declFamilies.push(familyOf(file, context.scope));
          result.declNames.push(rows.declName(hole));
          tasksOfDecl.push(0);
          rows.writeContext(contextsOut, hole, decl);
          lastDecl = decl;
        }
        const middleKey = tokensMiddleKey(parsed.tokens, hole.firstToken, hole.lastToken);
        // The row is written once the split is known (pass 3), from the sketch.
        rows.sketch(sketchesOut, hole, decl, result.files.mined - 1, reference);
        result.heads.push(decl, middleKey, hole.kind, reference);
        result.pending++;
        tasksOfDecl[decl]!++;
      }
    };
    const mined = mineDeclarations(text, parsed, onHoles);
    // Of the term proofs, those that are `sorry` alone: counted apart, with what to do (openGoals.ts).
    const termSorries = openGoals.termSorries(parsed);
    if (termSorries) {
      mined.skipped["term-proof"] -= termSorries;
      count(result.declarations.skipped, TERM_SORRY, termSorries);
    }
    result.declarations.total += mined.declarations;
    let skippedHere = termSorries;
    for (const [reason, n] of Object.entries(mined.skipped))
      if (n) {
        count(result.declarations.skipped, reason, n);
        skippedHere += n;
      }
    result.declarations.withTacticProofs += mined.declarations - skippedHere - openHere;
    result.malformedDropped += mined.malformedHoles;
    for (const u of mined.unreadable) {
      if (result.declarations.unreadableCount++ < UNREADABLE_NAMED)
        result.declarations.unreadable.push({ file, line: u.line + 1, decl: u.name });
    }
  }
  // In declaration order, as the first task of each was written.
  result.declKeys.forEach((key, decl) => result.tasksPerDecl.set(key, tasksOfDecl[decl]!));
  options.onProgress?.(listed.files.length, listed.files.length);
  return { kind: "ok", result };
}
