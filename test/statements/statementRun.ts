/**
 * Shared by the tests that train on the golden theorems.jsonl (simulator and Kimina stub): the project it
 * lives in, a small trainer config, the `train` run itself, and what every such run must leave in its run folder.
 */
import assert from "node:assert/strict";
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { REPO, runCli } from "../helpers";
import { tempDir } from "../tempDirs";

export const CLI = join(REPO, "dist", "cli.js");
export const PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
const GOLDEN = join(REPO, "test", "fixtures", "import", "theorems.jsonl");
export const missing = !existsSync(PYTHON)
  ? `${PYTHON} is missing (npm run test:setup creates it)`
  : undefined;
// No `lake` on PATH, so nothing but the flags chooses the verifier.
export const ENV = { ...process.env, PATH: [dirname(process.execPath), "/usr/bin", "/bin"].join(":") };

/** A Lean project with only a toolchain and a lakefile, and the golden theorems.jsonl inside it. */
export function statementProject(): { dir: string; theorems: string; config: string } {
  const dir = tempDir("fim-train-stmt-");
  cpSync(join(REPO, "lean-env", "lean-toolchain"), join(dir, "lean-toolchain"));
  writeFileSync(join(dir, "lakefile.toml"), 'name = "stmts"\n');
  const theorems = join(dir, "theorems.jsonl");
  cpSync(GOLDEN, theorems);
  const config = join(dir, "small.yaml");
  writeFileSync(config, "sft_steps: 1\neval_limit: 2\nmax_new_tokens: 8\nbatch_size: 2\ngroup_size: 2\n");
  return { dir, theorems, config };
}

/**
 * `fim-rlvr train theorems.jsonl --project DIR --algorithm dapo` for two steps with the small config, checked by
 * the verifier that `verifierFlags` choose; the run must succeed. Returns the CLI's output and the run folder.
 */
export async function trainOnStatements(
  verifierFlags: string[],
): Promise<{ stdout: string; stderr: string; project: string; runDir: string }> {
  const { dir, theorems, config } = statementProject();
  const runDir = join(tempDir("fim-train-stmt-run-"), "run");
  const r = await runCli(
    CLI,
    [
      "train",
      theorems,
      "--project",
      dir,
      "--algorithm",
      "dapo",
      ...verifierFlags,
      "--python",
      PYTHON,
      "--steps",
      "2",
      "--config",
      config,
      "--out",
      runDir,
    ],
    ENV,
  );
  assert.equal(r.code, 0, r.stderr);
  return { stdout: r.stdout, stderr: r.stderr, project: dir, runDir };
}

export function lines<T>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

/** What every run on the golden file must leave in its run folder, whichever verifier checked it. */
export function assertStatementRun(runDir: string, project: string, verifierKind: string): void {
  const report = JSON.parse(readFileSync(join(runDir, "dataset", "report.json"), "utf8")) as {
    rows: { read: number; kept: number };
  };
  assert.deepEqual({ read: report.rows.read, kept: report.rows.kept }, { read: 4, kept: 4 });
  assert.ok(
    readdirSync(join(project, ".fim-rlvr", "statements")).includes("theorems"),
    "the Lean files are generated in a folder of their own under the project's .fim-rlvr/, where mining never looks",
  );
  const config = JSON.parse(readFileSync(join(runDir, "config.json"), "utf8")) as {
    algorithm: string;
    steps: number;
    verifier: { kind: string };
  };
  assert.equal(config.algorithm, "dapo");
  assert.equal(config.steps, 2);
  assert.equal(config.verifier.kind, verifierKind);
  const metrics = lines<{ step: number; verdicts: Record<string, number> }>(join(runDir, "metrics.jsonl"));
  assert.deepEqual(
    metrics.map((m) => m.step),
    [1, 2],
  );
  for (const m of metrics) assert.ok(Object.values(m.verdicts).reduce((a, b) => a + b, 0) > 0, "checks ran");
  const taskIds = new Set(lines<{ id: string }>(join(runDir, "dataset", "tasks.jsonl")).map((t) => t.id));
  const samples = lines<{ task_id: string; verdict: string }>(join(runDir, "samples.jsonl"));
  assert.ok(samples.length > 0);
  for (const s of samples) assert.ok(taskIds.has(s.task_id), `sample on a task not imported: ${s.task_id}`);
  assert.ok(existsSync(join(runDir, "eval.json")));
  assert.match(readFileSync(join(runDir, "report.html"), "utf8"), /dapo/);
}
