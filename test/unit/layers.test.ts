/**
 * The floor plan of lean-bridge/: every folder has a floor, and a file imports only from folders on lower floors
 * (type-only imports, `export … from`, `import()` and `require` included), so no import climbs and no two folders
 * import each other, directly or around a loop. docs/ARCHITECTURE.md shows the same floors, in the same order.
 * The trainer's layers are kept the same way (trainer/tests/test_layers.py).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "typescript";
import { REPO } from "../helpers";

const BRIDGE = join(REPO, "lean-bridge");

/**
 * The floors, top first. Folders on one floor are peers: they do not import each other. A new folder gets the
 * floor just above everything it imports and below everything that imports it (and a row in ARCHITECTURE.md).
 */
export const FLOORS: readonly { floor: number; folders: readonly string[] }[] = [
  { floor: 13, folders: ["cli"] },
  { floor: 12, folders: ["fill", "filter"] },
  { floor: 11, folders: ["eval"] },
  { floor: 10, folders: ["models"] },
  { floor: 9, folders: ["statements", "train"] },
  { floor: 8, folders: ["serve"] },
  { floor: 7, folders: ["dataset"] },
  { floor: 6, folders: ["verifiers"] },
  { floor: 5, folders: ["kimina", "simulator"] },
  { floor: 4, folders: ["verify"] },
  { floor: 3, folders: ["embedded"] },
  { floor: 2, folders: ["holes", "server"] },
  { floor: 1, folders: ["lean"] },
  { floor: 0, folders: ["charts", "protocol", "text", "util"] },
];

/**
 * Floors whose folder may not exist yet: a backend written on its own branch gets its floor first, so that its
 * first import is held to it. Empty while every floor's folder exists.
 */
const NOT_YET_WRITTEN = new Set<string>();

/** One import of one lean-bridge file: the file, what it names, and how (for the message). */
export interface ImportEdge {
  /** The importing file, relative to lean-bridge/ with `/` separators. */
  file: string;
  /** The import's target as written. */
  specifier: string;
  /** The target, relative to lean-bridge/ with `/` separators; undefined for a package. */
  target: string | undefined;
  line: number;
}

/** Folders by floor, from FLOORS. */
export function floorOf(floors: typeof FLOORS = FLOORS): Map<string, number> {
  const rank = new Map<string, number>();
  for (const { floor, folders } of floors) for (const f of folders) rank.set(f, floor);
  return rank;
}

function tsFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) tsFiles(path, out);
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

const toPosix = (path: string) => path.split(sep).join("/");

/**
 * Every module one source file names: `import` (value, `type`, side effect), `import x = require()`,
 * `export … from`, `import("…")` in code and in types, and `require("…")`. A dynamic import whose target is not a
 * string literal is returned with the specifier `<not a literal>`, so the checker can refuse it.
 */
export function importsOf(fileName: string, text: string): { specifier: string; line: number }[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: { specifier: string; line: number }[] = [];
  const add = (node: ts.Node, specifier: ts.Node | undefined) => {
    const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    found.push({
      specifier: specifier && ts.isStringLiteralLike(specifier) ? specifier.text : "<not a literal>",
      line,
    });
  };
  const visit = (node: ts.Node) => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) {
      if (node.moduleSpecifier) add(node, node.moduleSpecifier);
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, node.moduleReference.expression);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      add(node, ts.isLiteralTypeNode(arg) ? arg.literal : undefined);
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isImport = callee.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire = ts.isIdentifier(callee) && callee.text === "require";
      if (isImport || isRequire) add(node, node.arguments[0]);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every import of every .ts file under lean-bridge/. */
function bridgeImports(): ImportEdge[] {
  const edges: ImportEdge[] = [];
  for (const path of tsFiles(BRIDGE)) {
    const file = toPosix(relative(BRIDGE, path));
    for (const { specifier, line } of importsOf(path, readFileSync(path, "utf8"))) {
      const target = specifier.startsWith(".")
        ? toPosix(relative(BRIDGE, resolve(dirname(path), specifier)))
        : undefined;
      edges.push({ file, specifier, target, line });
    }
  }
  return edges;
}

const folderOf = (path: string) => (path.includes("/") ? path.slice(0, path.indexOf("/")) : undefined);

