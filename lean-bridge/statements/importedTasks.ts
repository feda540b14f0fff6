/**
 * Tasks of one generated file, in the dataset format `fim-rlvr export` writes (tasks.jsonl; README.md
 * "Datasets"): the theorem's whole proof (`proof` kind) and, when the row came with its own proof, the
 * finer holes the miner cuts inside it (steps, block, tactic). A statement-only row's proof is `sorry`: its
 * one task says `"reference": false` (no reference middle: nothing to imitate in a warm start).
 */
import type { Range } from "vscode-languageserver-protocol";
import {
  DEFAULT_CONTEXT_CHARS,
  boundPrefix,
  boundSuffix,
  scopesInEffect,
  suffixChars,
} from "../dataset/context";
import { CodePointIndex, declKeyOf, type TaskRecord } from "../dataset/records";
import { holeId } from "../dataset/split";
import { parseFile } from "../lean/commands";
import { mineText, type HoleKind, type MinedHole } from "../holes/mine";

/**
 * An imported task: a dataset row in the form `import` writes it, with the declaration's context inline (the
 * generated files are one statement each, so there is nothing for a contexts.jsonl row to share).
 */
export type ImportedTask = Omit<TaskRecord, "context"> & {
  declKind: string;
  declStart: Range["start"];
  imports: string[];
  statement: string;
  variables: string[];
  /** `namespace`, `section`, `open` and `universe` commands in effect at the declaration, in file order. */
  scope: string[];
};

export interface FileTasks {
  /** The hole of the whole proof (what the statement pre-check puts `sorry` in). */
  proofHole: Range | undefined;
  tasks: ImportedTask[];
}

export function tasksOfFile(
  file: string,
  text: string,
  options: { namespace: string; hasProof: boolean; kinds: readonly HoleKind[]; contextChars?: number },
): FileTasks {
  const parsed = parseFile(text);
  const mined = mineText(text, parsed);
  const scopes = scopesInEffect(parsed);
  const inTheorem = (h: MinedHole) => h.decl.startsWith(`${options.namespace}.`);
  const proof = mined.holes.find((h) => h.kind === "proof" && inTheorem(h));
  if (!proof) return { proofHole: undefined, tasks: [] };
  const commandIndex = parsed.commands.findIndex((c) => c.declaration?.fullName === proof.decl);
  const scope = scopes[commandIndex] ?? [];
  const codePoints = new CodePointIndex(text);
  const contextChars = options.contextChars ?? DEFAULT_CONTEXT_CHARS;
  const wanted = (h: MinedHole) =>
    inTheorem(h) && options.kinds.includes(h.kind) && (options.hasProof || h.kind === "proof");
  const tasks = mined.holes.filter(wanted).map((hole): ImportedTask => ({
    id: holeId(file, declKeyOf(hole), hole.kind, hole.start, hole.end, hole.middle),
    file,
    kind: hole.kind,
    split: "train",
    // Every row has every key: `novel` is set on held-out tasks once splits are known; an import has no
    // families to say how a task is held out, and no goal.
    novel: null,
    heldOut: null,
    decl: hole.decl,
    declKind: hole.declKind,
    range: hole.range,
    middle: hole.middle,
    indent: hole.indent,
    imports: mined.imports,
    scope,
    statement: hole.statement,
    prefix: boundPrefix(hole.declPrefix, contextChars),
    suffix: boundSuffix(hole.declSuffix, suffixChars(contextChars)),
    declStart: hole.declStart,
    variables: hole.variables,
    offsets: { start: hole.start, end: hole.end },
    offsetsCodePoints: {
      start: codePoints.codePointOffset(hole.start),
      end: codePoints.codePointOffset(hole.end),
    },
    goal: null,
    reference: options.hasProof ? null : false,
  }));
  return { proofHole: proof.range, tasks };
}
