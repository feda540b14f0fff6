// Counts the folder-level import cycles in lean-bridge/: reads every .ts file's imports with TypeScript's own
// import scanner (ts.preProcessFile: imports, `import type`, `export … from`, `import()` and `require`), draws one
// arrow per pair of folders, and counts the graph's strongly connected components of more than one folder. It is a
// second opinion on test/unit/layers.test.ts, which parses imports from the syntax tree instead, and prints each
// cycle's folders. Exit 0 when there is none, 1 otherwise. Usage: node scripts/folder-cycles.mjs
import { readFileSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const bridge = join(dirname(dirname(fileURLToPath(import.meta.url))), "lean-bridge");

function tsFiles(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) tsFiles(path, out);
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

const graph = new Map();
const folderOf = (path) => relative(bridge, path).split(sep)[0];
for (const file of tsFiles(bridge)) {
  const from = folderOf(file);
  if (!graph.has(from)) graph.set(from, new Set());
  for (const { fileName } of ts.preProcessFile(readFileSync(file, "utf8"), true, true).importedFiles) {
    if (!fileName.startsWith(".")) continue;
    const target = resolve(dirname(file), fileName);
    if (relative(bridge, target).startsWith("..")) continue;
    const to = folderOf(target);
    if (to !== from) graph.get(from).add(to);
  }
}

// Tarjan's strongly connected components.
let counter = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
function connect(v) {
  index.set(v, counter);
  low.set(v, counter++);
  stack.push(v);
  onStack.add(v);
  for (const w of graph.get(v) ?? []) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) === index.get(v)) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) cycles.push(component.sort());
  }
}
for (const v of [...graph.keys()].sort()) if (!index.has(v)) connect(v);

const arrows = [...graph.values()].reduce((n, s) => n + s.size, 0);
console.log(`folders: ${graph.size}, arrows between folders: ${arrows}`);
for (const cycle of cycles) console.log(`cycle: ${cycle.join(", ")}`);
console.log(`folder-level import cycles in lean-bridge: ${cycles.length}`);
process.exitCode = cycles.length === 0 ? 0 : 1;