/**
 * What is wrong with these imports under this floor plan, one sentence each: an import that climbs to a higher
 * floor or crosses to a peer on its own floor, one from a folder without a floor, one that leaves lean-bridge/,
 * one that is not a string literal, and a file directly in lean-bridge/ (every file lives in a folder).
 */
export function floorViolations(edges: readonly ImportEdge[], floors: typeof FLOORS = FLOORS): string[] {
  const rank = floorOf(floors);
  const out: string[] = [];
  const where = (e: ImportEdge) => `lean-bridge/${e.file}:${e.line} imports "${e.specifier}"`;
  for (const e of edges) {
    const from = folderOf(e.file);
    if (from === undefined) {
      out.push(`lean-bridge/${e.file} is not in a folder: move it into the folder of its floor`);
      continue;
    }
    if (e.specifier === "<not a literal>") {
      out.push(`${where(e)}: name the module with a string literal, so that its floor can be checked`);
      continue;
    }
    if (e.target === undefined) continue;
    if (e.target.startsWith("..")) {
      out.push(`${where(e)}, outside lean-bridge/: the host's library imports only itself and packages`);
      continue;
    }
    const to = folderOf(e.target);
    if (to === undefined || to === from) continue;
    const a = rank.get(from);
    const b = rank.get(to);
    if (a === undefined || b === undefined) {
      const missing = a === undefined ? from : to;
      out.push(
        `${where(e)}: lean-bridge/${missing}/ has no floor: add it to FLOORS in test/unit/layers.test.ts`,
      );
    } else if (b > a)
      out.push(
        `${where(e)}: it climbs from ${from}/ (floor ${a}) to ${to}/ (floor ${b}); move the code it needs down`,
      );
    else if (b === a)
      out.push(`${where(e)}: ${from}/ and ${to}/ share floor ${a} and must not import each other`);
  }
  return out;
}

/** The folder graph's strongly connected components of more than one folder (Tarjan): its import loops. */
export function folderCycles(edges: readonly ImportEdge[]): string[][] {
  const graph = new Map<string, Set<string>>();
  for (const e of edges) {
    const from = folderOf(e.file);
    const to = e.target === undefined ? undefined : folderOf(e.target);
    if (from === undefined || to === undefined || from === to || e.target!.startsWith("..")) continue;
    if (!graph.has(from)) graph.set(from, new Set());
    if (!graph.has(to)) graph.set(to, new Set());
    graph.get(from)!.add(to);
  }
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  const connect = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) cycles.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);
  return cycles;
}

test("every folder of lean-bridge has a floor, and every floor's folder exists (or is on its way)", () => {
  const folders = readdirSync(BRIDGE).filter((f) => statSync(join(BRIDGE, f)).isDirectory());
  const rank = floorOf();
  const unranked = folders.filter((f) => !rank.has(f));
  assert.deepEqual(
    unranked.map(
      (f) =>
        `lean-bridge/${f}/ has no floor: add it to FLOORS in test/unit/layers.test.ts (above every folder it imports, ` +
        "below every folder that imports it) and to the floor plan in docs/ARCHITECTURE.md",
    ),
    [],
  );
  const stale = [...rank.keys()].filter((f) => !folders.includes(f) && !NOT_YET_WRITTEN.has(f));
  assert.deepEqual(
    stale.map(
      (f) =>
        `FLOORS names lean-bridge/${f}/, which does not exist: remove it (and its row in ARCHITECTURE.md)`,
    ),
    [],
  );
  const names = FLOORS.flatMap((f) => f.folders);
  assert.equal(new Set(names).size, names.length, "a folder is on two floors");
  const numbers = FLOORS.map((f) => f.floor);
  assert.deepEqual(
    numbers,
    numbers.map((_, k) => numbers.length - 1 - k),
    "floors are numbered from the top down to 0",
  );
});

test("no import in lean-bridge climbs a floor or crosses to a peer (value, type-only, re-export, dynamic)", () => {
  const edges = bridgeImports();
  assert.ok(edges.length > 500, `only ${edges.length} imports read: the parser missed most of them`);
  assert.deepEqual(floorViolations(edges), []);
});

