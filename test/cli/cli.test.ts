/** The built CLI (dist/cli.js) as users and later checks call it: the contract of issue #2. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXAMPLE, REPO, proofHole, readExample } from "../helpers";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");

function run(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", env, timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const ARITH = "FimExamples/Arith.lean";
const text = readExample(ARITH);
const holeArg = (name: string) => {
  const h = proofHole(text, name);
  return `${h.start.line}:${h.start.character}-${h.end.line}:${h.end.character}`;
};

/** `verify` for the whole proof of a declaration of Arith.lean. */
const verifyArgs = (name: string, candidate: string) => [
  "verify",
  "--project",
  EXAMPLE,
  "--file",
  ARITH,
  "--hole",
  holeArg(name),
  "--candidate",
  candidate,
];

test("verify --json prints the verdict with kind, reward, verifier, elapsedMs, diagnostics", () => {
  const r = run([...verifyArgs("add_le_add_4", "omega"), "--simulator", "--json"]);
  assert.equal(r.code, 0, r.stderr);
  const v = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.equal(v.kind, "proved");
  assert.equal(v.reward, 1);
  assert.match(String(v.verifier), /simulator/);
  assert.equal(typeof v.elapsedMs, "number");
  assert.ok(Array.isArray(v.diagnostics));
  const failed = JSON.parse(
    run([...verifyArgs("add_le_add_4", "simp"), "--simulator", "--json"]).stdout,
  ) as Record<string, unknown>;
  assert.equal(failed.kind, "failed");
  assert.equal(failed.reward, 0);
});

test("human output names the verifier; every verdict exits 0", () => {
  const r = run([...verifyArgs("add_le_add_4", "exact sorry"), "--simulator"]);
  assert.equal(r.code, 0);
  assert.match(r.stdout, /^rejected \(reward 0\) — verifier: simulator/);
});

test("bad usage exits 2 and says what to fix", () => {
  const cases: [string[], RegExp][] = [
    [
      ["verify", "--project", EXAMPLE, "--file", ARITH, "--candidate", "x", "--simulator"],
      /--hole L:C-L:C is required/,
    ],
    [
      ["verify", "--project", EXAMPLE, "--file", ARITH, "--hole", "3-4", "--candidate", "x", "--simulator"],
      /--hole must look like L:C-L:C/,
    ],
    [
      [
        "verify",
        "--project",
        EXAMPLE,
        "--file",
        "Nope.lean",
        "--hole",
        "1:0-1:1",
        "--candidate",
        "x",
        "--simulator",
      ],
      /no such file/,
    ],
    [
      [
        "verify",
        "--project",
        EXAMPLE,
        "--file",
        ARITH,
        "--hole",
        "0:0-0:1",
        "--candidate",
        "x",
        "--simulator",
      ],
      /not inside a declaration/,
    ],
    [["verify", "--bogus"], /bogus/],
    [["frobnicate"], /unknown command/],
  ];
  for (const [args, message] of cases) {
    const r = run(args);
    assert.equal(r.code, 2, args.join(" "));
    assert.match(r.stderr, message);
  }
});

test("without lake on PATH and without a verifier option, every command that verifies falls back to the simulator, saying so once (issue 25 item 5)", () => {
  const noLake = { ...process.env, PATH: "/nonexistent" };
  const readme = readFileSync(join(REPO, "README.md"), "utf8");
  const install = /`(curl -sSfL https:\/\/raw\.githubusercontent\.com\/leanprover\/elan\/[^`]+)`/.exec(
    readme,
  )?.[1];
  assert.ok(install, "the README's elan line");
  const dir = tempDir("fim-nolake-");
  const dataset = join(dir, "dataset");
  assert.equal(run(["export", EXAMPLE, "--out", dataset]).code, 0);
  const commands: string[][] = [
    verifyArgs("add_le_add_4", "omega"),
    ["verify-batch", "--project", EXAMPLE, "--input", dataset, "--out", join(dir, "verdicts.jsonl")],
    ["eval", dataset, "--model", "fake:pattern:r", "-n", "1", "--limit", "2", "--out", join(dir, "eval")],
  ];
  for (const args of commands) {
    const r = run(args, noLake);
    assert.equal(r.code, 0, `${args[0]}: ${r.stderr}`);
    assert.equal(r.stderr.split("Lean was not found").length - 1, 1, `${args[0]}: said once`);
    assert.ok(r.stderr.includes(install!), `${args[0]}: the README's install line`);
    assert.match(r.stderr + r.stdout, /simulator .*\(not Lean\)/, `${args[0]}: verdicts name the simulator`);
  }
});

test("--server runs any command speaking the protocol, e.g. the simulator subcommand", () => {
  const r = run([
    ...verifyArgs("add_le_add_6", "omega"),
    "--server",
    `${process.execPath} ${CLI} simulator`,
    "--json",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const v = JSON.parse(r.stdout) as Record<string, unknown>;
  assert.equal(v.kind, "proved");
  assert.match(String(v.verifier), /simulator/);
});

test("verify-batch keeps order, one verdict per line, bad lines included, progress on stderr", () => {
  const dir = tempDir("fim-batch-");
  const input = join(dir, "in.jsonl");
  const out = join(dir, "out.jsonl");
  const line = (name: string, candidate: string) =>
    JSON.stringify({ file: ARITH, hole: proofHole(text, name), candidate, id: `${name}:${candidate}` });
  const lines = [
    line("add_le_add_1", "omega"),
    line("add_le_add_2", "simp"),
    "{not json",
    line("add_le_add_3", "omega"),
    JSON.stringify({ file: ARITH }),
    line("add_le_add_1", "omega"),
  ];
  writeFileSync(input, lines.join("\n") + "\n");
  const r = run([
    "verify-batch",
    "--project",
    EXAMPLE,
    "--input",
    input,
    "--out",
    out,
    "--simulator",
    "--workers",
    "2",
  ]);
  assert.equal(r.code, 0, r.stderr);
  const rows = readFileSync(out, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { id?: string; verdict: { kind: string; rule?: string; verifier: string } });
  assert.equal(rows.length, lines.length);
  assert.deepEqual(
    rows.map((r) => r.verdict.kind),
    ["proved", "failed", "rejected", "proved", "rejected", "proved"],
  );
  assert.equal(rows[0]!.id, "add_le_add_1:omega", "input fields are kept");
  assert.equal(rows[2]!.verdict.rule, "bad-task");
  assert.match(r.stderr, /verify-batch: 6\/6 checked .* verifier: simulator/);
});

test("--policy changes the candidate policy: forbid more, allow a default back", () => {
  const dir = tempDir("fim-policy-");
  const policy = join(dir, "policy.json");
  writeFileSync(policy, JSON.stringify({ forbid: ["omega"], allow: ["exact?"] }));
  const verdict = (candidate: string) =>
    JSON.parse(
      run([...verifyArgs("add_le_add_5", candidate), "--simulator", "--json", "--policy", policy]).stdout,
    ) as { kind: string; rule?: string };
  assert.deepEqual([verdict("omega").kind, verdict("omega").rule], ["rejected", "policy"]);
  assert.equal(verdict("exact?").kind, "failed", "allowed through the policy, then judged by the verifier");
  writeFileSync(policy, JSON.stringify({ forbid: "omega" }));
  const bad = run([...verifyArgs("add_le_add_5", "omega"), "--simulator", "--policy", policy]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /"forbid" and "allow" must be lists/);
});
