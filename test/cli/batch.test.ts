/** verify-batch (issue #8): honest tallies, dataset tasks as input, --candidates by id, Ctrl-C; verify's input checks. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXAMPLE, REPO, proofHole, readExample } from "../helpers";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const ARITH = "FimExamples/Arith.lean";
const arith = readExample(ARITH);

function run(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 120_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function rows(path: string): Record<string, unknown>[] {
  return readFileSync(path, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

const kindOf = (row: Record<string, unknown>) => (row.verdict as { kind: string }).kind;

/** One small dataset of the example workspace, shared by the tests below. */
const dataset = (() => {
  const out = join(tempDir("fim-batch-ds-"), "ds");
  // Every whole proof of the workspace, and its open goals (`sorry`, tasks without a reference).
  const r = run(["export", EXAMPLE, "--out", out, "--kinds", "proof", "--split", "declaration"]);
  assert.equal(r.code, 0, r.stderr);
  return out;
})();

test("the tally counts every line written, bad lines included", () => {
  const dir = tempDir("fim-tally-");
  const input = join(dir, "in.jsonl");
  const good = JSON.stringify({ file: ARITH, hole: proofHole(arith, "add_le_add_1"), candidate: "omega" });
  writeFileSync(input, [good, "{not json", JSON.stringify({ file: ARITH }), "[1]", good].join("\n") + "\n");
  const r = run([
    "verify-batch",
    "--project",
    EXAMPLE,
    "--input",
    input,
    "--out",
    join(dir, "o.jsonl"),
    "--simulator",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const last = r.stderr.trim().split("\n").at(-1)!;
  assert.match(last, /verify-batch: 5\/5 checked .* — proved 2, rejected 3 \(3 bad lines\) — verifier/);
  const allBad = join(dir, "bad.jsonl");
  writeFileSync(allBad, "x\ny\nz\n");
  const b = run([
    "verify-batch",
    "--project",
    EXAMPLE,
    "--input",
    allBad,
    "--out",
    join(dir, "b.jsonl"),
    "--simulator",
  ]);
  assert.equal(b.code, 0, b.stderr);
  assert.match(b.stderr.trim().split("\n").at(-1)!, /3\/3 checked .* rejected 3 \(3 bad lines\)/);
  assert.doesNotMatch(b.stderr, /nothing checked yet/);
});

test("--input takes a dataset (folder or tasks.jsonl): each task's own middle is re-verified", () => {
  const dir = tempDir("fim-reverify-");
  const tasks = rows(join(dataset, "tasks.jsonl"));
  for (const input of [dataset, join(dataset, "tasks.jsonl")]) {
    const out = join(dir, "v.jsonl");
    const r = run(["verify-batch", "--project", EXAMPLE, "--input", input, "--out", out, "--simulator"]);
    assert.equal(r.code, 0, r.stderr);
    const verdicts = rows(out);
    assert.equal(verdicts.length, tasks.length);
    assert.deepEqual(
      verdicts.map((v) => v.id),
      tasks.map((t) => t.id),
      "in order, task fields kept",
    );
    // A task's middle is the workspace's proof, or for an open goal its `sorry` (no reference), which never proves.
    const reference = new Map(tasks.map((t) => [t.id, (t as { reference?: boolean }).reference !== false]));
    assert.ok(
      verdicts.every((v) => (kindOf(v) === "proved") === reference.get(v.id as string)),
      "a workspace's own proofs verify, its open goals' sorry does not",
    );
    assert.ok([...reference.values()].some((r) => !r) && [...reference.values()].some((r) => r));
    // The open goals are tallied as what they are, not as rejected proofs.
    const open = [...reference.values()].filter((r) => !r).length;
    const last = r.stderr.trim().split("\n").at(-1)!;
    assert.match(last, new RegExp(`open goals \\(sorry, no reference proof\\) ${open}\\b`), last);
    assert.doesNotMatch(last, /rejected/, last);
  }
});

test("--candidates scores {id, candidate} lines against the dataset's tasks by id", () => {
  const dir = tempDir("fim-candidates-");
  const tasks = rows(join(dataset, "tasks.jsonl")) as { id: string; decl: string; middle: string }[];
  const task = tasks.find((t) => t.decl.endsWith("add_le_add_1"))!;
  const candidates = join(dir, "samples.jsonl");
  writeFileSync(
    candidates,
    [
      { id: task.id, candidate: task.middle, sample: 0 },
      { id: task.id, candidate: "simp", sample: 1 },
      { id: "no-such-id", candidate: "omega" },
      { candidate: "omega" },
    ]
      .map((l) => JSON.stringify(l))
      .join("\n") + "\n",
  );
  const out = join(dir, "scored.jsonl");
  const r = run([
    "verify-batch",
    "--project",
    EXAMPLE,
    "--input",
    dataset,
    "--candidates",
    candidates,
    "--out",
    out,
    "--simulator",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const scored = rows(out);
  assert.deepEqual(scored.map(kindOf), ["proved", "failed", "rejected", "rejected"]);
  assert.equal(scored[1]!.sample, 1, "the candidate line's own fields are kept");
  assert.match(String((scored[2]!.verdict as { reason: string }).reason), /no task with id "no-such-id"/);
  const notTasks = join(dir, "not-tasks.jsonl");
  writeFileSync(
    notTasks,
    JSON.stringify({ file: ARITH, hole: proofHole(arith, "add_le_add_1"), candidate: "x" }) + "\n",
  );
  const bad = run([
    "verify-batch",
    "--project",
    EXAMPLE,
    "--input",
    notTasks,
    "--candidates",
    candidates,
    "--out",
    out,
    "--simulator",
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--input must hold the dataset's tasks/);
});

for (const command of ["verify", "verify-batch"] as const)
  test(`Ctrl-C on ${command} stops the server, writes no output, and exits 130`, async () => {
    const dir = tempDir("fim-sigint-");
    const hole = proofHole(arith, "add_le_add_1");
    const input = join(dir, "in.jsonl");
    writeFileSync(input, JSON.stringify({ file: ARITH, hole, candidate: "omega" }) + "\n");
    // A unique marker in the server's command line finds its process afterwards; each check takes 10 minutes.
    const marker = join(dir, "oracle.json");
    writeFileSync(marker, "{}");
    const server = `${process.execPath} ${CLI} simulator --decl-ms 600000 --oracle ${marker}`;
    const args =
      command === "verify"
        ? [
            "verify",
            "--project",
            EXAMPLE,
            "--file",
            ARITH,
            "--candidate",
            "omega",
            "--hole",
            `${hole.start.line}:${hole.start.character}-${hole.end.line}:${hole.end.character}`,
          ]
        : ["verify-batch", "--project", EXAMPLE, "--input", input, "--out", join(dir, "o.jsonl")];
    const child = spawn(process.execPath, [CLI, ...args, "--server", server], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    await new Promise<void>((resolve, reject) => {
      child.stderr.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
        if (/1 to check|verify: checking/.test(stderr)) resolve();
      });
      child.on("exit", () => reject(new Error(`exited before starting: ${stderr}`)));
    });
    child.kill("SIGINT");
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const code = await exited;
    clearTimeout(timer);
    assert.equal(code, 130, stderr);
    assert.match(stderr, /interrupted; stopping the verifier/);
    assert.equal(stdout, "", "no verdict is printed");
    assert.ok(!existsSync(join(dir, "o.jsonl")), "no partial output");
    const alive = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => {
        try {
          return readFileSync(`/proc/${p}/cmdline`, "utf8").includes(marker);
        } catch {
          return false;
        }
      });
    assert.deepEqual(alive, [], "the server process is gone");
  });

test("verify refuses files that are not Lean source, saying what they are", () => {
  const project = tempDir("fim-notlean-");
  writeFileSync(join(project, "bin.lean"), Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]));
  writeFileSync(
    join(project, "latin1.lean"),
    Buffer.from("theorem caf\xe9 : True := by trivial\n", "latin1"),
  );
  writeFileSync(join(project, "notes.txt"), "theorem t : True := by trivial\n");
  const verify = (file: string) =>
    run([
      "verify",
      "--project",
      project,
      "--file",
      file,
      "--hole",
      "0:0-0:1",
      "--candidate",
      "x",
      "--simulator",
    ]);
  const cases: [string, RegExp][] = [
    ["bin.lean", /not Lean source: binary/],
    ["latin1.lean", /not Lean source: not valid UTF-8/],
    ["notes.txt", /not a Lean source file \(expected a \.lean file\)/],
  ];
  for (const [file, message] of cases) {
    const r = verify(file);
    assert.equal(r.code, 2, file);
    assert.match(r.stderr, message);
  }
});

test("human-readable output prints each diagnostic once", () => {
  const h = proofHole(arith, "add_le_add_1");
  const r = run([
    "verify",
    "--project",
    EXAMPLE,
    "--file",
    ARITH,
    "--simulator",
    "--hole",
    `${h.start.line}:${h.start.character}-${h.end.line}:${h.end.character}`,
    "--candidate",
    "simp",
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^failed/);
  const bodies = r.stdout
    .split("\n")
    .slice(1)
    .map((l) => l.replace(/^\s*\[[^\]]*\]\s*/, "").trim())
    .filter(Boolean);
  assert.ok(bodies.length > 0);
  assert.equal(new Set(bodies).size, bodies.length, r.stdout);
});
