/**
 * `fim-rlvr import` end to end through the bundled CLI: the sorry pre-check with the simulator (a row whose
 * header the project cannot load is dropped with the message, never made a task), duplicate statements kept
 * once, the dataset in the export's format (every middle at its offsets in files.jsonl), a re-import that
 * replaces its own generated folder; and a 100k-row file imported under a small heap (rows stream).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import {
  cpSync,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  readdirSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { REPO, runCli } from "../helpers";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");

function project(): string {
  const dir = tempDir("fim-import-");
  cpSync(join(REPO, "lean-env", "lean-toolchain"), join(dir, "lean-toolchain"));
  writeFileSync(join(dir, "lakefile.toml"), 'name = "imp"\n');
  return dir;
}

function lines<T>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

test("import checks statements with sorry (simulator), drops what does not load, keeps duplicates once", async () => {
  const dir = project();
  const source = join(dir, "theorems.jsonl");
  writeFileSync(
    source,
    [
      { name: "a", statement: "theorem a (n : Nat) : n + 0 = n", imports: [] },
      { name: "a_again", statement: "theorem a_again (n : Nat) :\n  n + 0 = n", imports: [] },
      {
        name: "b",
        statement: "theorem b (a b : Nat) (h : a = b) : b = a := by\n  subst h\n  rfl",
        imports: [],
      },
      { name: "pinned", statement: "theorem pinned : True", imports: ["NoSuchLibrary.Old"] },
    ]
      .map((r) => JSON.stringify(r))
      .join("\n") + "\nnot json\n",
  );
  const out = join(dir, "ds");
  const r = await runCli(CLI, ["import", source, "--project", dir, "--out", out, "--simulator"], process.env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /simulator .*\(not Lean\)/);
  const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
    rows: {
      read: number;
      malformed: number;
      duplicates: number;
      kept: number;
      dropped: Record<string, number>;
    };
    workspace?: string;
    project: string;
  };
  assert.deepEqual(
    {
      read: report.rows.read,
      malformed: report.rows.malformed,
      duplicates: report.rows.duplicates,
      kept: report.rows.kept,
    },
    { read: 5, malformed: 1, duplicates: 1, kept: 2 },
  );
  assert.equal(report.rows.dropped.environment, 1);
  // Every row that did not become a statement has its line, whichever pass dropped it (issue 25 item 7: the
  // summary said "each in dropped.jsonl" over an empty file).
  const dropped = lines<{ row: number; kind: string; message: string }>(join(out, "dropped.jsonl"));
  assert.deepEqual(dropped.map((d) => [d.row, d.kind]).sort(), [
    [2, "duplicate"],
    [4, "environment"],
    [5, "malformed"],
  ]);
  assert.match(dropped.find((d) => d.kind === "environment")!.message, /NoSuchLibrary/);
  assert.match(dropped.find((d) => d.kind === "duplicate")!.message, /the same statement as row 1/);
  assert.match(r.stderr, /1 malformed, 1 duplicates, .*\(each in dropped\.jsonl\)/);
  const tasks = lines<{
    file: string;
    kind: string;
    middle: string;
    reference?: boolean;
    offsets: { start: number; end: number };
    split: string;
    scope: string[];
  }>(join(out, "tasks.jsonl"));
  assert.equal(
    new Set(tasks.map((t) => Object.keys(t).join(","))).size,
    1,
    "every imported task has the same keys (null where it has no value)",
  );
  // The card's YAML declares those keys for tasks.jsonl, and files.jsonl's, so `load_dataset(DIR)` reads them.
  const cardText = readFileSync(join(out, "README.md"), "utf8");
  const card = /^---\n([\s\S]*?)\n---\n/.exec(cardText);
  // The card travels with the dataset: it names the source file and the project, never this machine's paths.
  for (const path of [dir, REPO])
    assert.ok(!cardText.includes(path), `the card names the machine path ${path}`);
  assert.match(cardText, /from the statement dataset `theorems\.jsonl`/);
  const info = (
    parseYaml(card![1]!) as { dataset_info: { config_name: string; features: { name: string }[] }[] }
  ).dataset_info;
  const declared = (name: string) => info.find((i) => i.config_name === name)?.features.map((f) => f.name);
  assert.deepEqual(declared("tasks"), Object.keys(tasks[0]!));
  assert.deepEqual(declared("files"), ["file", "sha256", "text"]);
  assert.deepEqual(
    info.map((i) => i.config_name),
    ["tasks", "files"],
    "no config for a file an import does not write",
  );
  const files = new Map(
    lines<{ file: string; text: string }>(join(out, "files.jsonl")).map((f) => [f.file, f.text]),
  );
  assert.equal(files.size, 2);
  for (const t of tasks) {
    assert.equal(files.get(t.file)!.slice(t.offsets.start, t.offsets.end), t.middle);
    assert.ok(existsSync(join(dir, t.file)), `${t.file} is in the project`);
    assert.ok(t.file.startsWith(".fim-rlvr/statements/theorems/"));
  }
  const statementOnly = tasks.filter((t) => t.reference === false);
  assert.deepEqual(
    statementOnly.map((t) => [t.kind, t.middle]),
    [["proof", "sorry"]],
  );
  assert.deepEqual([...new Set(tasks.filter((t) => t.reference !== false).map((t) => t.kind))].sort(), [
    "proof",
    "tactic",
  ]);
  // The dropped row's file is gone; a second import replaces the generated folder it owns.
  const generated = readdirSync(join(dir, ".fim-rlvr", "statements", "theorems"), { recursive: true }).map(
    String,
  );
  assert.ok(generated.some((f) => f.endsWith("R000003_b.lean")));
  assert.ok(!generated.some((f) => f.includes("pinned")), generated.join(", "));
  const again = await runCli(
    CLI,
    ["import", source, "--project", dir, "--out", out, "--simulator"],
    process.env,
  );
  assert.equal(again.code, 0, again.stderr);
  assert.equal(lines(join(out, "tasks.jsonl")).length, tasks.length);
});

test("a folder of the same name that import did not write is never replaced", async () => {
  const dir = project();
  const source = join(dir, "mine.jsonl");
  writeFileSync(source, JSON.stringify({ statement: "theorem t : True" }) + "\n");
  mkdirSync(join(dir, ".fim-rlvr", "statements", "mine"), { recursive: true });
  writeFileSync(
    join(dir, ".fim-rlvr", "statements", "mine", "Keep.lean"),
    "theorem keep : True := trivial\n",
  );
  const r = await runCli(CLI, ["import", source, "--project", dir, "--no-precheck"], process.env);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /was not written by `fim-rlvr import`/);
  assert.ok(existsSync(join(dir, ".fim-rlvr", "statements", "mine", "Keep.lean")));
});

const ROWS = 100_000;
const HEAP_MB = 64;

test(`${ROWS} rows import with a ${HEAP_MB} MB heap (rows, files and tasks stream)`, async () => {
  const dir = project();
  const source = join(dir, "big.jsonl");
  const stream = createWriteStream(source);
  for (let k = 0; k < ROWS; k++)
    stream.write(
      JSON.stringify({
        name: `t${k}`,
        statement: `theorem t${k} (n : Nat) (h : n = ${k}) : n + ${k} = ${2 * k}`,
        imports: [],
      }) + "\n",
    );
  if (
    !stream.write(
      JSON.stringify({ name: "dup", statement: "theorem dup (n : Nat) (h : n = 0) : n + 0 = 0" }) + "\n",
    )
  )
    await new Promise<void>((r) => stream.once("drain", () => r()));
  await new Promise<void>((r) => stream.end(r));
  const out = join(dir, "ds");
  const r = spawnSync(
    process.execPath,
    [
      `--max-old-space-size=${HEAP_MB}`,
      CLI,
      "import",
      source,
      "--project",
      dir,
      "--out",
      out,
      "--no-precheck",
    ],
    { encoding: "utf8", timeout: 600_000 },
  );
  assert.equal(r.status, 0, r.stderr.slice(-2000));
  const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
    rows: { read: number; kept: number; duplicates: number };
    tasks: { total: number };
    verifier: string | null;
  };
  assert.deepEqual([report.rows.read, report.rows.kept, report.rows.duplicates], [ROWS + 1, ROWS, 1]);
  assert.equal(report.tasks.total, ROWS);
  assert.equal(report.verifier, null);
});

test("import never changes what export of the project produces (issue 25 item 1), and the simulator still proves imported rows", async () => {
  // The project and, beside it (outside what export reads), the exports and verdicts: all in one temp folder.
  const root = tempDir("fim-import-clean-");
  const dir = join(root, "project");
  cpSync(join(REPO, "lean-env"), dir, { recursive: true, filter: (p) => !p.includes(".lake") });
  const exportTo = (out: string) => {
    const r = spawnSync(process.execPath, [CLI, "export", dir, "--out", out], {
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(r.status, 0, r.stderr);
    return ["tasks.jsonl", "contexts.jsonl", "files.jsonl"].map((f) => readFileSync(join(out, f), "utf8"));
  };
  const before = exportTo(join(root, "before"));
  const source = join(dir, "rows.jsonl");
  writeFileSync(
    source,
    [
      { name: "open_row", statement: "theorem open_row (n : Nat) : n + 0 = n", imports: [] },
      {
        name: "own",
        statement: "theorem own (a b : Nat) (h : a = b) : b = a := by\n  subst h\n  rfl",
        imports: [],
      },
    ]
      .map((r) => JSON.stringify(r))
      .join("\n") + "\n",
  );
  const imported = await runCli(CLI, ["import", source, "--project", dir, "--simulator"], process.env);
  assert.equal(imported.code, 0, imported.stderr);
  assert.deepEqual(readdirSync(join(dir, ".fim-rlvr", "statements")), ["rows"]);
  assert.equal(existsSync(join(dir, "FimRlvrImported")), false, "nothing among the project's sources");
  const after = exportTo(join(root, "after"));
  assert.deepEqual(after, before, "the same tasks, contexts and files after the import");

  // The simulator still knows an imported row's own proof (it reads .fim-rlvr/statements/ for references).
  const dataset = join(dir, ".fim-rlvr", "imported", "rows");
  const own = lines<{ id: string; decl: string; kind: string }>(join(dataset, "tasks.jsonl")).find(
    (t) => t.decl.endsWith(".own") && t.kind === "proof",
  )!;
  const batch = spawnSync(
    process.execPath,
    [
      CLI,
      "verify-batch",
      "--project",
      dir,
      "--input",
      dataset,
      "--out",
      join(root, "verdicts.jsonl"),
      "--simulator",
    ],
    { encoding: "utf8", timeout: 120_000 },
  );
  assert.equal(batch.status, 0, batch.stderr);
  const verdicts = lines<{ id: string; verdict: { kind: string } }>(join(root, "verdicts.jsonl"));
  assert.equal(verdicts.find((v) => v.id === own.id)?.verdict.kind, "proved");
});
