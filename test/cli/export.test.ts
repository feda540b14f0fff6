/** `fim-rlvr export` as later checks call it (issue #3's contract). */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { VerificationReport } from "../../lean-bridge/dataset/verifyTasks";
import { EXAMPLE, REPO } from "../helpers";
import { droppedReasons } from "../../lean-bridge/cli/exportCommand";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const run = (args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 120_000 });

test("export --verify --simulator with views writes the contract files and a summary", () => {
  const out = join(tempDir("fim-cli-export-"), "ds");
  const r = run([
    "export",
    EXAMPLE,
    "--out",
    out,
    "--kinds",
    "proof,block",
    "--verify",
    "--simulator",
    "--seed",
    "5",
    "--max-middle-chars",
    "200",
    "--format",
    "native,lean-grpo,fim-text",
    "--fim-tokens",
    "starcoder",
  ]);
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(readdirSync(out).sort(), [
    "README.md",
    "contexts.jsonl",
    "files.jsonl",
    "fim-text.jsonl",
    "lean-grpo.jsonl",
    "report.json",
    "summary.svg",
    "tasks.jsonl",
  ]);
  const tasks = readFileSync(join(out, "tasks.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { kind: string; middle: string; goal?: string });
  assert.ok(tasks.every((t) => (t.kind === "proof" || t.kind === "block") && t.middle.length <= 200));
  // The goal state at each hole, read with Lean's `done` in its place: what a prompt shows above the hole.
  assert.ok(
    tasks.length > 0 && tasks.every((t) => t.goal?.includes("⊢")),
    "every verified task has its goal",
  );
  const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
    seed: number;
    verification: { verifier: string; kept: number; dropped: number; withGoal: number };
    overlap: { trainingDropped: number };
  };
  assert.equal(report.seed, 5);
  assert.match(report.verification.verifier, /simulator/);
  // Every verified task is written: the default family split drops none.
  assert.equal(report.overlap.trainingDropped, 0);
  assert.equal(report.verification.kept, tasks.length);
  assert.equal(report.verification.withGoal, report.verification.kept);
  assert.match(readFileSync(join(out, "fim-text.jsonl"), "utf8"), /<fim_prefix>/);
  assert.match(r.stderr, /export: wrote \d+ tasks \(proof \d+, block \d+\) from 10 files/);
  assert.match(r.stderr, /held out: \d+ instance tasks, \d+ family tasks \(\d+ of \d+ families\)/);
  assert.match(r.stderr, /verified by simulator/);
  // Each number says what it counts (issue 25 item 13: "597 kept" beside "wrote 294 tasks" read as a contradiction).
  assert.match(
    r.stderr,
    new RegExp(
      `of ${report.verification.kept + report.verification.dropped} mined holes, ${report.verification.kept} kept \\(before the split's drops`,
    ),
  );
});

test("export usage errors exit 2 with what to fix", () => {
  const cases: [string[], RegExp][] = [
    [["export", "--out", "/tmp/x"], /give the workspace folder/],
    [["export", EXAMPLE], /--out DIR is required/],
    [["export", EXAMPLE, "--out", "/tmp/x", "--kinds", "proof,lemmas"], /unknown kind "lemmas"/],
    [["export", EXAMPLE, "--out", "/tmp/x", "--format", "fim-text"], /needs --fim-tokens/],
    [
      ["export", EXAMPLE, "--out", "/tmp/x", "--format", "fim-text", "--fim-tokens", "custom"],
      /--fim-prefix/,
    ],
    [["export", EXAMPLE, "--out", "/tmp/x", "--simulator"], /add --verify/],
    [["export", "/nonexistent/ws", "--out", "/tmp/x"], /no such folder/],
    [["export", EXAMPLE, "--out", join(EXAMPLE, "FimExamples")], /not a dataset written by fim-rlvr/],
  ];
  for (const [args, message] of cases) {
    const r = run(args);
    assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
  }
});

test("export of a folder with nothing to mine exits 1 and says what was found and what is needed", () => {
  const ws = tempDir("fim-cli-empty-");
  writeFileSync(join(ws, "T.lean"), "theorem t : True := trivial\n");
  const r = run(["export", ws, "--out", join(ws, "out")]);
  assert.equal(r.status, 1, r.stderr);
  assert.match(r.stderr, /no dataset written: found 1 Lean file with 1 declaration, but no tactic proofs/);
  assert.match(r.stderr, /needs theorems proved with tactics/);
});

test("a declaration whose proof has a syntax error is named in the summary and report.json, never vanishes silently (issue 25 item 6)", () => {
  const ws = tempDir("fim-export-syntax-");
  writeFileSync(join(ws, "lakefile.toml"), 'name = "s"\n');
  writeFileSync(
    join(ws, "Bad.lean"),
    "theorem good (a : Nat) : a + 0 = a := by\n  simp\n\ntheorem bad (a b : Nat) (h : a = b) : b = a := by\n  exact (h.symm\n",
  );
  const out = join(ws, "out");
  const r = run(["export", ws, "--out", out]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(
    r.stderr,
    /1 declaration\(s\) whose tactic proof does not read as whole tactics \(a syntax error\?\): Bad\.lean:4 bad/,
  );
  const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
    declarations: { unreadableCount: number; unreadable: { file: string; line: number; decl: string }[] };
  };
  assert.equal(report.declarations.unreadableCount, 1);
  assert.deepEqual(report.declarations.unreadable, [{ file: "Bad.lean", line: 4, decl: "bad" }]);
});

test("export --verify's summary lists every reason a hole was dropped for, adding up to the dropped total (issue 25 item 1)", () => {
  const byReason = { "complete-without-hole": 2, failed: 5, "not-whole-tactic-sequence": 1, timeout: 0 };
  const text = droppedReasons(byReason);
  assert.equal(
    text,
    " (5 own middle fails; 2 complete without their middle, with `skip` in place; 1 not whole tactic sequences with `sorry` in place; examples in report.json)",
  );
  const counted = [...text.matchAll(/(?:\(|; )(\d+) /g)].reduce((a, m) => a + Number(m[1]), 0);
  assert.equal(counted, 8);
  assert.equal(droppedReasons({}), "");
  assert.equal(
    droppedReasons({ "a-reason-added-later": 1 }),
    " (1 a-reason-added-later; examples in report.json)",
  );
});

test("export --verify names every reason it dropped a task for on a workspace, the counts adding up to the drops (issue 25 item 1)", () => {
  const dir = tempDir("fim-cli-export-drops-");
  const ws = join(dir, "ws");
  mkdirSync(ws);
  writeFileSync(
    join(ws, "A.lean"),
    "theorem good (n : Nat) : n + 0 = n := by\n  simp\n\ntheorem uses_omega (a b : Nat) : a + b = b + a := by\n  omega\n",
  );
  // A header the project cannot load: the proof's own middle and the statement without a proof are both dropped.
  writeFileSync(
    join(ws, "B.lean"),
    "import NoSuchLib.Old\n\ntheorem b_open (n : Nat) : n * 1 = n := by\n  sorry\n\ntheorem b_good (n : Nat) : 0 + n = n := by\n  simp\n",
  );
  const policy = join(dir, "policy.json");
  writeFileSync(policy, JSON.stringify({ forbid: ["omega"] }));
  const out = join(dir, "ds");
  const r = run(["export", ws, "--out", out, "--verify", "--simulator", "--policy", policy]);
  assert.equal(r.status, 0, r.stderr);
  const v = (
    JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as { verification: VerificationReport }
  ).verification;
  assert.deepEqual(v.droppedByReason, { rejected: 1, environment: 2 });
  const said = /(\d+) dropped \((.*); examples in report\.json\)/.exec(r.stderr);
  assert.ok(said, r.stderr);
  assert.equal(Number(said[1]), v.dropped);
  assert.equal(said[2], "2 the file's header does not load; 1 own middle refused by the candidate policy");
});
