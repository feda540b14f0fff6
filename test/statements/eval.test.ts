/**
 * `fim-rlvr eval` on statement datasets, end to end through dist/cli.js with the OpenAI-compatible stub as the
 * model: on `import`'s output with the simulator (the verifier runs in the user's project, which the imported
 * dataset names), and on a statement FILE with --project and `--verifier kimina:URL` against the Kimina stub (the
 * import's sorry pre-check and every sample go to Kimina; verdicts name it).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { near, resultsOf, summaryOf } from "../eval/evalOutput";
import { REPO, runCli } from "../helpers";
import { startStub as startKimina } from "../kimina/stub";
import { answer as kiminaAnswer } from "../kimina/theoremsAnswer";
import { fimModelFlags, startStub as startModel } from "../models/openaiStub";
import { CLI, ENV, lines, statementProject } from "./statementRun";

/** The model: a proof every stub accepts for sample 0, a wrong one for sample 1. */
const MODEL_ANSWERS = ["trivial", "simp_all_wrong"];

const modelArgs = (url: string) => [
  ...fimModelFlags(url, "tiny-coder"),
  "-n",
  "2",
  "-k",
  "1,2",
  "--kinds",
  "proof",
  "--split",
  "all",
];

test("eval on an imported dataset with the simulator: verified in the project the import names", async () => {
  const model = await startModel({ model: "tiny-coder", answer: (_p, index) => MODEL_ANSWERS[index % 2]! });
  try {
    const { dir, theorems } = statementProject();
    const dataset = join(dir, "ds");
    const imported = await runCli(
      CLI,
      ["import", theorems, "--project", dir, "--out", dataset, "--simulator"],
      ENV,
    );
    assert.equal(imported.code, 0, imported.stderr);
    // The simulator accepts a file's own proofs and an oracle's alternatives: `trivial` for every theorem here.
    const decls = lines<{ decl: string; kind: string }>(join(dataset, "tasks.jsonl"))
      .filter((t) => t.kind === "proof")
      .map((t) => t.decl);
    assert.equal(decls.length, 4);
    const oracle = join(dir, "oracle.json");
    writeFileSync(
      oracle,
      JSON.stringify({ alternatives: Object.fromEntries(decls.map((d) => [d, ["by trivial"]])) }),
    );
    const out = join(dir, "eval");
    const r = await runCli(
      CLI,
      ["eval", dataset, ...modelArgs(model.baseUrl), "--simulator", "--oracle", oracle, "--out", out],
      ENV,
    );
    assert.equal(r.code, 0, r.stderr);
    const summary = summaryOf(out);
    assert.equal(summary.tasks.done, 4);
    near(summary.overall.passAtK["1"]!.value, 0.5);
    near(summary.overall.passAtK["2"]!.value, 1);
    assert.deepEqual(summary.overall.outcomes, {
      proved: 4,
      sorry: 0,
      "lean-error": 4,
      timeout: 0,
      infrastructure: 0,
    });
    assert.equal(summary.run.dataset.workspace, dir, "the imported dataset names its project");
    assert.equal(summary.run.verifier.kind, "simulator");
  } finally {
    await model.close();
  }
});

test("eval theorems.jsonl --project --verifier kimina:URL: imported, then every sample checked by Kimina (stub)", async () => {
  const model = await startModel({ model: "tiny-coder", answer: (_p, index) => MODEL_ANSWERS[index % 2]! });
  const kimina = await startKimina({ answer: kiminaAnswer });
  try {
    const { dir, theorems } = statementProject();
    const out = join(dir, "eval-kimina");
    const args = [
      "eval",
      theorems,
      "--project",
      dir,
      ...modelArgs(model.baseUrl),
      "--verifier",
      `kimina:${kimina.url}`,
      "--out",
      out,
    ];
    // eval's proofs are results, which the kernel gate always confirms: with no Lean here to run it on, the
    // Kimina verifier does not start.
    const refused = await runCli(CLI, args, ENV);
    assert.notEqual(refused.code, 0, refused.stderr);
    assert.match(refused.stderr, /no kernel gate here/);
    // With a (scripted) local `lake`, the gate runs here and confirms Kimina's proofs.
    const withGate = { ...ENV, PATH: `${join(REPO, "test", "fixtures", "fake-lake")}:${ENV.PATH}` };
    const r = await runCli(CLI, args, withGate);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /import: checking statements with Kimina Lean Server/);
    assert.match(r.stderr, /4 statements kept/);
    const summary = summaryOf(out);
    assert.equal(summary.tasks.done, 4);
    near(summary.overall.passAtK["1"]!.value, 0.5);
    assert.equal(summary.overall.outcomes.proved, 4);
    assert.equal(summary.overall.outcomes["lean-error"], 4);
    assert.equal(summary.run.verifier.kind, "kimina");
    const results = resultsOf(out);
    assert.equal(results.length, 8);
    for (const line of results) {
      assert.match(line.run.verifier.label, /^Kimina Lean Server/);
      assert.equal(line.outcome, line.candidate === "trivial" ? "proved" : "lean-error");
    }
    // The pre-check's 4 probes and the 8 samples (each one /api/check request or part of a batch).
    const codes = kimina.requests.flatMap((q) => q.codes);
    assert.ok(codes.filter((c) => /\bsorry\b/.test(c)).length >= 4, "the sorry pre-check went to Kimina");
    assert.ok(codes.filter((c) => /\btrivial\b/.test(c)).length >= 4, "the samples went to Kimina");
    // Resume reuses the imported dataset and the finished results.
    const again = await runCli(CLI, [...args, "--resume"], withGate);
    assert.equal(again.code, 0, again.stderr);
    assert.doesNotMatch(again.stderr, /import: checking/);
    assert.match(again.stderr, /4 of 4 tasks already done/);
  } finally {
    await model.close();
    await kimina.close();
  }
});
