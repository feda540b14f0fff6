/**
 * What the simulator answers about a document as a whole, the way Lean does: the module name Lean derives
 * from the file's path (it appears in private names, `_private.<Module>.0.<name>`), the document's symbols
 * (`textDocument/documentSymbol`, src/Lean/Server/FileWorker/RequestHandling.lean), and header failures
 * (an import that cannot be found, imports out of date), reported at the top of the file.
 */
import { existsSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { ParsedFile } from "../lean/commands";
import { isIdRest, isIdStart } from "../lean/chars";
import type { LeanDiagnostic } from "../protocol/lean";
import type { Range } from "vscode-languageserver-protocol";
import type { LineIndex } from "../text/positions";
import { SIMULATOR_SOURCE } from "./judge";

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
 * The error Lean reports when the header cannot be loaded: an import with no module behind it, or (with
 * fault markers on) `sim:stale-imports`, which stands for Lean's "Imports are out of date" message.
 */
export function headerFailure(
  doc: { text: string; file: ParsedFile },
  index: LineIndex,
  cwd: string,
  faults: boolean,
): LeanDiagnostic | undefined {
  const top = index.rangeAt(0, Math.min(doc.text.indexOf("\n") >>> 0, doc.text.length));
  const at = (message: string): LeanDiagnostic => ({
    source: SIMULATOR_SOURCE,
    severity: 1,
    range: top,
    fullRange: top,
    message,
  });
  if (faults && doc.text.includes("sim:stale-imports"))
    return at(
      'Imports are out of date and must be rebuilt; use the "Restart File" command in your editor. (simulator)',
    );
  const missing = doc.file.imports.find((m) => !moduleExists(cwd, m));
  if (missing)
    return at(
      `unknown module prefix '${missing.split(".")[0]}' (simulator: no such module in the workspace)`,
    );
  return undefined;
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
    } else if (command.declaration) {
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
