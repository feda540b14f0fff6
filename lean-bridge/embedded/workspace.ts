/**
 * Which files of a workspace the embedded Lean can judge. It has Lean's runtime, elaborator and kernel but no
 * standard library, so a file elaborates only when it starts with `prelude` (no implicit `import Init`) and
 * imports nothing but the workspace's own modules, which are themselves such files. And there is no Lake: a
 * `lakefile.lean` (Lean code that needs Lake to run) or a `lakefile.toml` that requires other packages cannot
 * be honoured. Each module is read once, with the project's own lexer; nothing here runs Lean.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { lex } from "../lean/lexer";
import { TokenKind, isCommentKind, tokenText, type TokenStream } from "../lean/tokens";

export interface WorkspaceModule {
  /** The module name, e.g. `Ws.Base` for `Ws/Base.lean`. */
  name: string;
  /** Path relative to the workspace root, with `/` separators. */
  file: string;
  /** The modules it imports, in header order. */
  imports: string[];
}

/** Why a file cannot be judged, and what to do about it. */
export interface Refusal {
  reason: string;
  action: string;
}

export interface WorkspaceView {
  /** Every module the embedded Lean can build and judge, in an order where each comes after its imports. */
  modules: WorkspaceModule[];
  /** The files it cannot judge (relative path → why), each with its own reason. */
  refused: Map<string, Refusal>;
  /** Why no file can be judged at all (the lakefile, named by `file`), if so. */
  workspaceRefusal?: Refusal & { file: string };
}

const PRELUDE_ACTION =
  "start the file with `prelude` and declare what it uses in the workspace's own modules (docs/LEAN_VERSIONS.md, \"The embedded Lean\"), or install Lean with elan to check it against Lean's standard library";

/** Folders never searched for modules: Lake's output and caches, version control, this program's own. */
function skippedFolder(name: string): boolean {
  return name.startsWith(".") || name === "node_modules";
}

function leanFiles(root: string, dir = root, out: string[] = []): string[] {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    // Symbolic links are not followed: a link back up the tree would never end.
    if (entry.isDirectory() && !skippedFolder(entry.name)) leanFiles(root, join(dir, entry.name), out);
    else if (
      entry.isFile() &&
      entry.name.endsWith(".lean") &&
      !(dir === root && entry.name === "lakefile.lean")
    )
      out.push(relative(root, join(dir, entry.name)).split(sep).join("/"));
  }
  return out;
}

/** `A/B.lean` → `A.B`. */
export function moduleNameOf(file: string): string {
  return file
    .replace(/\.lean$/, "")
    .split("/")
    .join(".");
}

/** A name as Lean reads it: `«A».B` and `A.B` are the same module. */
function plainName(name: string): string {
  return name.replace(/[«»]/g, "");
}

export type Header = { kind: "prelude"; imports: string[] } | { kind: "not-prelude"; found: string };

/** Index of the next token that is not a comment. */
function nextCode(ts: TokenStream, i: number): number {
  while (i < ts.count && isCommentKind(ts.kinds[i] ?? 0)) i++;
  return i;
}

/**
 * Reads a file's header as Lean's `Module.header` does: an optional `module`, then `prelude`, then imports
 * (`import M`, with the module system's `public`/`meta` before and `all` after `import`). Comments and blank
 * space may come anywhere.
 */
export function readHeader(text: string): Header {
  const ts = lex(text);
  let i = nextCode(ts, 0);
  const word = (k: number) => (k < ts.count ? tokenText(ts, k) : "");
  if (word(i) === "module") i = nextCode(ts, i + 1);
  if (word(i) !== "prelude") return { kind: "not-prelude", found: i < ts.count ? word(i) : "an empty file" };
  i = nextCode(ts, i + 1);
  const imports: string[] = [];
  for (;;) {
    let k = i;
    while (word(k) === "public" || word(k) === "meta") k = nextCode(ts, k + 1);
    if (word(k) !== "import") break;
    k = nextCode(ts, k + 1);
    if (word(k) === "all") k = nextCode(ts, k + 1);
    if (k >= ts.count || ts.kinds[k] !== TokenKind.Ident) break;
    imports.push(plainName(word(k)));
    i = nextCode(ts, k + 1);
  }
  return { kind: "prelude", imports };
}

