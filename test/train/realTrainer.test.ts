/**
 * `fim-rlvr train` end to end with the real Python trainer (trainer/.venv) and the simulator, kept small
 * (no SFT, a few steps, a short eval): a trainer killed with SIGKILL mid-run is reported clearly and
 * `--resume` continues from its last checkpoint; Ctrl-C checkpoints and exits 130. Skipped, with the reason,
 * where trainer/.venv is missing.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { ChildProcess } from "node:child_process";
import { existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { EXAMPLE, runCli, REPO } from "../helpers";
import { toolSkip } from "../toolSkip";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
const missing = !existsSync(PYTHON)
  ? `${PYTHON} is missing (npm run test:setup creates it)`
  : !existsSync(join(REPO, "trainer", "fim_rlvr", "__main__.py"))
    ? "trainer/fim_rlvr/__main__.py is missing"
    : undefined;
toolSkip("real trainer tests", missing);
const ENV = { ...process.env, PATH: [dirname(process.execPath), "/usr/bin", "/bin"].join(":") };

function smallConfig(): string {
  const path = join(tempDir("fim-real-cfg-"), "config.yaml");
  writeFileSync(
    path,
    "sft_steps: 0\neval_limit: 4\nmax_new_tokens: 12\ncheckpoint_every: 1\nbatch_size: 2\ngroup_size: 2\nkinds: [tactic]\n",
  );
  return path;
}

/** The pid of the trainer (`python -m fim_rlvr`) among the CLI's child processes, read from /proc. */
function trainerPid(cli: ChildProcess): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      const cmd = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (ppid === cli.pid && cmd.includes("fim_rlvr")) return Number(entry);
    } catch {
      // The process ended while we looked.
    }
  }
  return undefined;
}

const run = (args: string[], onStderr?: (all: string, child: ChildProcess) => void) =>
  runCli(CLI, args, ENV, onStderr);

test(
  "a trainer killed with SIGKILL is reported, and --resume continues from the last checkpoint",
  { skip: missing ?? false, timeout: 300_000 },
  async () => {
    const out = join(tempDir("fim-real-"), "run");
    const args = [
      "train",
      EXAMPLE,
      "--simulator",
      "--python",
      PYTHON,
      "--config",
      smallConfig(),
      "--steps",
      "3",
      "--out",
      out,
    ];
    let killed = false;
    const first = await run(args, (all, child) => {
      if (!killed && /step 1\/3/.test(all)) {
        const pid = trainerPid(child);
        if (pid) {
          killed = true;
          process.kill(pid, "SIGKILL");
        }
      }
    });
    assert.ok(killed, "the trainer was found and killed");
    assert.equal(first.code, 1, first.stderr);
    assert.match(first.stderr, /the trainer process ended unexpectedly \(killed by SIGKILL\)/);
    assert.match(first.stderr, /--resume to continue from .*checkpoints\/step-\d+/);

    const second = await run([...args, "--resume"]);
    assert.equal(second.code, 0, second.stderr);
    const steps = readFileSync(join(out, "metrics.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => (JSON.parse(l) as { step: number }).step);
    assert.deepEqual(steps, [1, 2, 3]);
    assert.match(
      second.stdout,
      /held-out pass@1 \(test split, \d+ tasks, greedy\): before [\d.]+% -> after RL [\d.]+%/,
    );
    const html = readFileSync(join(out, "report.html"), "utf8");
    assert.match(html, /simulator .*\(not Lean\)/);
  },
);

test(
  "Ctrl-C with the real trainer writes a checkpoint and exits 130",
  { skip: missing ?? false, timeout: 300_000 },
  async () => {
    const out = join(tempDir("fim-real-"), "run");
    let pressed = false;
    const result = await run(
      [
        "train",
        EXAMPLE,
        "--simulator",
        "--python",
        PYTHON,
        "--config",
        smallConfig(),
        "--steps",
        "1000",
        "--out",
        out,
      ],
      (all, child) => {
        if (!pressed && /step 1\/1000/.test(all)) {
          pressed = true;
          child.kill("SIGINT");
        }
      },
    );
    assert.equal(result.code, 130, result.stderr);
    assert.match(result.stderr, /stopped; checkpoint .*step-\d+/);
    const latest = readFileSync(join(out, "checkpoints", "latest"), "utf8").trim();
    assert.ok(existsSync(join(out, "checkpoints", latest)), latest);
  },
);
