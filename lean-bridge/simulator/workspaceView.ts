/**
 * What the simulator answers about a document as a whole, the way Lean does: the module name Lean derives
 * from the file's path (it appears in private names, `_private.<Module>.0.<name>`), the document's symbols
 * (`textDocument/documentSymbol`, src/Lean/Server/FileWorker/RequestHandling.lean), and header failures
 * (an import that cannot be found, imports out of date), reported at the top of the file.
 */
import { existsSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Command, ParsedFile } from "../lean/commands";
import { isIdRest, isIdStart } from "../lean/chars";
import type { LeanDiagnostic } from "../protocol/lean";
import type { Range } from "vscode-languageserver-protocol";
import type { LineIndex } from "../text/positions";
import { SIMULATOR_SOURCE } from "./judge";
import { IMPORTS_MUST_REBUILD, STALE_IMPORTS_INFO } from "./leanVersion";

/** LSP SymbolKind values Lean uses: 3 for namespaces and sections, 6 (method) for declarations. */
const NAMESPACE_KIND = 3;
const DECLARATION_KIND = 6;

export interface SimSymbol {
  name: string;
  kind: number;
  range: Range;
  selectionRange: Range;
  children?: SimSymbol[];
}

/** A name component as Lean prints it: escaped with «» when it is not a plain identifier. */
function escapeComponent(part: string): string {
  const plain =
    part.length > 0 &&
    isIdStart(part.codePointAt(0) ?? 0) &&
    [...part].every((ch) => isIdRest(ch.codePointAt(0) ?? 0));
  return plain ? part : `«${part}»`;
}

/** Lean's module name for a document: its path under the project, dots between the parts, no `.lean`. */
export function moduleNameOf(uri: string, cwd: string): string {
  let path: string;
  try {
    path = fileURLToPath(uri);
  } catch {
    return "_worker";
  }
  const rel = relative(cwd, path).replace(/\.lean$/, "");
  if (rel === "" || rel.startsWith("..")) return "_worker";
  return rel.split(sep).map(escapeComponent).join(".");
}

/** Packages the simulator cannot see but accepts imports from (their files live outside the workspace). */
const KNOWN_PACKAGES = new Set([
  "Init",
  "Std",
  "Lean",
  "Lake",
  "Mathlib",
  "Batteries",
  "Aesop",
  "Qq",
  "ProofWidgets",
  "Plausible",
  "ImportGraph",
  "LeanSearchClient",
]);

/** Directories directly under `dir` (none if it cannot be read). */
function subdirectories(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(dir, e.name));
  } catch {
    return [];
  }
}

/**
 * Whether an import has a module behind it: a known package, a file in the workspace (at its root or one
 * directory down, as with lake's `srcDir`), or a dependency lake fetched into `.lake/packages`. Lenient on
 * purpose: a missing module is reported only when none of these can hold it.
 */
/** Imports already found, per workspace: asked on every check, and a found module does not go away. */
const found = new Set<string>();

function moduleExists(cwd: string, module: string): boolean {
  const key = `${cwd}\0${module}`;
  if (found.has(key)) return true;
  const exists = lookUpModule(cwd, module);
  if (exists) found.add(key);
  return exists;
}

function lookUpModule(cwd: string, module: string): boolean {
  const parts = module.split(".");
  if (KNOWN_PACKAGES.has(parts[0] ?? "")) return true;
  const path = parts.join(sep) + ".lean";
  const roots = [cwd, ...subdirectories(cwd), ...subdirectories(join(cwd, ".lake", "packages"))];
  return roots.some((root) => existsSync(join(root, path)) || existsSync(join(root, parts[0] ?? "")));
}

/**
 * The error Lean reports when the header cannot be loaded, where Lean puts it: an import with no module
 * behind it at the header's first token (src/Lean/Elab/Import.lean, `processHeaderCore`: the message's
 * position is the header's, no end), or (with fault markers on) `sim:stale-imports`, Lean's "Imports are
 * out of date and must be rebuilt" from `Language.diagnosticsOfHeaderError`: from the top of the file to its
 * end.
 */
export function headerFailure(
  doc: { text: string; file: ParsedFile },
  index: LineIndex,
  cwd: string,
  faults: boolean,
): LeanDiagnostic | undefined {
  if (faults && doc.text.includes("sim:stale-imports")) {
    const whole = index.rangeAt(0, doc.text.length);
    const range = whole.end.line > 0 ? { start: whole.start, end: { line: 1, character: 0 } } : whole;
    return { source: SIMULATOR_SOURCE, severity: 1, range, fullRange: whole, message: IMPORTS_MUST_REBUILD };
  }
  const missing = doc.file.imports.find((m) => !moduleExists(cwd, m));
  if (missing) {
    const at = index.rangeAt(doc.file.commands[0]?.start ?? 0, doc.file.commands[0]?.start ?? 0);
    return {
      source: SIMULATOR_SOURCE,
      severity: 1,
      range: at,
      fullRange: at,
      message: `unknown module prefix '${missing.split(".")[0]}' (simulator: no such module in the workspace)`,
    };
  }
  return undefined;
}

