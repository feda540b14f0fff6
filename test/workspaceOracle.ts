/**
 * lean-env's oracle (lean-env/fim-oracle.json, written by lean-env/generate_examples.py) as verifier tasks: each
 * entry is a candidate for its declaration's whole-proof hole, and a few candidates outside every menu that
 * Lean's documented semantics make fail. Shared by the simulator's test (test/simulator/oracle.test.ts) and the
 * real-Lean one (test/real-lean/oracle.test.ts), so both judge the very same candidates.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Range } from "vscode-languageserver-protocol";
import { parseFile, type Declaration } from "../lean-bridge/lean/commands";
import { WORKSPACE_ORACLE } from "../lean-bridge/simulator/reference";
import { EXAMPLE, proofHole } from "./helpers";

export interface OracleFileJson {
  alternatives: Record<string, string[]>;
  families: Record<string, { describe: string; instances: number; proved: number }>;
}

export function readWorkspaceOracle(): OracleFileJson {
  return JSON.parse(readFileSync(join(EXAMPLE, WORKSPACE_ORACLE), "utf8")) as OracleFileJson;
}

/** A declaration of lean-env with a tactic proof, where its file holds it. */
export interface WorkspaceDeclaration {
  file: string;
  text: string;
  decl: Declaration;
  /** The whole tactic proof (after `by`). */
  hole: Range;
  /** Whether the file's proof is `sorry` (an open goal). */
  open: boolean;
}

let declarations: ReadonlyMap<string, WorkspaceDeclaration> | undefined;

/**
 * Every declaration of lean-env with a tactic proof, by full name (files in the order FimExamples.lean imports
 * them). Read once per test process: the files do not change during a run, and tests ask for it per task.
 */
export function workspaceDeclarations(): ReadonlyMap<string, WorkspaceDeclaration> {
  declarations ??= readWorkspaceDeclarations();
  return declarations;
}

function readWorkspaceDeclarations(): Map<string, WorkspaceDeclaration> {
  const files = readFileSync(join(EXAMPLE, "FimExamples.lean"), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("import "))
    .map((l) => `${l.slice("import ".length).replace(/\./g, "/")}.lean`);
  const out = new Map<string, WorkspaceDeclaration>();
  for (const file of files) {
    const text = readFileSync(join(EXAMPLE, file), "utf8");
    for (const command of parseFile(text).commands) {
      const decl = command.declaration;
      if (!decl?.fullName || decl.bodyKind !== "tactic" || decl.byEnd === undefined) continue;
      const body = text.slice(decl.byStart! + 2, decl.byEnd).trim();
      out.set(decl.fullName, { file, text, decl, hole: proofHole(text, decl.name!), open: body === "sorry" });
    }
  }
  return out;
}

/** An oracle entry (`by` and the proof as the file would hold it) as a candidate for the whole-proof hole. */
export function oracleCandidate(entry: string): string {
  const afterBy = entry.replace(/^by\b/, "");
  const lines = afterBy.replace(/^[ \t]*\n/, "").split("\n");
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => l.length - l.trimStart().length));
  return lines
    .map((l) => l.slice(indent))
    .join("\n")
    .trim();
}

export interface OracleTask {
  name: string;
  file: string;
  hole: Range;
  candidate: string;
}

/** Every oracle entry as a task; an entry naming no declaration of lean-env throws. */
export function oracleTasks(): OracleTask[] {
  const decls = workspaceDeclarations();
  const tasks: OracleTask[] = [];
  for (const [name, entries] of Object.entries(readWorkspaceOracle().alternatives)) {
    const d = decls.get(name);
    if (!d) throw new Error(`the oracle names ${name}, which no lean-env file declares with a tactic proof`);
    for (const entry of entries)
      tasks.push({ name, file: d.file, hole: d.hole, candidate: oracleCandidate(entry) });
  }
  return tasks;
}

/** The goal of a declaration's statement: its text after the last top-level ` : `. */
function statementType(decl: Declaration): string {
  return decl.statement.slice(decl.statement.lastIndexOf(" : ") + 3);
}

/** The hypotheses a statement names: `(h : T)` binders whose type is a proposition's (not `Nat`, `Prop`, …). */
function hypotheses(decl: Declaration): [string, string][] {
  const out: [string, string][] = [];
  for (const m of decl.statement.matchAll(/\(([^():]+) : ([^()]+)\)/g)) {
    const [names, type] = [m[1]!.trim().split(/\s+/), m[2]!.trim()];
    if (["Nat", "Prop", "Bool", "List Nat"].includes(type)) continue;
    for (const n of names) out.push([n, type]);
  }
  return out;
}

/**
 * Candidates outside every menu that fail in Lean by its documented semantics, one per declaration where one
 * applies: `exact trivial` (a proof of `True`, which no statement here is); `decide` where the statement has
 * variables (its `Decidable` instance cannot evaluate them, or there is none); `exact h` with a hypothesis
 * whose type is not the goal; `omega` on goals of propositional variables (no arithmetic in them).
 */
export function outsideMenuTasks(every = 1): OracleTask[] {
  const tasks: OracleTask[] = [];
  let k = 0;
  for (const [name, d] of workspaceDeclarations()) {
    if (!name.startsWith("FimExamples.") || k++ % every !== 0) continue;
    const goal = statementType(d.decl);
    const push = (candidate: string) => tasks.push({ name, file: d.file, hole: d.hole, candidate });
    push("exact trivial");
    const afterName = d.decl.statement.slice(d.decl.statement.indexOf(d.decl.name!) + d.decl.name!.length);
    if (/^\s*[({]/.test(afterName) || /[∀∃]/.test(goal)) push("decide");
    const wrong = hypotheses(d.decl).find(([, type]) => type !== goal);
    if (wrong) push(`exact ${wrong[0]}`);
    if (/\(\S+( \S+)* : Prop\)/.test(d.decl.statement) && !/[0-9<≤=]/.test(goal)) push("omega");
  }
  return tasks;
}
