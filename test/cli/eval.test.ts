/**
 * `fim-rlvr eval` end to end through dist/cli.js on lean-env with the simulator and scripted models whose every
 * outcome is known in advance (fake:pattern:…): pass@k equals the hand-computed figure, every line carries the
 * run's identity, infrastructure is left out, repair turns count; usage errors; Ctrl-C then --resume gives the
 * same results as one uninterrupted run; --compare.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { appendFileSync, cpSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { EXAMPLE, REPO, runCli } from "../helpers";
import type { ResultLine } from "../../lean-bridge/eval/records";
import { near, resultsOf, summaryOf } from "../eval/evalOutput";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const TMP = tempDir("fim-eval-cli-");

function run(args: string[]) {
  const r = spawnSync(process.execPath, [CLI, ...args], { encoding: "utf8", timeout: 240_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const dataset = (() => {
  const out = join(TMP, "ds");
  const r = run(["export", EXAMPLE, "--out", out, "--kinds", "proof,tactic"]);
  assert.equal(r.code, 0, r.stderr);
  return out;
})();

test("pass@k, outcomes and the recorded identity of a scripted model on lean-env", () => {
  const out = join(TMP, "rsx");
  const r = run([
    "eval",
    dataset,
    "--model",
    "fake:pattern:rsx",
    "-n",
    "3",
    "-k",
    "1,2,3",
    "--kinds",
    "proof",
    "--limit",
    "5",
    "--simulator",
    "--out",
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /eval: 5\/5 tasks \(100%\)/);
  assert.match(r.stdout, /verified by simulator .*\(not Lean\)/);
  const summary = summaryOf(out);
  // Each task: one proved, one sorry, one Lean error: pass@1 = 1/3, pass@2 = 1 − C(2,2)/C(3,2) = 2/3, pass@3 = 1.
  near(summary.overall.passAtK["1"]!.value, 1 / 3);
  near(summary.overall.passAtK["2"]!.value, 2 / 3);
  near(summary.overall.passAtK["3"]!.value, 1);
  assert.deepEqual(summary.overall.outcomes, {
    proved: 5,
    sorry: 5,
    "lean-error": 5,
    timeout: 0,
    infrastructure: 0,
  });
  assert.deepEqual(Object.keys(summary.byKind), ["proof"]);
  assert.ok(Object.keys(summary.byFile).length >= 1);
  assert.equal(summary.tasks.done, 5);
  assert.equal(summary.partial, false);
  const lines = resultsOf(out);
  assert.equal(lines.length, 15);
  for (const line of lines) {
    assert.equal(line.run.model.spec, "fake:pattern:rsx");
    assert.equal(line.run.prompt.style, "qwen");
    assert.deepEqual(line.run.sampling, { n: 3, temperature: 0.4, topP: 1, maxNewTokens: 48 });
    assert.equal(line.run.verifier.kind, "simulator");
    assert.match(line.run.dataset.sha256, /^[0-9a-f]{64}$/);
    assert.equal(line.run.dataset.id, "ds");
  }
  assert.deepEqual(new Set(lines.map((l) => l.verdict?.kind)), new Set(["proved", "rejected", "failed"]));
  const html = readFileSync(join(out, "report.html"), "utf8");
  assert.match(html, /simulator[^<]*\(not Lean\)/);
  assert.match(html, /<svg/);
  assert.doesNotMatch(html, /<script|https?:\/\/(?!www\.w3\.org)/);
});

test("repair turns and infrastructure failures end to end", () => {
  const out = join(TMP, "repair");
  // r proves; f is wrong, then fixed on the repair turn; e fails once (a server error, retried) then proves.
  const r = run([
    "eval",
    dataset,
    "--model",
    "fake:pattern:fxe",
    "-n",
    "3",
    "-k",
    "1",
    "--repair",
    "1",
    "--kinds",
    "proof",
    "--limit",
    "3",
    "--simulator",
    "--out",
    out,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const summary = summaryOf(out);
  assert.deepEqual(summary.provedAtTurn, { "0": 3, "1": 3 }, "3 tasks: f proved at turn 1, e at turn 0");
  const lines = resultsOf(out);
  const x = lines.filter((l) => l.sample === 1 && l.final);
  assert.ok(
    x.every((l) => l.outcome === "lean-error" && l.turn === 1),
    "x stays wrong after its repair turn",
  );
  assert.ok(
    lines.filter((l) => l.turn === 0).every((l) => l.attempts === 2),
    "the failed request was retried once",
  );
  near(summary.overall.passAtK["1"]!.value, 2 / 3);

  const down = join(TMP, "down");
  const d = run([
    "eval",
    dataset,
    "--model",
    "fake:pattern:E",
    "-n",
    "2",
    "-k",
    "1",
    "--kinds",
    "proof",
    "--limit",
    "2",
    "--simulator",
    "--out",
    down,
    "--retries",
    "1",
  ]);
  // A model that never answers is not an evaluation of infrastructure failures (test/eval/loop.test.ts has one
  // that answered, then went away): it stops at the first request, exit 1, saying what to do.
  assert.equal(d.code, 1, d.stderr);
  assert.match(d.stderr, /the model could not be reached, in 2 attempts: Scripted connection refused/);
  assert.match(d.stderr, /Start the model's server, or check the URL in --model/);
});

test("usage errors: n < k, no model, unknown split; results present without --resume", () => {
  const base = [dataset, "--simulator", "--out", join(TMP, "usage")];
  const small = run(["eval", ...base, "--model", "fake:pattern:r", "-n", "4", "-k", "1,8"]);
  assert.equal(small.code, 2);
  assert.match(small.stderr, /n >= k: -n 4 is fewer than k = 8/);
  assert.equal(run(["eval", ...base]).code, 2);
  assert.equal(run(["eval", ...base, "--model", "fake:pattern:r", "--split", "dev"]).code, 2);
  assert.equal(run(["eval", ...base, "--model", "nope:x"]).code, 2);
  // A nonexistent dataset is bad usage, as in export, import and verify.
  const absent = run([
    "eval",
    join(TMP, "no-dataset"),
    "--model",
    "fake:pattern:r",
    "--out",
    join(TMP, "absent"),
  ]);
  assert.equal(absent.code, 2, absent.stderr);
  assert.match(absent.stderr, /no-dataset: no such file or folder; give a dataset folder/);
  assert.ok(!existsSync(join(TMP, "absent")));
  // An existing folder that is no dataset is bad usage too, before the verifier's banner.
  const notDataset = run(["eval", TMP, "--model", "fake:pattern:r", "--out", join(TMP, "not-dataset")]);
  assert.equal(notDataset.code, 2, notDataset.stderr);
  assert.match(notDataset.stderr, /is neither a dataset \(no tasks\.jsonl\) nor a Lean workspace/);
  assert.doesNotMatch(notDataset.stderr, /SIMULATOR/);
  assert.ok(!existsSync(join(TMP, "not-dataset")));
  // A failed evaluation leaves no EVAL_DIR it made: here no task is of the split and kind asked for.
  const failed = join(TMP, "failed", "eval");
  const none = run(
    ["eval", dataset, "--model", "fake:pattern:r", "--split", "train", "--kinds", "block"].concat([
      "--simulator",
      "--out",
      failed,
    ]),
  );
  assert.equal(none.code, 1, none.stderr);
  assert.ok(!existsSync(failed), "the failed evaluation's folder is gone");
  assert.ok(!existsSync(join(TMP, "failed")), "and the parent it made for it");
  const twice = join(TMP, "twice");
  const args = [
    "eval",
    dataset,
    "--model",
    "fake:pattern:r",
    "-n",
    "1",
    "-k",
    "1",
    "--kinds",
    "proof",
    "--limit",
    "1",
    "--simulator",
    "--out",
    twice,
  ];
  assert.equal(run(args).code, 0);
  const again = run(args);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /already holds results[\s\S]*--resume/);
  const other = run([...args.slice(0, 3), "fake:pattern:x", ...args.slice(4), "--resume"]);
  assert.equal(other.code, 1);
  assert.match(other.stderr, /other settings \(model differ\)/);
});

test("Ctrl-C writes what is done and exits 130; --resume (past a torn line) ends as one uninterrupted run", async () => {
  const common = [
    "--model",
    "fake:pattern:rx",
    "-n",
    "2",
    "-k",
    "1,2",
    "--kinds",
    "proof",
    "--limit",
    "8",
    "--workers",
    "1",
    "--simulator",
    "--sim-decl-ms",
    "150",
  ];
  const whole = join(TMP, "whole");
  assert.equal(run(["eval", dataset, ...common, "--out", whole]).code, 0);
  const cut = join(TMP, "cut");
  let pressed = false;
  const first = await runCli(
    CLI,
    ["eval", dataset, ...common, "--out", cut],
    process.env,
    (stderr, child) => {
      if (!pressed && /eval: [12]\/8 tasks/.test(stderr)) {
        pressed = true;
        child.kill("SIGINT");
      }
    },
  );
  assert.equal(first.code, 130, first.stderr);
  assert.match(first.stderr, /--resume/);
  const partial = summaryOf(cut);
  assert.equal(partial.partial, true);
  assert.ok(partial.tasks.done >= 1 && partial.tasks.done < 8, `${partial.tasks.done} tasks done`);
  appendFileSync(join(cut, "results.jsonl"), '{"task_id":"torn","sam');
  const resumed = run(["eval", dataset, ...common, "--out", cut, "--resume"]);
  assert.equal(resumed.code, 0, resumed.stderr);
  assert.match(resumed.stderr, /dropped 1 torn line/);
  assert.match(resumed.stderr, /resuming, \d of 8 tasks already done/);
  const key = (l: ResultLine) => `${l.task_id}/${l.sample}/${l.turn}:${l.outcome}:${l.candidate}:${l.seed}`;
  assert.deepEqual(resultsOf(cut).map(key).sort(), resultsOf(whole).map(key).sort());
  const done = summaryOf(cut);
  assert.equal(done.partial, false);
  assert.deepEqual(done.overall.passAtK, summaryOf(whole).overall.passAtK);
});

test("--compare sets evaluations side by side (text, and HTML with --out)", () => {
  const a = join(TMP, "cmp-a");
  const b = join(TMP, "cmp-b");
  for (const [dir, model] of [
    [a, "fake:pattern:r"],
    [b, "fake:pattern:x"],
  ] as const)
    assert.equal(
      run([
        "eval",
        dataset,
        "--model",
        model,
        "-n",
        "1",
        "-k",
        "1",
        "--kinds",
        "proof",
        "--limit",
        "2",
        "--simulator",
        "--out",
        dir,
      ]).code,
      0,
    );
  const html = join(TMP, "compare.html");
  const r = run(["eval", "--compare", a, b, "--out", html]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(
    r.stdout,
    /fake:pattern:r on ds[\s\S]*pass@1 100\.0%[\s\S]*fake:pattern:x on ds[\s\S]*pass@1 0\.0%/,
  );
  const page = readFileSync(html, "utf8");
  assert.match(page, /cmp-a pass@1[\s\S]*cmp-b pass@1/);
  assert.match(page, /fake:pattern:r[\s\S]*fake:pattern:x/);
  assert.doesNotMatch(r.stderr, /not like for like/, "the same dataset, split, verifier and n");
  // Unlike evaluations: the terminal warns as the page does.
  const c = join(TMP, "cmp-c");
  const two = ["eval", dataset, "--model", "fake:pattern:r", "-n", "2", "-k", "1", "--kinds", "proof"];
  assert.equal(run([...two, "--limit", "2", "--simulator", "--out", c]).code, 0);
  const unlike = run(["eval", "--compare", a, c]);
  assert.equal(unlike.code, 0, unlike.stderr);
  assert.match(unlike.stderr, /warning: not like for like: different numbers of samples per task/);
  // The same n over fewer tasks (--limit) measures another set of tasks.
  const d = join(TMP, "cmp-d");
  const one = ["eval", dataset, "--model", "fake:pattern:r", "-n", "1", "-k", "1", "--kinds", "proof"];
  assert.equal(run([...one, "--limit", "1", "--simulator", "--out", d]).code, 0);
  const fewer = run(["eval", "--compare", a, d]);
  assert.equal(fewer.code, 0, fewer.stderr);
  assert.match(fewer.stderr, /warning: not like for like: different numbers of tasks \(2, 1: --limit\)/);
  assert.equal(run(["eval", "--compare", a]).code, 2);
  const nothing = run(["eval", "--compare", a, join(TMP, "nothing")]);
  assert.equal(nothing.code, 2);
  assert.match(
    nothing.stderr,
    /nothing: no such file or folder; give folders written by `fim-rlvr eval --out`/,
  );
  const notEval = run(["eval", "--compare", a, TMP]);
  assert.equal(notEval.code, 2);
  assert.match(notEval.stderr, /: not an evaluation \(it has no summary\.json\); give folders written by/);
  assert.doesNotMatch(nothing.stderr + notEval.stderr, /ENOENT/, "said in words, not Node's error line");
  assert.ok(existsSync(join(a, "report.html")));
});

test("an OpenAI-compatible endpoint (the 127.0.0.1 stub) evaluated end to end: prompts, tokens, latency", async () => {
  const { fimModelFlags, startStub } = await import("../models/openaiStub");
  const { loadDataset } = await import("../../lean-bridge/train/dataset");
  const { selectTasks } = await import("../../lean-bridge/eval/evalTasks");
  const loaded = loadDataset(dataset);
  assert.equal(loaded.kind, "ok");
  const tasks = loaded.kind === "ok" ? selectTasks(loaded.dataset, "all", ["proof", "tactic"]) : [];
  // The stub answers a task's own proof for choice 0 and `sorry` for choice 1, finding the task by its
  // prefix's end and its suffix in the rendered FIM prompt.
  const stub = await startStub({
    model: "tiny-coder",
    answer: (prompt, index) => {
      const body = prompt.slice(prompt.indexOf("<|fim_prefix|>"));
      const task = tasks.find((t) =>
        body.includes(`${t.parts.prefix.slice(-60)}<|fim_suffix|>${t.parts.suffix}<|fim_middle|>`),
      );
      return index === 0 ? (task?.middle ?? "exact not_found") : "sorry";
    },
  });
  try {
    const out = join(TMP, "endpoint");
    const r = await runCli(
      CLI,
      [
        "eval",
        dataset,
        ...fimModelFlags(stub.baseUrl, "tiny-coder"),
        "-n",
        "2",
        "-k",
        "1,2",
        "--kinds",
        "proof",
        "--limit",
        "3",
        "--simulator",
        "--out",
        out,
      ],
      process.env,
    );
    assert.equal(r.code, 0, r.stderr);
    const summary = summaryOf(out);
    near(summary.overall.passAtK["1"]!.value, 0.5);
    near(summary.overall.passAtK["2"]!.value, 1);
    assert.deepEqual(summary.overall.outcomes, {
      proved: 3,
      sorry: 3,
      "lean-error": 0,
      timeout: 0,
      infrastructure: 0,
    });
    assert.equal(summary.run.model.spec, `openai:${stub.baseUrl}#tiny-coder`);
    assert.match(summary.run.prompt.style, /^qwen/);
    // Streamed answers carry no usage and no tokenizer was given: token counts are unknown, not guessed.
    const lines = resultsOf(out);
    assert.equal(
      summary.tokens.known,
      lines.filter((l) => l.prompt_tokens !== null || l.completion_tokens !== null).length,
    );
    assert.ok(summary.latencyMs.p50 !== null && summary.latencyMs.p95! >= summary.latencyMs.p50!);
    assert.ok(stub.requests.every((q) => String(q.body.prompt).startsWith("<|fim_prefix|>")));

    const refused = await runCli(
      CLI,
      [
        "eval",
        dataset,
        "--model",
        `openai:${stub.baseUrl}#other-model`,
        "--prompt-style",
        "fim",
        "--fim-family",
        "qwen",
        "-n",
        "1",
        "-k",
        "1",
        "--limit",
        "1",
        "--simulator",
        "--out",
        join(TMP, "endpoint-404"),
      ],
      process.env,
    );
    assert.equal(refused.code, 1, "a model the server does not serve stops the evaluation");
    assert.match(refused.stderr, /model-not-found/);
  } finally {
    await stub.close();
  }
});

test("the goal is in the prompt by default when the tasks carry one, as `train` asks it; --goal-in-prompt no leaves it out", async () => {
  const { fimModelFlags, startStub } = await import("../models/openaiStub");
  // A copy of the dataset whose tasks record the goal at the hole, as a real-Lean export does.
  const withGoals = join(TMP, "ds-goals");
  cpSync(dataset, withGoals, { recursive: true });
  const tasksFile = join(withGoals, "tasks.jsonl");
  const lines = readFileSync(tasksFile, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
  const marked = lines.map((l) =>
    JSON.stringify({ ...JSON.parse(l), goal: "n : Nat\n⊢ fimrlvr_goal_marker n" }),
  );
  writeFileSync(tasksFile, marked.join("\n") + "\n");
  const stub = await startStub({ model: "tiny-coder", answer: () => "sorry" });
  try {
    const evalWith = async (extra: string[], out: string) => {
      const before = stub.requests.length;
      const r = await runCli(
        CLI,
        [
          "eval",
          withGoals,
          ...fimModelFlags(stub.baseUrl, "tiny-coder"),
          ...extra,
          "-n",
          "1",
          "-k",
          "1",
          "--kinds",
          "proof",
          "--limit",
          "2",
          "--simulator",
          "--out",
          join(TMP, out),
        ],
        process.env,
      );
      assert.equal(r.code, 0, r.stderr);
      return {
        prompts: stub.requests.slice(before).map((q) => String(q.body.prompt)),
        summary: summaryOf(join(TMP, out)),
      };
    };
    const auto = await evalWith([], "goals-auto");
    assert.equal(auto.prompts.length, 2);
    for (const prompt of auto.prompts)
      assert.match(prompt, /-- goal at the hole:\n\s*-- n : Nat\n\s*-- ⊢ fimrlvr_goal_marker n/);
    assert.equal(auto.summary.run.prompt.showGoal, true);
    const off = await evalWith(["--goal-in-prompt", "no"], "goals-off");
    assert.equal(off.prompts.length, 2);
    for (const prompt of off.prompts) assert.doesNotMatch(prompt, /fimrlvr_goal_marker/);
    assert.equal(off.summary.run.prompt.showGoal, false);
    // Without goals in the tasks, auto shows none (the dataset exported from lean-env records none).
    const plain = resultsOf(join(TMP, "rsx"))[0]?.run.prompt.showGoal;
    assert.equal(plain, false);
  } finally {
    await stub.close();
  }
});