test("lean-bridge's folders import each other in no loop", () => {
  assert.deepEqual(folderCycles(bridgeImports()), []);
});

test("the floor rule can fail: a climbing import, a peer's, a folder without a floor, each kind of import", () => {
  const one = (file: string, specifier: string): ImportEdge[] => {
    const path = join(BRIDGE, file);
    return importsOf(path, specifier).map((i) => ({
      file,
      specifier: i.specifier,
      target: i.specifier.startsWith(".")
        ? toPosix(relative(BRIDGE, resolve(dirname(path), i.specifier)))
        : undefined,
      line: i.line,
    }));
  };
  const spellings = [
    'import { startTraining } from "../train/session";',
    'import type { TrainingOptions } from "../train/session";',
    'export { startTraining } from "../train/session";',
    'export type * from "../train/session";',
    'const session = await import("../train/session");',
    'const session = require("../train/session");',
    'import session = require("../train/session");',
    'let t: import("../train/session").TrainingOptions;',
    'import "../train/session";',
  ];
  for (const spelling of spellings) {
    const edges = one("verify/pool.ts", spelling);
    assert.equal(edges.length, 1, `the parser did not read: ${spelling}`);
    const said = floorViolations(edges);
    assert.equal(said.length, 1, `${spelling} was not refused`);
    assert.match(said[0]!, /climbs from verify\/ \(floor 4\) to train\/ \(floor 9\)/);
  }
  assert.deepEqual(floorViolations(one("train/session.ts", 'import { x } from "../verify/pool";')), []);
  assert.match(
    floorViolations(one("kimina/verifier.ts", 'import { x } from "../simulator/reference";'))[0] ?? "",
    /share floor 5/,
  );
  assert.match(
    floorViolations(one("verify/pool.ts", 'import { x } from "../newFolder/thing";'))[0] ?? "",
    /lean-bridge\/newFolder\/ has no floor: add it to FLOORS/,
  );
  assert.match(
    floorViolations(one("verify/pool.ts", "const m = await import(name);"))[0] ?? "",
    /string literal/,
  );
  assert.match(
    floorViolations(one("verify/pool.ts", 'import { x } from "../../extension/main";'))[0] ?? "",
    /outside lean-bridge/,
  );
});

test("the loop finder can fail: two folders importing each other, and a loop through three", () => {
  const edge = (file: string, target: string): ImportEdge => ({ file, specifier: "x", target, line: 1 });
  assert.deepEqual(folderCycles([edge("a/x.ts", "b/y"), edge("b/y.ts", "a/x")]), [["a", "b"]]);
  assert.deepEqual(
    folderCycles([
      edge("a/x.ts", "b/y"),
      edge("b/y.ts", "c/z"),
      edge("c/z.ts", "a/x"),
      edge("c/z.ts", "d/w"),
    ]),
    [["a", "b", "c"]],
  );
  assert.deepEqual(folderCycles([edge("a/x.ts", "b/y"), edge("a/x.ts", "a/z")]), []);
});

test("docs/ARCHITECTURE.md's floor plan lists the same floors and folders, in the same order", () => {
  const doc = readFileSync(join(REPO, "docs", "ARCHITECTURE.md"), "utf8");
  const section = doc.split(/^## /m).find((s) => s.startsWith("Floors of lean-bridge"));
  assert.ok(section, 'docs/ARCHITECTURE.md has no "## Floors of lean-bridge" section');
  const rows = [...section.matchAll(/^\|\s*(\d+)\s*\|([^|]*)\|/gm)].map((m) => ({
    floor: Number(m[1]),
    folders: [...m[2]!.matchAll(/`([\w-]+)\/`/g)].map((f) => f[1]!),
  }));
  assert.deepEqual(rows, FLOORS);
});

test("an independent count (scripts/folder-cycles.mjs, TypeScript's own import scanner) finds 0 folder loops", () => {
  const script = join(REPO, "scripts", "folder-cycles.mjs");
  assert.ok(existsSync(script));
  const run = spawnSync(process.execPath, [script], { cwd: REPO, encoding: "utf8", timeout: 60_000 });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  assert.match(run.stdout, /^folder-level import cycles in lean-bridge: 0$/m);
});
