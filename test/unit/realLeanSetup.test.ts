/**
 * What can be checked of the real-Lean setup without Lean: the hosted workflow's shape (it cannot run here),
 * the two example projects agreeing on the newest stable toolchain, the Mathlib project covering what real
 * projects use, and the real-Lean tests skipping with a reason here but failing where real Lean is promised.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse } from "yaml";
import { EMBEDDED_LEAN_VARIABLE } from "../../lean-bridge/embedded/install";
import { parseFile } from "../../lean-bridge/lean/commands";
import { EXAMPLE, REPO } from "../helpers";
import {
  LEAN_CHANGES,
  MATHLIB_EXAMPLE,
  atLeast,
  coreGate,
  mathlibGate,
  parseLeanVersion,
} from "../real-lean/gate";

interface Step {
  name?: string;
  uses?: string;
  run?: string;
  if?: string;
  "working-directory"?: string;
}
interface Job {
  "continue-on-error"?: string | boolean;
  env?: Record<string, string>;
  strategy?: { "fail-fast"?: boolean; matrix?: { include?: Record<string, string>[] } };
  steps: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, Job>;
}

const WORKFLOWS = join(REPO, ".github", "workflows");
const readWorkflow = (name: string) => parse(readFileSync(join(WORKFLOWS, name), "utf8")) as Workflow;
const pinned = readFileSync(join(EXAMPLE, "lean-toolchain"), "utf8").trim();
const pinnedTag = pinned.replace(/^leanprover\/lean4:/, "");

/** The index of the first step whose run script contains `text`; fails when none does. */
function stepWith(steps: Step[], text: string): number {
  const k = steps.findIndex((s) => s.run?.includes(text));
  assert.ok(k >= 0, `no step runs ${JSON.stringify(text)}`);
  return k;
}

test("every workflow is valid YAML with jobs and steps", () => {
  for (const name of readdirSync(WORKFLOWS).filter((f) => f.endsWith(".yml"))) {
    const w = readWorkflow(name);
    assert.ok(w.on && Object.keys(w.on).length > 0, `${name}: no triggers`);
    for (const [id, job] of Object.entries(w.jobs))
      assert.ok(Array.isArray(job.steps) && job.steps.length > 0, `${name}: job ${id} has no steps`);
  }
});

