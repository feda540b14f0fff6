/**
 * What the simulator knows to be a correct proof: every declaration body in the workspace's own .lean files
 * (indexed by statement), plus alternatives listed per declaration in a sidecar oracle file:
 *
 *   { "alternatives": { "Ns.thm_name": ["by omega", "by\n  simp"] }, "axioms": { "Ns.thm_name": ["propext"] } }
 *
 * Comparison is modulo whitespace and comments: bodies are compared as sequences of token texts.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { parseFile } from "../lean/commands";
import { lex } from "../lean/lexer";
import { isCommentKind, tokenText } from "../lean/tokens";

export interface OracleFile {
  alternatives?: Record<string, string[]>;
  axioms?: Record<string, string[]>;
}

/** Token texts of `text` without comments: the simulator's notion of "the same proof". */
export function codeTokens(text: string): string[] {
  const ts = lex(text);
  const out: string[] = [];
  for (let i = 0; i < ts.count; i++) if (!isCommentKind(ts.kinds[i] ?? 0)) out.push(tokenText(ts, i));
  return out;
}

export function normalizedKey(text: string): string {
  return codeTokens(text).join(" ");
}

const SKIPPED_DIRS = new Set([".lake", ".git", "node_modules", "dist", ".fim-rlvr", "build"]);

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
    const files = listLeanFiles(this.root);
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
        const key = normalizedKey(d.statement);
        const list = bodies.get(key) ?? [];
        list.push(codeTokens(text.slice(d.bodyStart, d.end)));
        bodies.set(key, list);
      }
    }
    this.bodies = bodies;
  }

  /** Accepted bodies (as token lists) for a declaration; empty when the simulator cannot judge it. */
  accepted(statement: string, names: (string | undefined)[]): string[][] {
    const key = normalizedKey(statement);
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
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      return {
        kind: "error",
        message: `${path}: the oracle must be a JSON object with "alternatives" and/or "axioms"`,
      };
    return { kind: "ok", oracle: parsed as OracleFile };
  } catch (error) {
    return { kind: "error", message: `${path}: ${error instanceof Error ? error.message : String(error)}` };
  }
}
