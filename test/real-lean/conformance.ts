/**
 * The simulator's conformance set (test/fixtures/conformance): a prelude workspace of our own, with the holes and
 * candidates of cases.json, that both the simulator and the embedded Lean can judge. This module reads the set,
 * finds each case's hole, and lays the workspace out in a temporary folder with the project's prelude library
 * (lean-prelude/) copied in beside it, so that `import FimPrelude` names a module of the workspace itself.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, sep } from "node:path";
import type { Range } from "vscode-languageserver-protocol";
import { parseFile } from "../../lean-bridge/lean/commands";
import { LineIndex } from "../../lean-bridge/text/positions";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { REPO } from "../helpers";
import { copyPreludeLibrary } from "./preludeLean";

export const CONFORMANCE_FIXTURE = join(REPO, "test", "fixtures", "conformance");

/** One document of the set: a hole in a workspace file and the candidate put in it. */
export interface ConformanceCase {
  /** Unique, `declaration/what`: the name docs/LEAN_FIDELITY_SIMULATOR.md lists a difference under. */
  id: string;
  /** The file, relative to the workspace root. */
  file: string;
  /** The text the declaration starts with (unique in the file), e.g. `theorem and_swap`. */
  declaration: string;
  /** Where the hole starts within the declaration's proof; absent: the hole is the whole tactic proof. */
  from?: string;
  /** The text the hole ends with, searched from `from` on. */
  to?: string;
  candidate: string;
  /** What the case stands for (the kind of candidate the simulator judges). */
  covers: string;
}

export function readConformanceCases(): ConformanceCase[] {
  const parsed = JSON.parse(readFileSync(join(CONFORMANCE_FIXTURE, "cases.json"), "utf8")) as {
    cases: ConformanceCase[];
  };
  const ids = new Set<string>();
  for (const c of parsed.cases) {
    if (ids.has(c.id)) throw new Error(`cases.json: the id ${c.id} is used twice`);
    ids.add(c.id);
  }
  return parsed.cases;
}

/** The case's hole in `text`: its `from … to` inside the declaration, or the declaration's whole tactic proof. */
export function holeOf(text: string, c: ConformanceCase): Range {
  const at = text.indexOf(c.declaration);
  if (at < 0 || text.indexOf(c.declaration, at + 1) >= 0)
    throw new Error(`${c.id}: \`${c.declaration}\` must occur exactly once in ${c.file}`);
  const decl = parseFile(text)
    .commands.map((command) => command.declaration)
    .find((d) => d !== undefined && d.start <= at && at < d.end);
  if (!decl || decl.byStart === undefined || decl.byEnd === undefined)
    throw new Error(`${c.id}: \`${c.declaration}\` has no tactic proof in ${c.file}`);
  const index = new LineIndex(text);
  if (c.from === undefined) {
    let start = decl.byStart + 2;
    while (/\s/.test(text[start] ?? "")) start++;
    return index.rangeAt(start, decl.byEnd);
  }
  const start = text.indexOf(c.from, decl.byStart);
  const to = c.to ?? c.from;
  const end = text.indexOf(to, start) + to.length;
  if (start < 0 || start >= decl.byEnd || end < start + to.length || end > decl.byEnd)
    throw new Error(`${c.id}: \`${c.from}\` … \`${to}\` is not in the proof of \`${c.declaration}\``);
  return index.rangeAt(start, end);
}

/** The conformance workspace with the prelude library beside it, in a temporary folder. */
export function conformanceWorkspace(): { root: string; remove: () => void } {
  const root = mkdtempSync(join(tmpdir(), "fim-conformance-"));
  // Sources only: a .lake/ (or .fim-rlvr/) left by building or checking either folder in place would make the
  // copy look built.
  const notBuilt = (src: string) => !src.split(sep).some((part) => part === ".lake" || part === ".fim-rlvr");
  cpSync(CONFORMANCE_FIXTURE, root, { recursive: true, filter: notBuilt });
  copyPreludeLibrary(root);
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/** A verdict as the comparison sees it: its kind and its partial reward, e.g. `incomplete 0.25`. */
export function outcomeOf(v: Verdict): string {
  const reward = rewardOf(v, "partial").reward;
  return `${v.kind} ${Number(reward.toFixed(4))}`;
}

/** A difference the docs list: the document, and what each verifier says of it. */
export interface ListedDifference {
  id: string;
  simulator: string;
  lean: string;
}

/**
 * The differences docs/LEAN_FIDELITY_SIMULATOR.md lists, from its table's rows
 * `` | `id` | simulator outcome | Lean outcome | why | ``.
 */
export function listedDifferences(markdown: string): ListedDifference[] {
  const rows: ListedDifference[] = [];
  for (const line of markdown.split("\n")) {
    const m = /^\|\s*`([^`]+)`\s*\|\s*([^|]+?)\s*\|\s*([^|]+?)\s*\|/.exec(line);
    if (m) rows.push({ id: m[1]!, simulator: m[2]!, lean: m[3]! });
  }
  return rows;
}
