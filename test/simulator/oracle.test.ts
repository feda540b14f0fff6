/**
 * The workspace oracle (lean-env/fim-oracle.json): the simulator finds it by itself wherever it runs on the
 * workspace, names it in every verdict, proves every entry, and nothing outside the menus; a broken oracle file
 * stops it with the reason; `--oracle` replaces it. The same entries are checked with real Lean in
 * test/real-lean/oracle.test.ts.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { resolveOracle } from "../../lean-bridge/simulator/reference";
import { startVerifier } from "../../lean-bridge/verifiers/startVerifier";
import { EXAMPLE, REPO } from "../helpers";
import { inMemory } from "../harness";
import {
  oracleTasks,
  outsideMenuTasks,
  readWorkspaceOracle,
  workspaceDeclarations,
} from "../workspaceOracle";
import { tempDir } from "../tempDirs";

test("the oracle covers every open goal of lean-env and names only its declarations", () => {
  const oracle = readWorkspaceOracle();
  const decls = workspaceDeclarations();
  const open = [...decls].filter(([, d]) => d.open).map(([name]) => name);
  assert.ok(open.length > 300, `${open.length} sorry statements`);
  for (const name of open) assert.ok(oracle.alternatives[name]?.length, `${name} has no oracle entry`);
  for (const name of Object.keys(oracle.alternatives))
    assert.ok(decls.has(name), `${name} is not in lean-env`);
  // About a fifth of the statements carry their proof (the generator's documented choice).
  const share = (decls.size - open.length) / decls.size;
  assert.ok(share > 0.15 && share < 0.25, `${(share * 100).toFixed(1)}% carry a proof`);
  assert.ok(Object.keys(oracle.families).length >= 30, "at least 30 families");
  for (const [key, f] of Object.entries(oracle.families))
    if (!key.endsWith(".Specials")) assert.ok(f.instances >= 10, `${key}: ${f.instances} instances`);
});

test("the simulator proves every oracle entry, names the oracle, and proves nothing outside the menus", async () => {
  const h = await inMemory({}, { slots: 4 });
  try {
    const tasks = oracleTasks();
    const verdicts = await h.pool.verifyMany(
      tasks.map((t) => ({ task: { file: t.file, hole: t.hole }, candidate: t.candidate })),
    );
    verdicts.forEach((v, k) =>
      assert.equal(v.kind, "proved", `${tasks[k]!.name}: ${tasks[k]!.candidate}: ${JSON.stringify(v)}`),
    );
    assert.match(
      verdicts[0]!.verifier.label,
      /^simulator .* with oracle fim-oracle\.json \(\d+ declarations\) \(not Lean\)$/,
    );
    const wrong = outsideMenuTasks(7);
    assert.ok(wrong.length > 100, `${wrong.length} candidates outside the menus`);
    const failed = await h.pool.verifyMany(
      wrong.map((t) => ({ task: { file: t.file, hole: t.hole }, candidate: t.candidate })),
    );
    failed.forEach((v, k) =>
      assert.notEqual(v.kind, "proved", `${wrong[k]!.name}: ${wrong[k]!.candidate} is outside the menu`),
    );
  } finally {
    await h.close();
  }
});

test("a workspace without an oracle file: the simulator judges by its proofs alone and says no oracle", async () => {
  const dir = tempDir("fim-no-oracle-");
  cpSync(join(EXAMPLE, "FimExamples"), join(dir, "FimExamples"), { recursive: true });
  assert.deepEqual(resolveOracle(dir), { kind: "ok", resolved: { oracle: {} } });
  const h = await inMemory({ cwd: dir }, { projectRoot: dir });
  try {
    const d = workspaceDeclarations().get("FimExamples.Arith.le_trans_add_1")!;
    const v = await h.pool.verify({ file: d.file, hole: d.hole }, "omega");
    assert.equal(v.kind, "failed", "an open goal has no reference proof without the oracle");
    assert.doesNotMatch(v.verifier.label, /oracle/);
  } finally {
    await h.close();
  }
});

test("a malformed workspace oracle stops the simulator with the reason; --oracle replaces the workspace's", () => {
  const dir = tempDir("fim-bad-oracle-");
  writeFileSync(join(dir, "fim-oracle.json"), '{"alternatives": {"A.b": "by omega"}}');
  const bad = resolveOracle(dir);
  assert.equal(bad.kind, "error");
  assert.match(bad.kind === "error" ? bad.message : "", /"alternatives"\."A\.b" must be a list of strings/);
  const cli = join(REPO, "dist", "cli.js");
  const r = spawnSync(process.execPath, [cli, "simulator"], { cwd: dir, input: "", encoding: "utf8" });
  assert.equal(r.status, 2, r.stderr);
  assert.match(
    r.stderr,
    /the workspace's fim-oracle\.json: .*must be a list of strings \(fix or remove it\)/,
  );
  const missing = spawnSync(process.execPath, [cli, "simulator", "--oracle", join(dir, "absent.json")], {
    cwd: dir,
    input: "",
    encoding: "utf8",
  });
  assert.equal(missing.status, 2, missing.stderr);
  assert.match(missing.stderr, /--oracle: .*absent\.json: no such file \(fix or remove it\)/);
  assert.doesNotMatch(missing.stderr, /ENOENT/, "said in words, not Node's error line");
  const other = join(dir, "other.json");
  writeFileSync(other, JSON.stringify({ alternatives: { "A.b": ["by simp"] } }));
  const given = resolveOracle(dir, other);
  assert.equal(given.kind, "ok");
  if (given.kind === "ok") {
    assert.deepEqual(given.resolved.oracle.alternatives, { "A.b": ["by simp"] });
    assert.equal(given.resolved.source, "other.json (1 declaration)");
  }
  // The generator's file is what resolveOracle reads for lean-env.
  const own = resolveOracle(EXAMPLE);
  assert.equal(own.kind, "ok");
  const count = Object.keys(
    (JSON.parse(readFileSync(join(EXAMPLE, "fim-oracle.json"), "utf8")) as { alternatives: object })
      .alternatives,
  ).length;
  if (own.kind === "ok") assert.equal(own.resolved.source, `fim-oracle.json (${count} declarations)`);
});

test("the simulator's kernel gate judges with the same oracle: an oracle proof of an open goal is confirmed", async () => {
  // Through startVerifier, as `train` and `eval` build their verifier: the gate's model must read the workspace's
  // oracle as the server does, or it refutes every open goal's proof the server accepted (a "hack" per proof).
  const started = await startVerifier(EXAMPLE, { kind: "simulator", slots: 2, kernelGate: { kind: "all" } });
  assert.equal(started.kind, "ok");
  if (started.kind !== "ok") return;
  try {
    const tasks = oracleTasks()
      .filter((t) => workspaceDeclarations().get(t.name)?.open)
      .slice(0, 6);
    assert.ok(tasks.length === 6);
    const verdicts = await started.pool.verifyMany(
      tasks.map((t) => ({ task: { file: t.file, hole: t.hole }, candidate: t.candidate })),
    );
    verdicts.forEach((v, k) => {
      assert.equal(v.kind, "proved", `${tasks[k]!.name}: ${JSON.stringify(v)}`);
      assert.equal(v.kind === "proved" ? v.confirmedBy : undefined, "kernel-replay");
    });
  } finally {
    await started.pool.stop();
  }
});
