#!/usr/bin/env node
/**
 * Whether two builds of the CLI export byte for byte the same datasets: `node scripts/compare-exports.mjs
 * OLD_CLI NEW_CLI [WORKSPACE] [--rows-only]` (e.g. a build of main's code, and dist/cli.js). `--rows-only`
 * compares the rows alone (tasks, contexts, files and the views), not report.json and the card, for a change
 * that adds to the report. Exports WORKSPACE (default
 * lean-env) and a copy of it made awkward for the row encoders — CRLF line breaks, byte-order marks, astral
 * characters, quotes, backslashes and control characters in comments and doc comments — with several option
 * sets, `--verify --simulator` included, and compares the folders with `diff -r`, report.json's `timeMs`
 * aside. Prints one line per export and exits 1 if any pair differs. Used to show that a change to the
 * exporter's encoding changed nothing it writes (docs/BENCHMARKS.md).
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const args = process.argv.slice(2);
const rowsOnly = args.includes("--rows-only");
const [oldCli, newCli, workspaceArg = "lean-env"] = args.filter((a) => a !== "--rows-only");
if (!oldCli || !newCli) {
  console.error("usage: node scripts/compare-exports.mjs OLD_CLI NEW_CLI [WORKSPACE]");
  process.exit(2);
}
const workspace = resolve(workspaceArg);
const scratch = mkdtempSync(join(tmpdir(), "fim-compare-"));

/** The .lean files under `dir`, build folders aside. */
function leanFiles(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    if (name === ".lake" || name === ".git") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...leanFiles(path));
    else if (name.endsWith(".lean")) found.push(path);
  }
  return found;
}

/**
 * A comment line with everything JSON escapes or encodes in more than one byte: astral characters (two
 * UTF-16 units, one code point), quotes, backslashes, tabs, control characters, U+2028 and U+007F.
 */
const AWKWARD = '-- 𝔸😀 "quoted" \\back\\slash\ttab \u0001\u001f\u007f\u2028 «x» ∀ ε';

/**
 * The copy: in each tactic proof an awkward comment line after `by` (at the next line's indentation, so
 * holes keep their shape), doc comments with astral characters, CRLF line breaks in every other file and a
 * byte-order mark in every third.
 */
function awkwardCopy(from) {
  const to = join(scratch, "awkward");
  cpSync(from, to, {
    recursive: true,
    filter: (p) => !/[/\\]\.(lake|git)([/\\]|$)/.test(p.slice(from.length)),
  });
  leanFiles(to).forEach((path, k) => {
    const lines = readFileSync(path, "utf8").split("\n");
    const out = [];
    lines.forEach((line, i) => {
      if (/^(theorem|lemma|example)\b/.test(line)) out.push('/-- 𝔹 doc "with" \\ and 😀 -/');
      out.push(line);
      const next = lines[i + 1];
      if (/\bby\s*$/.test(line) && next !== undefined && next.trim() !== "")
        out.push(`${/^\s*/.exec(next)[0]}${AWKWARD}`);
    });
    let text = out.join("\n");
    if (k % 2 === 1) text = text.replace(/\n/g, "\r\n");
    if (k % 3 === 0) text = `\ufeff${text}`;
    writeFileSync(path, text);
  });
  return to;
}

const OPTION_SETS = [
  ["defaults", []],
  ["declaration split", ["--split", "declaration"]],
  [
    "views, wide window",
    ["--format", "native,lean-grpo,fim-text", "--fim-tokens", "qwen", "--context-chars", "300"],
  ],
  ["no window", ["--context-chars", "0", "--max-middle-chars", "200"]],
  ["verify (simulator)", ["--verify", "--simulator"]],
];

/** The dataset folder's files, report.json's `timeMs` set to 0. */
function normalise(dir) {
  const report = join(dir, "report.json");
  const parsed = JSON.parse(readFileSync(report, "utf8"));
  parsed.timeMs = 0;
  writeFileSync(report, JSON.stringify(parsed, null, 2) + "\n");
}

function exportWith(cli, ws, options, out) {
  const run = spawnSync(process.execPath, [cli, "export", ws, "--out", out, ...options], {
    encoding: "utf8",
  });
  if (run.status !== 0)
    throw new Error(`${cli} export ${options.join(" ")} exited ${run.status}: ${run.stderr}`);
  normalise(out);
}

let differ = 0;
try {
  for (const [wsName, ws] of [
    [workspaceArg, workspace],
    ["awkward copy", awkwardCopy(workspace)],
  ])
    for (const [name, options] of OPTION_SETS) {
      const a = join(scratch, "old");
      const b = join(scratch, "new");
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
      exportWith(resolve(oldCli), ws, options, a);
      exportWith(resolve(newCli), ws, options, b);
      const skip = rowsOnly ? ["-x", "report.json", "-x", "README.md"] : [];
      const diff = spawnSync("diff", ["-r", ...skip, a, b], { encoding: "utf8" });
      const tasks = readFileSync(join(a, "tasks.jsonl"), "utf8").split("\n").length - 1;
      if (diff.status === 0) console.log(`same   ${wsName}, ${name}: ${tasks} tasks`);
      else {
        differ++;
        console.log(`DIFFER ${wsName}, ${name}:\n${diff.stdout.slice(0, 2000)}`);
      }
    }
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
process.exit(differ ? 1 : 0);
