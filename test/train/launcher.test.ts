/**
 * Trainer processes under `--launcher accelerate`: the command line built for accelerate 1.x, the launcher flags'
 * usage errors, and `fim-rlvr train --launcher accelerate --num-processes 2` end to end with the real trainer
 * (trainer/.venv, two CPU ranks over gloo) and the simulator: it completes, and its metrics and samples cover both
 * ranks' groups. The end-to-end test is skipped, with the reason, where trainer/.venv is missing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { trainerArgs } from "../../lean-bridge/train/launcher";
import { hintFor } from "../../lean-bridge/train/run";
import { EXAMPLE, runCli, REPO } from "../helpers";
import { toolSkip } from "../toolSkip";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
const missing = !existsSync(PYTHON)
  ? `${PYTHON} is missing (npm run test:setup creates it)`
  : !existsSync(CLI)
    ? `${CLI} is missing (npm run build)`
    : undefined;
toolSkip("accelerate launcher test", missing);
const ENV = { ...process.env, PATH: [dirname(process.execPath), "/usr/bin", "/bin"].join(":") };

const run = (args: string[], onStderr?: (all: string, child: ChildProcess) => void) =>
  runCli(CLI, args, ENV, onStderr);

/** `train` on the example workspace with the simulator and the trainer's venv, as two accelerate ranks. */
const twoRanks = (config: string, out: string, ...more: string[]): string[] => [
  "train",
  EXAMPLE,
  "--simulator",
  "--python",
  PYTHON,
  "--config",
  config,
  ...more,
  "--launcher",
  "accelerate",
  "--num-processes",
  "2",
  "--out",
  out,
];

/** pid -> parent pid of every process, read from /proc. */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      out.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** The processes below `root` (the CLI): the launcher, and the ranks it started. */
function descendants(root: number): number[] {
  const tree = parents();
  const found: number[] = [];
  let frontier = [root];
  while (frontier.length) {
    const next = [...tree].filter(([, ppid]) => frontier.includes(ppid)).map(([pid]) => pid);
    found.push(...next);
    frontier = next;
  }
  return found;
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8");
  } catch {
    return "";
  }
}