test("lean-env pins a stable release, and the Mathlib project the same one with Mathlib's tag for it", () => {
  assert.match(pinned, /^leanprover\/lean4:v4\.\d+\.\d+$/, "a stable release, never an rc or nightly");
  // The newest stable release (issue 23): 4.36.0, released 2026-11-16.
  assert.equal(pinned, "leanprover/lean4:v4.36.0");
  assert.equal(readFileSync(join(MATHLIB_EXAMPLE, "lean-toolchain"), "utf8").trim(), pinned);
  const lakefile = readFileSync(join(MATHLIB_EXAMPLE, "lakefile.toml"), "utf8");
  const require = /\[\[require\]\]([\s\S]*?)(?=\n\[|$)/.exec(lakefile)?.[1] ?? "";
  assert.match(require, /name = "mathlib"/);
  assert.match(require, /git = "https:\/\/github\.com\/leanprover-community\/mathlib4"/);
  assert.ok(require.includes(`rev = "${pinnedTag}"`), `Mathlib's rev must be its tag ${pinnedTag}`);
  for (const line of readFileSync(join(MATHLIB_EXAMPLE, "FimMathlib.lean"), "utf8")
    .split("\n")
    .filter(Boolean)) {
    const module = /^import (\S+)$/.exec(line)?.[1];
    assert.ok(module, line);
    assert.ok(existsSync(join(MATHLIB_EXAMPLE, ...module.split(".")) + ".lean"), `${module} has no file`);
  }
});

test("the Mathlib project uses what real projects use", () => {
  const dir = join(MATHLIB_EXAMPLE, "FimMathlib");
  const texts = readdirSync(dir).map((f) => readFileSync(join(dir, f), "utf8"));
  const files = texts.map((t) => parseFile(t));
  const declarations = files.flatMap((f) =>
    f.commands.flatMap((c) => (c.declaration ? [c.declaration] : [])),
  );
  const keywords = new Set(files.flatMap((f) => f.commands.map((c) => c.keyword)));
  assert.ok(
    files.some((f) => f.commands.some((c) => c.keyword === "module" && c.end <= f.headerEnd)),
    "a module",
  );
  assert.ok(
    files.some((f) => !f.commands.some((c) => c.keyword === "module")),
    "a file without `module`",
  );
  for (const k of ["lemma", "theorem", "instance", "example", "variable", "section", "namespace"])
    assert.ok(keywords.has(k), `no ${k}`);
  assert.ok(declarations.filter((d) => d.bodyKind === "tactic").length >= 20, "tactic proofs");
  const all = texts.join("\n");
  for (const [what, pattern] of [
    ["open Classical", /^open Classical$/m],
    ["@[expose] public section", /^@\[expose\] public section$/m],
    ["public import", /^public import Mathlib\./m],
    ["private lemma", /^private lemma /m],
    ["protected lemma", /^protected lemma /m],
    ["set_option … in before a declaration", /^set_option \S+ \S+ in\n(lemma|theorem) /m],
    ["an anonymous instance with binders", /^instance \(/m],
    ["a named instance", /^instance [a-zA-Z]/m],
    ["bullets", /^ {2}· /m],
  ] as const)
    assert.match(all, pattern, what);
});

test("the real-lean workflow: a toolchain matrix over lean-env, every real-Lean test, Lean required", () => {
  const w = readWorkflow("real-lean.yml");
  assert.ok("push" in w.on && "pull_request" in w.on);
  const job = w.jobs["lean-env"];
  assert.ok(job, "a lean-env job");
  const entries = job.strategy?.matrix?.include ?? [];
  const byRole = (role: string) => entries.find((e) => e.role === role);
  assert.equal(byRole("oldest")?.lean, "v4.24.0");
  assert.equal(byRole("legacy-native-removed")?.lean, "v4.35.0", "4.35: lake check, no legacy native axioms");
  assert.equal(byRole("pinned")?.lean, pinnedTag, "the matrix names the toolchain lean-env pins");
  assert.equal(byRole("release-candidate")?.lean, "beta", "elan's channel of the newest release candidate");
  assert.equal(byRole("canary")?.lean, "stable");
  assert.equal(
    job["continue-on-error"],
    "${{ matrix.role == 'canary' || matrix.role == 'release-candidate' }}",
    "only the channels that move may fail",
  );
  assert.equal(job.strategy?.["fail-fast"], false);
  assert.equal(job.env?.FIM_REAL_LEAN, "1");
  const steps = job.steps;
  assert.ok(steps.some((s) => s.uses?.startsWith("actions/checkout")));
  const elan = stepWith(steps, "elan-init.sh");
  assert.match(steps[elan]!.run!, /GITHUB_PATH/);
  const pin = stepWith(steps, "> lean-env/lean-toolchain");
  assert.ok(steps[pin]!.run!.includes("leanprover/lean4:${{ matrix.lean }}"));
  const build = steps.findIndex(
    (s) => s["working-directory"] === "lean-env" && /lake build/.test(s.run ?? ""),
  );
  const npmBuild = stepWith(steps, "npm run build");
  const tests = stepWith(steps, "node scripts/run-tests.mjs test/real-lean");
  assert.ok(elan < pin && pin < build && build < tests && npmBuild < tests, "steps in order");
  assert.ok(existsSync(join(REPO, "scripts", "run-tests.mjs")));
});

test("the real-lean workflow: the Mathlib project fetched with `lake exe cache get`, built, and tested", () => {
  const job = readWorkflow("real-lean.yml").jobs.mathlib;
  assert.ok(job, "a mathlib job");
  assert.equal(job.env?.FIM_REAL_LEAN_MATHLIB, "1");
  const steps = job.steps;
  const fetch = steps.findIndex((s) => s["working-directory"] === "lean-env-mathlib");
  assert.ok(fetch >= 0 && existsSync(MATHLIB_EXAMPLE));
  const script = steps[fetch]!.run ?? "";
  assert.ok(script.indexOf("lake exe cache get") >= 0, "Mathlib's prebuilt files");
  assert.ok(script.indexOf("lake exe cache get") < script.indexOf("lake build"), "cache before build");
  const tests = stepWith(steps, "node scripts/run-tests.mjs test/real-lean/mathlib.test.ts");
  assert.ok(stepWith(steps, "npm run build") < tests && fetch < tests);
  assert.ok(existsSync(join(REPO, "test", "real-lean", "mathlib.test.ts")));
});

test("the project's own CI never promises real Lean", () => {
  assert.doesNotMatch(readFileSync(join(REPO, ".ci", "run"), "utf8"), /FIM_REAL_LEAN/);
});

test("gates: skip with a reason without lake, fail where real Lean is promised, run with it", () => {
  const skip = coreGate(undefined, {});
  assert.equal(skip.kind, "skip");
  if (skip.kind === "skip") assert.match(skip.reason, /lake is not on PATH.*elan/);
  assert.equal(coreGate(undefined, { FIM_REAL_LEAN: "1" }).kind, "missing");
  assert.equal(coreGate(undefined, { FIM_REAL_LEAN: "0" }).kind, "skip");
  assert.equal(coreGate("/usr/bin/lake", { FIM_REAL_LEAN: "1" }).kind, "run");

  const never = () => assert.fail("the project is not inspected without lake");
  assert.equal(mathlibGate(undefined, {}, never).kind, "skip");
  assert.equal(mathlibGate(undefined, { FIM_REAL_LEAN: "1" }, never).kind, "skip", "the core flag alone");
  assert.equal(mathlibGate(undefined, { FIM_REAL_LEAN_MATHLIB: "1" }, never).kind, "missing");
  const unbuilt = () => ({ built: false as const, detail: "Mathlib is not fetched" });
  const notBuilt = mathlibGate("/usr/bin/lake", {}, unbuilt);
  assert.equal(notBuilt.kind, "skip");
  if (notBuilt.kind === "skip")
    assert.match(notBuilt.reason, /lake exe cache get && lake build.*not fetched/);
  assert.equal(mathlibGate("/usr/bin/lake", { FIM_REAL_LEAN_MATHLIB: "1" }, unbuilt).kind, "missing");
  assert.equal(mathlibGate("/usr/bin/lake", {}, () => ({ built: true })).kind, "run");
});

test("Lean versions: read from `lean --version`, compared as releases", () => {
  assert.deepEqual(
    parseLeanVersion("Lean (version 4.34.1, x86_64-unknown-linux-gnu, commit 5045d00, Release)"),
    [4, 34, 1],
  );
  assert.deepEqual(
    parseLeanVersion("Lean (version 4.35.0-rc4, arm64-apple-darwin24.6.0, Release)"),
    [4, 35, 0],
  );
  assert.equal(parseLeanVersion("lake: command not found"), undefined);
  assert.equal(atLeast([4, 24, 0], LEAN_CHANGES.nativeAxiomPerComputation), false);
  assert.equal(atLeast([4, 29, 0], LEAN_CHANGES.nativeAxiomPerComputation), true);
  assert.equal(atLeast([4, 29, 5], LEAN_CHANGES.printAxiomsInModules), false);
  assert.equal(atLeast([4, 34, 1], LEAN_CHANGES.printAxiomsInModules), true);
  assert.equal(atLeast([5, 0, 0], LEAN_CHANGES.printAxiomsInModules), true);
});

test("the real-Lean test files skip with the reason here and fail when FIM_REAL_LEAN=1 promises Lean", () => {
  const files = readdirSync(join(REPO, "test", "real-lean"))
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => join("test", "real-lean", f));
  // Only node's own folder on PATH: lake is missing whatever this machine has installed.
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: dirname(process.execPath) };
  delete env.FIM_REAL_LEAN;
  delete env.FIM_REAL_LEAN_MATHLIB;
  // The embedded Lean's tier (test/real-lean/embedded*.test.ts) has its own gate: missing here too, and not on CI,
  // where its absence would fail the run that is meant to skip.
  delete env[EMBEDDED_LEAN_VARIABLE];
  delete env.CI;
  env.FIM_RLVR_CACHE = join(REPO, "test", "fixtures", "no-such-cache");
  delete env.NODE_TEST_CONTEXT; // else the child reports to this runner instead of printing TAP
  // The child's tier tests must not count into this run's tier line (scripts/run-tests.mjs): they skip by design.
  delete env.FIM_REAL_LEAN_TIER_COUNT;
  const run = (extra: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-reporter=tap", ...files], {
      cwd: REPO,
      env: { ...env, ...extra },
      encoding: "utf8",
      timeout: 240_000,
    });
  const skipped = run({});
  assert.equal(skipped.status, 0, skipped.stdout + skipped.stderr);
  assert.match(skipped.stdout, /# SKIP lake is not on PATH/);
  assert.match(skipped.stdout, /# SKIP the embedded Lean is missing/);
  assert.match(skipped.stdout, /# fail 0/);
  const promised = run({ FIM_REAL_LEAN: "1" });
  assert.notEqual(promised.status, 0);
  assert.match(promised.stdout, /# pass 0/);
  assert.match(promised.stdout + promised.stderr, /FIM_REAL_LEAN=1 says real Lean is expected/);
});
