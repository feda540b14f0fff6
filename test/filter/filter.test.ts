/**
 * `fim-rlvr filter` (issue 18's contract): the --keep band (parse errors say what to type; both ends included),
 * per-task pass rates (infrastructure left out), and end to end through dist/cli.js against the OpenAI-compatible
 * stub on 127.0.0.1 with the simulator: tasks the model always proves or never proves are dropped and said so, the
 * new dataset has the export layout and loads, and Ctrl-C keeps whole tasks so the same command continues.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { EXAMPLE, REPO, runCli } from "../helpers";
import { parseKeepBand } from "../../lean-bridge/filter/band";
import { taskRates } from "../../lean-bridge/filter/passRates";
import { filterWorkDir } from "../../lean-bridge/filter/runFilter";
import type { ResultLine } from "../../lean-bridge/eval/records";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const TMP = tempDir("fim-filter-");

const jsonl = <T>(path: string): T[] =>
  readFileSync(path, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as T);

test("--keep: LOW-HIGH fractions; errors say what to type", () => {
  assert.deepEqual(parseKeepBand("0.1-0.9"), { kind: "ok", band: { low: 0.1, high: 0.9 } });
  assert.deepEqual(parseKeepBand(" 0 - 1 "), { kind: "ok", band: { low: 0, high: 1 } });
  assert.deepEqual(parseKeepBand(".25-.75"), { kind: "ok", band: { low: 0.25, high: 0.75 } });
  const swapped = parseKeepBand("0.9-0.1");
  assert.ok(swapped.kind === "error" && /--keep 0\.1-0\.9/.test(swapped.message), JSON.stringify(swapped));
  const percent = parseKeepBand("10-90");
  assert.ok(
    percent.kind === "error" &&
      /from 0 to 1/.test(percent.message) &&
      /--keep 0\.1-0\.9/.test(percent.message),
  );
  for (const bad of ["0.5", "a-b", "0.1-0.5-0.9", "-0.1-0.5", "", "0.1-"])
    assert.equal(parseKeepBand(bad).kind, "error", bad);
});

function line(task: string, sample: number, outcome: ResultLine["outcome"], final = true): ResultLine {
  return {
    task_id: task,
    file: "F.lean",
    kind: "proof",
    split: "train",
    sample,
    final,
    outcome,
  } as ResultLine;
}

test("pass rates: final turns only, infrastructure left out, both ends of the band kept", () => {
  const lines = [
    // a: 1 of 4 proved = 0.25 (the band's low end: kept)
    ...["proved", "sorry", "lean-error", "timeout"].map((o, k) => line("a", k, o as ResultLine["outcome"])),
    // b: 3 of 4 = 0.75 (the high end: kept); a non-final failed turn before a proof does not count
    line("b", 0, "lean-error", false),
    ...["proved", "proved", "proved", "sorry"].map((o, k) => line("b", k, o as ResultLine["outcome"])),
    // c: 2 proved of 2 measured (1.0), two infrastructure samples left out: too easy
    ...["proved", "infrastructure", "proved", "infrastructure"].map((o, k) =>
      line("c", k, o as ResultLine["outcome"]),
    ),
    // d: never proved: too hard; e: nothing measured
    ...[0, 1].map((k) => line("d", k, "lean-error")),
    ...[0, 1].map((k) => line("e", k, "infrastructure")),
  ];
  const rates = new Map(taskRates(lines, { low: 0.25, high: 0.75 }).map((r) => [r.task_id, r]));
  assert.deepEqual(
    [...rates.values()].map((r) => [r.task_id, r.pass_rate, r.kept, r.reason ?? "kept"]),
    [
      ["a", 0.25, true, "kept"],
      ["b", 0.75, true, "kept"],
      ["c", 1, false, "too-easy"],
      ["d", 0, false, "too-hard"],
      ["e", null, false, "unmeasured"],
    ],
  );
  assert.deepEqual([rates.get("c")!.samples, rates.get("c")!.infrastructure], [2, 2]);
});

const dataset = (() => {
  const out = join(TMP, "ds");
  const r = spawnSync(process.execPath, [CLI, "export", EXAMPLE, "--out", out, "--kinds", "proof"], {
    encoding: "utf8",
  });
  assert.equal(r.status, 0, r.stderr);
  return out;
})();

test("usage errors: the band, the dataset, the model", async () => {
  const base = ["filter", dataset, "--model", "fake:pattern:r", "--simulator"];
  const swapped = await runCli(CLI, [...base, "--keep", "0.9-0.1"], process.env);
  assert.equal(swapped.code, 2);
  assert.match(swapped.stderr, /write it as --keep 0\.1-0\.9/);
  const notDataset = await runCli(CLI, ["filter", EXAMPLE, "--model", "fake:pattern:r"], process.env);
  assert.equal(notDataset.code, 2);
  assert.match(notDataset.stderr, /not a dataset folder/);
  const noModel = await runCli(CLI, ["filter", dataset, "--simulator"], process.env);
  assert.equal(noModel.code, 2);
  assert.match(noModel.stderr, /--model is required/);
});

test("filter end to end against the OpenAI-compatible stub: bands, layout, Ctrl-C and continue", async () => {
  const { fimModelFlags, startStub } = await import("../models/openaiStub");
  const { loadDataset } = await import("../../lean-bridge/train/dataset");
  const { selectTasks } = await import("../../lean-bridge/eval/evalTasks");
  const loaded = loadDataset(dataset);
  assert.ok(loaded.kind === "ok");
  const LIMIT = 6;
  const N = 4;
  const tasks = selectTasks(loaded.dataset, "all", ["proof"]).slice(0, LIMIT);
  // Task k of the selection: k % 3 == 0 always proved (rate 1), 1 proved by half the samples (0.5), 2 never (0).
  const classOf = (k: number) => k % 3;
  const taskOfPrompt = (prompt: string): number => {
    const body = prompt.slice(prompt.indexOf("<|fim_prefix|>"));
    return tasks.findIndex((t) =>
      body.includes(`${t.parts.prefix.slice(-60)}<|fim_suffix|>${t.parts.suffix}<|fim_middle|>`),
    );
  };
  const stub = await startStub({
    model: "tiny-coder",
    answer: (prompt, index) => {
      const k = taskOfPrompt(prompt);
      if (k < 0) return "exact not_found";
      const proves = classOf(k) === 0 || (classOf(k) === 1 && index % 2 === 0);
      return proves ? tasks[k]!.middle : "exact fim_rlvr_wrong";
    },
  });
  const out = join(TMP, "filtered");
  const args = [
    "filter",
    dataset,
    ...fimModelFlags(stub.baseUrl, "tiny-coder"),
    "-n",
    String(N),
    "--keep",
    "0.1-0.9",
    "--limit",
    String(LIMIT),
    "--workers",
    "1",
    "--simulator",
    "--out",
    out,
  ];
  try {
    // Ctrl-C mid-run, decided by the stub rather than by timing: every task but the first is held, and the stop
    // comes once the first task's samples are saved and a later task's request waits.
    stub.hold((body) => typeof body.prompt !== "string" || taskOfPrompt(body.prompt) !== 0);
    const results = join(filterWorkDir(out), "results.jsonl");
    const firstTaskSaved = (): boolean =>
      existsSync(results) &&
      jsonl<ResultLine>(results).filter((l) => l.task_id === tasks[0]!.id).length === N;
    let armed = false;
    const stopped = await runCli(CLI, args, process.env, (_stderr, child) => {
      if (armed) return;
      armed = true;
      void stub.held(1).then(async () => {
        // A condition wait (the first task's lines reach the file), not a timing assumption.
        while (!firstTaskSaved()) await new Promise((resolve) => setTimeout(resolve, 20));
        child.kill("SIGINT");
      });
    });
    stub.release();
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.match(stopped.stderr, /run the same command to continue/);
    assert.ok(!existsSync(out), "nothing is written before every task is sampled");
    const saved = jsonl<ResultLine>(join(filterWorkDir(out), "results.jsonl"));
    const perTask = new Map<string, number>();
    for (const l of saved) perTask.set(l.task_id, (perTask.get(l.task_id) ?? 0) + 1);
    assert.ok(perTask.size >= 1 && perTask.size < LIMIT, `some tasks saved: ${perTask.size}`);
    for (const count of perTask.values()) assert.equal(count, N, "only whole tasks are kept");

    const r = await runCli(CLI, args, process.env);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /continuing the sampling/);
    assert.match(r.stderr, /filter: 6\/6 tasks \(100%\)/);
    assert.match(
      r.stdout,
      /kept 2 of 6 tasks with a pass rate in 0\.1-0\.9 \(dropped 2 too easy, 2 too hard, 0 unmeasured/,
    );
    assert.ok(!existsSync(filterWorkDir(out)), "the work folder is removed once the dataset is written");

    const rates = jsonl<{
      task_id: string;
      pass_rate: number;
      kept: boolean;
      reason?: string;
      samples: number;
    }>(join(out, "pass_rates.jsonl"));
    assert.deepEqual(
      tasks.map((t) => rates.find((x) => x.task_id === t.id)?.pass_rate),
      tasks.map((_, k) => [1, 0.5, 0][classOf(k)]),
    );
    const keptIds = tasks.filter((_, k) => classOf(k) === 1).map((t) => t.id);
    assert.deepEqual(
      jsonl<{ id: string }>(join(out, "tasks.jsonl")).map((t) => t.id),
      keptIds,
    );
    const keptFiles = new Set(tasks.filter((_, k) => classOf(k) === 1).map((t) => t.file));
    assert.deepEqual(
      new Set(jsonl<{ file: string }>(join(out, "files.jsonl")).map((f) => f.file)),
      keptFiles,
    );
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
      workspace: string;
      filter: { tasks: Record<string, unknown>; keep: unknown; verifier: string; model: { spec: string } };
    };
    assert.equal(
      report.workspace,
      EXAMPLE,
      "the source's report is kept (its workspace is the verifier's project)",
    );
    assert.deepEqual(report.filter.tasks, {
      source: jsonl(join(dataset, "tasks.jsonl")).length,
      notSelected: jsonl(join(dataset, "tasks.jsonl")).length - LIMIT,
      evaluated: LIMIT,
      kept: 2,
      dropped: { "too-easy": 2, "too-hard": 2, unmeasured: 0 },
    });
    assert.deepEqual(report.filter.keep, { low: 0.1, high: 0.9 });
    assert.match(report.filter.verifier, /simulator.*\(not Lean\)/);
    assert.equal(report.filter.model.spec, `openai:${stub.baseUrl}#tiny-coder`);
    const card = readFileSync(join(out, "README.md"), "utf8");
    assert.match(card, /2 too easy .*2 too hard/);
    // The card travels with the dataset: it names the source and the output by folder, never by this machine's path.
    for (const path of [dataset, out, REPO])
      assert.ok(!card.includes(path), `the card names the machine path ${path}`);
    // The card declares the source's row fields for tasks.jsonl (an export's here), the keys of every kept row.
    const info = (
      parseYaml(/^---\n([\s\S]*?)\n---\n/.exec(card)![1]!) as {
        dataset_info: { config_name: string; features: { name: string }[] }[];
      }
    ).dataset_info;
    const keys = jsonl<object>(join(out, "tasks.jsonl")).map((t) => Object.keys(t));
    for (const k of keys)
      assert.deepEqual(
        info.find((i) => i.config_name === "tasks")?.features.map((f) => f.name),
        k,
      );
    assert.deepEqual(
      info.map((i) => i.config_name),
      ["tasks", "contexts", "files"],
    );
    assert.equal(jsonl(join(out, "filter", "results.jsonl")).length, LIMIT * N);
    const reloaded = loadDataset(out);
    assert.ok(reloaded.kind === "ok" && reloaded.dataset.tasks.size === 2, "the filtered dataset loads");
  } finally {
    await stub.close();
  }
});