function alive(pid: number): boolean {
  try {
    return !/^\S+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

function smallConfig(dir: string): string {
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    "sft_steps: 0\neval_limit: 2\nmax_new_tokens: 8\ncheckpoint_every: 1\nbatch_size: 2\ngroup_size: 2\nkinds: [tactic]\n",
  );
  return config;
}

test("the trainer's command line: one process, or accelerate launch with its own flag names", async () => {
  assert.deepEqual(await trainerArgs({ kind: "single" }), ["-m", "fim_rlvr", "--stdio"]);
  const two = await trainerArgs({ kind: "accelerate", numProcesses: 2 });
  assert.deepEqual(two.slice(0, 2), ["-m", "accelerate.commands.launch"]);
  assert.deepEqual(two.slice(-3), ["-m", "fim_rlvr", "--stdio"]);
  assert.equal(two[two.indexOf("--num_processes") + 1], "2");
  assert.ok(two.includes("--multi_gpu"), "torchrun starts the ranks, on GPUs or on the CPU");
  const port = Number(two[two.indexOf("--main_process_port") + 1]);
  assert.ok(Number.isInteger(port) && port > 0, "a free rendezvous port, not 29500 for every run");
  const one = await trainerArgs({ kind: "accelerate" });
  assert.equal(one[one.indexOf("--num_processes") + 1], "1");
  assert.ok(!one.includes("--multi_gpu"), "accelerate refuses --multi_gpu with one process");
  const configured = await trainerArgs({ kind: "accelerate", configFile: "/cfg/fsdp.yaml", numProcesses: 8 });
  assert.deepEqual(configured, [
    "-m",
    "accelerate.commands.launch",
    "--config_file",
    "/cfg/fsdp.yaml",
    "--num_processes",
    "8",
    "-m",
    "fim_rlvr",
    "--stdio",
  ]);
});

test("what to do when accelerate is missing or there are more ranks than GPUs", () => {
  assert.match(
    hintFor("ModuleNotFoundError: No module named 'accelerate'"),
    /pip install accelerate.*--launcher single/,
  );
  assert.match(
    hintFor("torch.AcceleratorError: CUDA error: invalid device ordinal"),
    /--num-processes at most the number of GPUs/,
  );
  assert.equal(hintFor("something else"), "");
});

test(
  "the launcher flags' usage errors (exit 2, before anything starts)",
  { skip: !existsSync(CLI) },
  async () => {
    const cases: [string[], RegExp][] = [
      [["--launcher", "mpi"], /--launcher must be single or accelerate, got "mpi"/],
      [["--num-processes", "2"], /--num-processes and --accelerate-config need --launcher accelerate/],
      [
        ["--launcher", "accelerate", "--num-processes", "0"],
        /--num-processes must be a whole number of at least 1/,
      ],
      [["--launcher", "accelerate", "--num-processes", "1.5"], /--num-processes must be a whole number/],
      [
        ["--launcher", "accelerate", "--accelerate-config", "/nonexistent/acc.yaml"],
        /does not exist; write one with/,
      ],
    ];
    for (const [flags, message] of cases) {
      const out = join(tempDir("fim-launch-usage-"), "run");
      const result = await run(["train", EXAMPLE, "--simulator", "--out", out, ...flags]);
      assert.equal(result.code, 2, `${flags.join(" ")}: ${result.stderr}`);
      assert.match(result.stderr, message);
    }
  },
);

test(
  "fim-rlvr train --launcher accelerate --num-processes 2: two CPU ranks, metrics over both ranks' groups",
  { skip: missing ?? false, timeout: 300_000 },
  async () => {
    const dir = tempDir("fim-launch-");
    const config = smallConfig(dir);
    const out = join(dir, "run");
    const result = await run(twoRanks(config, out, "--steps", "2"));
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stderr,
      /checked by each of 2 ranks through the run's verifier service at 127\.0\.0\.1:\d+/,
    );
    const metrics = readFileSync(join(out, "metrics.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { step: number; verdicts: Record<string, number> });
    assert.deepEqual(
      metrics.map((m) => m.step),
      [1, 2],
    );
    const perStep = 2 * 2 * 2; // ranks x batch_size groups x group_size candidates
    for (const m of metrics)
      assert.equal(
        Object.values(m.verdicts).reduce((a, b) => a + b, 0),
        perStep,
        `step ${m.step} counts both ranks' samples: ${JSON.stringify(m.verdicts)}`,
      );
    const samples = readFileSync(join(out, "samples.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { step: number; task_id: string; verdict: string });
    assert.equal(samples.length, 2 * perStep);
    assert.ok(
      samples.every((s) => !["crashed", "timeout", "environment"].includes(s.verdict)),
      "every rank's candidates were checked",
    );
    const state = JSON.parse(readFileSync(join(out, "checkpoints", "step-2", "state.json"), "utf8")) as {
      ranks?: unknown[];
    };
    assert.equal(state.ranks?.length, 2, "each rank's sampler is kept for --resume");
  },
);

test(
  "Ctrl-C under accelerate: the stop reaches both ranks, they checkpoint and exit; --resume continues",
  { skip: missing ?? false, timeout: 300_000 },
  async () => {
    const dir = tempDir("fim-launch-stop-");
    const config = smallConfig(dir);
    const out = join(dir, "run");
    const args = (steps: number) => twoRanks(config, out, "--steps", String(steps));
    let ranks: number[] = [];
    const stopped = await run(args(1000), (all, child) => {
      if (ranks.length === 0 && /step 1\/1000/.test(all) && child.pid !== undefined) {
        ranks = descendants(child.pid);
        child.kill("SIGINT");
      }
    });
    assert.equal(stopped.code, 130, stopped.stderr);
    assert.match(stopped.stderr, /stopped; checkpoint .*step-\d+/);
    assert.ok(ranks.length >= 3, `the launcher and its two ranks were running: ${ranks.join(" ")}`);
    assert.deepEqual(ranks.filter(alive), [], "no rank outlives the run");
    const latest = readFileSync(join(out, "checkpoints", "latest"), "utf8").trim();
    const at = Number(latest.replace("step-", ""));
    const state = JSON.parse(readFileSync(join(out, "checkpoints", latest, "state.json"), "utf8")) as {
      ranks?: unknown[];
    };
    assert.equal(state.ranks?.length, 2, "the stop checkpoint holds both ranks' samplers");

    const resumed = await run([...args(at + 1), "--resume"]);
    assert.equal(resumed.code, 0, resumed.stderr);
    const steps = readFileSync(join(out, "metrics.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { step: number }).step);
    assert.deepEqual(
      steps,
      Array.from({ length: at + 1 }, (_, k) => k + 1),
    );
  },
);

test(
  "a launcher killed with SIGKILL takes its ranks with it, and the run says how to resume",
  { skip: missing ?? false, timeout: 300_000 },
  async () => {
    const dir = tempDir("fim-launch-kill-");
    const out = join(dir, "run");
    let below: number[] = [];
    const result = await run(twoRanks(smallConfig(dir), out, "--steps", "1000"), (all, child) => {
      if (below.length === 0 && /step 1\/1000/.test(all) && child.pid !== undefined) {
        below = descendants(child.pid);
        // The launcher is the CLI's child running accelerate (the verifier is another child of the CLI).
        const top = below.find((pid) => cmdline(pid).includes("accelerate.commands.launch"));
        if (top !== undefined) process.kill(top, "SIGKILL");
        else child.kill("SIGKILL"); // fail now rather than after 1000 steps
      }
    });
    assert.ok(below.length >= 3, `the launcher and its two ranks were running: ${below.join(" ")}`);
    assert.equal(result.code, 1, result.stderr.slice(-2000));
    assert.match(result.stderr, /the trainer process ended unexpectedly \(killed by SIGKILL\)/);
    assert.match(result.stderr, /--resume to continue from .*checkpoints\/step-\d+/);
    assert.deepEqual(below.filter(alive), [], "no rank outlives its launcher");
  },
);

test(
  "a start that fails on every rank is reported with rank 0's message",
  { skip: missing ?? false, timeout: 120_000 },
  async () => {
    const dir = tempDir("fim-launch-bad-");
    const model = join(dir, "model");
    mkdirSync(model);
    writeFileSync(join(model, "config.json"), '{"model_type": "gpt2"}'); // no weights
    const result = await run(twoRanks(smallConfig(dir), join(dir, "run"), "--model", model));
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, /could not load the model at .*model/);
  },
);
