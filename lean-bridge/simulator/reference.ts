/**
 * What the simulator knows to be a correct proof: every declaration body in the workspace's own .lean files
 * (indexed by statement), plus alternatives listed per declaration in an oracle file:
 *
 *   { "alternatives": { "Ns.thm_name": ["by omega", "by\n  simp"] }, "axioms": { "Ns.thm_name": ["propext"] } }
 *
 * The oracle is `--oracle FILE` when given, else the workspace's own `fim-oracle.json` (at its root) when it has
 * one: lean-env's is written by lean-env/generate_examples.py, the proofs it knows for each of its statements,
 * `sorry`s included. The simulator names the oracle it judges with (`serverInfo`, hence every verdict's label):
 * what it accepts beyond the workspace's proofs is that file's model of the statements, not new mathematics.
 *
 * Comparison is modulo whitespace and comments: bodies are compared as sequences of token texts.
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { parseFile } from "../lean/commands";
import { codeTokens, normalisedCode } from "../lean/sameCode";
import { PROJECT_DIR, importedStatementsPath } from "../util/projectLayout";
import { unreadableReason } from "../util/unreadable";

export interface OracleFile {
  alternatives?: Record<string, string[]>;
  axioms?: Record<string, string[]>;
}

const SKIPPED_DIRS = new Set([".lake", ".git", "node_modules", "dist", PROJECT_DIR, "build"]);

function listLeanFiles(root: string, out: { path: string; mtimeMs: number }[] = [], depth = 0): typeof out {
  if (depth > 12) return out;
  let entries: import("node:fs").Dirent[];
  try {
    entries = readdirSync(root, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (entry.name.startsWith(".") || SKIPPED_DIRS.has(entry.name)) continue;
    const path = join(root, entry.name);
    if (entry.isDirectory()) listLeanFiles(path, out, depth + 1);
    else if (entry.isFile() && entry.name.endsWith(".lean")) {
      try {
        out.push({ path, mtimeMs: statSync(path).mtimeMs });
      } catch {
        // Vanished between listing and stat.
      }
    }
  }
  return out;
}

export class ReferenceIndex {
  private bodies = new Map<string, string[][]>();
  private signature = "";
  private lastRefresh = -Infinity;

  constructor(
    private readonly root: string,
    private readonly oracle: OracleFile = {},
  ) {}

  /**
   * Re-reads the workspace when its files changed since the last look. Looking means walking the tree, so
   * it happens at most once a second unless `force` (a lookup that found nothing) asks for it.
   */
  refresh(force = false): void {
    const now = performance.now();
    if (!force && now - this.lastRefresh < 1000) return;
    this.lastRefresh = now;
    // The project's own files, and the statements `fim-rlvr import` generated (under .fim-rlvr/, which the
    // walk skips with every dot folder): their rows' own proofs are references like any other.
    const files = listLeanFiles(this.root);
    listLeanFiles(importedStatementsPath(this.root), files);
    const signature = files.map((f) => `${f.path}:${f.mtimeMs}`).join("|");
    if (signature === this.signature) return;
    this.signature = signature;
    const bodies = new Map<string, string[][]>();
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(file.path, "utf8").replace(/\r\n?/g, "\n");
      } catch {
        continue;
      }
      for (const command of parseFile(text).commands) {
        const d = command.declaration;
        if (!d || d.bodyStart === undefined) continue;
        const key = normalisedCode(d.statement);
        const list = bodies.get(key) ?? [];
        list.push(codeTokens(text.slice(d.bodyStart, d.end)));
        bodies.set(key, list);
      }
    }
    this.bodies = bodies;
  }

  /** Accepted bodies (as token lists) for a declaration; empty when the simulator cannot judge it. */
  accepted(statement: string, names: (string | undefined)[]): string[][] {
    const key = normalisedCode(statement);
    let found = this.bodies.get(key);
    if (!found) {
      this.refresh(true);
      found = this.bodies.get(key);
    }
    const result = found ? [...found] : [];
    for (const name of names) {
      if (!name) continue;
      for (const alt of this.oracle.alternatives?.[name] ?? []) result.push(codeTokens(alt));
    }
    return result;
  }

  axiomsOf(names: (string | undefined)[]): string[] {
    for (const name of names) if (name && this.oracle.axioms?.[name]) return this.oracle.axioms[name] ?? [];
    return [];
  }
}

export function loadOracle(
  path: string | undefined,
): { kind: "ok"; oracle: OracleFile } | { kind: "error"; message: string } {
  if (!path) return { kind: "ok", oracle: {} };
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return { kind: "error", message: `${path}: ${unreadableReason(error)}` };
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    return {
      kind: "error",
      message: `${path}: not JSON (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  const problem = oracleProblem(parsed);
  if (problem) return { kind: "error", message: `${path}: ${problem}` };
  return { kind: "ok", oracle: parsed as OracleFile };
}

/** What is wrong with a parsed oracle file, if anything: both maps must list strings per declaration. */
function oracleProblem(parsed: unknown): string | undefined {
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    return 'the oracle must be a JSON object with "alternatives" and/or "axioms"';
  for (const key of ["alternatives", "axioms"] as const) {
    const map = (parsed as Record<string, unknown>)[key];
    if (map === undefined) continue;
    if (typeof map !== "object" || map === null || Array.isArray(map))
      return `"${key}" must map declaration names to lists of strings`;
    for (const [name, list] of Object.entries(map))
      if (!Array.isArray(list) || list.some((item) => typeof item !== "string"))
        return `"${key}"."${name}" must be a list of strings`;
  }
  return undefined;
}

/** The oracle file a workspace carries at its root, used by default wherever the simulator checks it. */
export const WORKSPACE_ORACLE = "fim-oracle.json";

/** The oracle the simulator judges with, and how it names it (absent: the workspace's own proofs only). */
export interface ResolvedOracle {
  oracle: OracleFile;
  /** "fim-oracle.json (427 declarations)": what the simulator says it judges with. */
  source?: string;
}

/**
 * The oracle of a simulator running in `root`: the file `explicit` names (`--oracle`), else `root`'s own
 * `fim-oracle.json` when there is one, else none. A file that cannot be read is an error, never ignored: the
 * simulator would otherwise judge with less than the user meant.
 */
export function resolveOracle(
  root: string,
  explicit?: string,
): { kind: "ok"; resolved: ResolvedOracle } | { kind: "error"; message: string } {
  const path = explicit ?? join(root, WORKSPACE_ORACLE);
  if (explicit === undefined && !existsSync(path)) return { kind: "ok", resolved: { oracle: {} } };
  const loaded = loadOracle(path);
  if (loaded.kind === "error") return loaded;
  const count = Object.keys(loaded.oracle.alternatives ?? {}).length;
  return {
    kind: "ok",
    resolved: {
      oracle: loaded.oracle,
      source: `${basename(path)} (${count} declaration${count === 1 ? "" : "s"})`,
    },
  };
}