/**
 * With fault markers on, `sim:stale-deps` stands for a dependency saved while the file was open: Lean's
 * sticky information (FileWorker.lean, `handleStaleDependency`), range 0:0–1:0, `fullRange` to the end,
 * no `source` (it is built by the worker, not from a message); the file is still elaborated.
 */
export function staleImports(doc: { text: string }, index: LineIndex): LeanDiagnostic | undefined {
  if (!doc.text.includes("sim:stale-deps")) return undefined;
  const whole = index.rangeAt(0, doc.text.length);
  return {
    severity: 3,
    range: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } },
    fullRange: whole,
    message: STALE_IMPORTS_INFO,
  };
}

/** Whether Lean's documentSymbol lists the command: only kind `declaration`, so neither `… in` nor `lemma`. */
function listedAsDeclaration(file: ParsedFile, command: Command): boolean {
  const decl = command.declaration;
  if (!decl || decl.keyword === "lemma") return false;
  const ts = file.tokens;
  for (let i = decl.firstToken; i <= decl.lastToken && (ts.starts[i] ?? 0) < decl.keywordStart; i++)
    if (ts.text.slice(ts.starts[i], ts.ends[i]) === "in") return false;
  return true;
}

/**
 * Lean's folding regions (RequestHandling.lean, `handleFoldingRange`): namespaces and sections from their
 * start to their `end` (to the end of the file when left open), imports and `open`s as one `imports`
 * region, a declaration from its keyword (a doc comment as its own `comment` region), any other command
 * whole; only regions that span lines.
 */
export function foldingRanges(
  file: ParsedFile,
  index: LineIndex,
): { startLine: number; endLine: number; kind: string }[] {
  const out: { startLine: number; endLine: number; kind: string }[] = [];
  const add = (from: number, to: number, kind: string) => {
    const a = index.positionAt(from).line;
    const b = index.positionAt(to).line;
    if (a !== b) out.push({ startLine: a, endLine: b, kind });
  };
  const open: number[] = [];
  const cmds = file.commands;
  for (let k = 0; k < cmds.length; k++) {
    const c = cmds[k]!;
    if (c.keyword === "namespace" || c.keyword === "section") open.push(c.start);
    else if (c.keyword === "end") {
      const start = open.pop();
      if (start !== undefined) add(start, c.end, "region");
    } else if (["import", "module", "prelude", "open"].includes(c.keyword)) {
      let last = c;
      while (["import", "module", "prelude", "open"].includes(cmds[k + 1]?.keyword ?? "")) last = cmds[++k]!;
      add(c.start, last.end, "imports");
    } else if (c.declaration && listedAsDeclaration(file, c)) {
      const d = c.declaration;
      const ts = file.tokens;
      const first = ts.kinds[c.firstToken];
      if (first !== undefined && ts.text.startsWith("/--", ts.starts[c.firstToken] ?? 0))
        add(ts.starts[c.firstToken] ?? c.start, ts.ends[c.firstToken] ?? c.start, "comment");
      add(d.keywordStart, c.end, "region");
    } else add(c.start, c.end, "region");
  }
  for (const start of open.reverse()) add(start, file.tokens.text.length, "region");
  return out;
}

/** The document's symbols as Lean lists them. */
export function documentSymbols(file: ParsedFile, index: LineIndex): SimSymbol[] {
  const root: SimSymbol[] = [];
  const stack: { symbol: SimSymbol }[] = [];
  const siblings = () => (stack.length ? (stack[stack.length - 1]!.symbol.children ??= []) : root);
  for (const command of file.commands) {
    const range = index.rangeAt(command.start, command.end);
    const ts = file.tokens;
    const word = (k: number) => (k <= command.lastToken ? ts.text.slice(ts.starts[k], ts.ends[k]) : "");
    if (command.keyword === "namespace" || command.keyword === "section") {
      let k = command.firstToken;
      while (k <= command.lastToken && word(k) !== command.keyword) k++;
      const name = word(k + 1);
      const symbol: SimSymbol = {
        name: name || "<section>",
        kind: NAMESPACE_KIND,
        range,
        selectionRange: range,
        children: [],
      };
      siblings().push(symbol);
      stack.push({ symbol });
    } else if (command.keyword === "end") {
      const closed = stack.pop();
      if (closed) closed.symbol.range = { start: closed.symbol.range.start, end: range.end };
    } else if (command.declaration && listedAsDeclaration(file, command)) {
      const decl = command.declaration;
      const name =
        decl.name ??
        (decl.keyword === "instance" ? `instance ${decl.statement.slice(8).trim()}` : decl.keyword);
      siblings().push({ name, kind: DECLARATION_KIND, range, selectionRange: range });
    }
  }
  // Containers never closed run to the end of the file, as in Lean.
  const end = index.positionAt(file.tokens.text.length);
  for (const open of stack) open.symbol.range = { start: open.symbol.range.start, end };
  return root;
}