/** Why Lake's configuration cannot be honoured without Lake, if it cannot. */
function lakefileRefusal(root: string): (Refusal & { file: string }) | undefined {
  if (existsSync(join(root, "lakefile.lean")))
    return {
      file: "lakefile.lean",
      reason:
        "the workspace is configured by lakefile.lean, Lean code that only Lake can run, and the embedded Lean has no Lake",
      action:
        'describe the workspace in a lakefile.toml without dependencies, or install Lean with elan (README.md, "With real Lean")',
    };
  const toml = join(root, "lakefile.toml");
  if (existsSync(toml) && /^\s*\[\[\s*require\s*\]\]/m.test(readFileSync(toml, "utf8")))
    return {
      file: "lakefile.toml",
      reason:
        "lakefile.toml requires other packages ([[require]]), which the embedded Lean cannot fetch or build",
      action: 'install Lean with elan so that Lake builds the dependencies (README.md, "With real Lean")',
    };
  return undefined;
}

/** Reads the workspace: every module it can judge, in build order, and every file it cannot, with why. */
export function viewWorkspace(root: string): WorkspaceView {
  const refused = new Map<string, Refusal>();
  const files = leanFiles(root).sort();
  const whole = lakefileRefusal(root);
  if (whole) {
    for (const f of files) refused.set(f, { reason: whole.reason, action: whole.action });
    return { modules: [], refused, workspaceRefusal: whole };
  }
  const byName = new Map<string, WorkspaceModule>();
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(join(root, file), "utf8");
    } catch (error) {
      refused.set(file, {
        reason: `${file} could not be read (${error instanceof Error ? error.message : String(error)})`,
        action: "make the file readable",
      });
      continue;
    }
    const header = readHeader(text);
    if (header.kind === "not-prelude") {
      refused.set(file, {
        reason: `${file} does not start with \`prelude\` (it starts with ${header.found === "an empty file" ? "nothing" : `\`${header.found}\``}), so it imports Init, Lean's standard library, which the embedded Lean does not have`,
        action: PRELUDE_ACTION,
      });
      continue;
    }
    byName.set(moduleNameOf(file), { name: moduleNameOf(file), file, imports: header.imports });
  }
  // Imports outside the workspace, then (transitively) imports of refused modules; then the build order.
  const order: WorkspaceModule[] = [];
  const state = new Map<string, "visiting" | "done">();
  const refuseModule = (m: WorkspaceModule, why: Refusal) => {
    refused.set(m.file, why);
    byName.delete(m.name);
  };
  const visit = (m: WorkspaceModule, path: string[]): boolean => {
    const now = state.get(m.name);
    if (now === "done") return byName.has(m.name);
    if (now === "visiting") {
      const cycle = [...path.slice(path.indexOf(m.name)), m.name].join(" → ");
      refuseModule(m, {
        reason: `${m.file} is part of an import cycle (${cycle}), which Lean refuses`,
        action: "break the cycle",
      });
      return false;
    }
    state.set(m.name, "visiting");
    for (const imported of m.imports) {
      const dep = byName.get(imported);
      const depFile = `${imported.split(".").join("/")}.lean`;
      const why = refused.get(depFile);
      if (!dep && why) {
        refuseModule(m, {
          reason: `${m.file} imports ${imported}, which the embedded Lean cannot judge: ${why.reason}`,
          action: why.action,
        });
        break;
      }
      if (!dep) {
        refuseModule(m, {
          reason: `${m.file} imports ${imported}, which is not a module of this workspace (no ${depFile}); the embedded Lean has only the workspace's own modules`,
          action: `add ${depFile} to the workspace, or install Lean with elan if ${imported} comes from a package (README.md, "With real Lean")`,
        });
        break;
      }
      if (!visit(dep, [...path, m.name])) {
        const depWhy = refused.get(dep.file);
        if (byName.has(m.name))
          refuseModule(m, {
            reason: `${m.file} imports ${imported}, which the embedded Lean cannot judge: ${depWhy?.reason ?? "it is refused"}`,
            action: depWhy?.action ?? PRELUDE_ACTION,
          });
        break;
      }
    }
    state.set(m.name, "done");
    if (!byName.has(m.name)) return false;
    order.push(m);
    return true;
  };
  for (const m of [...byName.values()]) visit(m, []);
  return { modules: order.filter((m) => byName.has(m.name)), refused };
}

/** The first file the embedded Lean cannot judge, with why; undefined when it can judge every one. */
export function firstRefusal(view: WorkspaceView): { file: string; refusal: Refusal } | undefined {
  if (view.workspaceRefusal) {
    const { file, ...refusal } = view.workspaceRefusal;
    return { file, refusal };
  }
  const first = [...view.refused.entries()].sort(([a], [b]) => a.localeCompare(b))[0];
  return first ? { file: first[0], refusal: first[1] } : undefined;
}
