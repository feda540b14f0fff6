/**
 * `fim-rlvr train` and `fim-rlvr algorithms` as users call them (the built dist/cli.js), with the scripted
 * fake trainer standing in for Python: the flag contract, a whole run, the loud simulator fallback, Ctrl-C
 * (exit 130 with a checkpoint), usage errors (exit 2) and start-up errors (exit 1).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { SERVER_OPTIONS } from "../../lean-bridge/cli/pool";
import { ALGORITHM_NAMES } from "../../lean-bridge/protocol/trainer";
import { REPO, EXAMPLE } from "../helpers";
import { claimRunFolder } from "../../lean-bridge/train/runFolder";
import { toolSkip } from "../toolSkip";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const FAKE_PYTHON = join(REPO, "test", "fixtures", "fake-trainer", "python");
const VENV_PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
const venvSkip = toolSkip(
  "the algorithms listing through the trainer's Python",
  existsSync(VENV_PYTHON) ? false : `${VENV_PYTHON} is missing (npm run test:setup creates it)`,
);
/** PATH with node (the fake trainer needs it) and the system tools, but no `lake`. */
const NO_LAKE_PATH = [dirname(process.execPath), "/usr/bin", "/bin"].join(":");

function cli(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(process.execPath, [CLI, ...args], {
    encoding: "utf8",
    env: { ...process.env, PATH: NO_LAKE_PATH, ...env },
    timeout: 120_000,
  });
}

const runTemp = () => tempDir("fim-train-cli-");

test("train's options are exactly the issues' flags (#7's, #9's LoRA and launcher flags, #16's baseline and verify options, import's --project, #22's --compare, #32's split flags)", () => {
  const r = cli(["train", "--help"]);
  assert.equal(r.status, 0);
  const flags = [...r.stdout.matchAll(/^ {2}(--[a-z][a-z0-9-]*)/gm)].map((m) => m[1]).sort();
  const verifyOptions = Object.keys(SERVER_OPTIONS).map((name) => `--${name}`);
  assert.deepEqual(
    flags,
    [
      ...new Set([
        ...verifyOptions,
        "--workers",
        "--algo-config",
        "--algorithm",
        "--batch-size",
        "--config",
        "--group-size",
        "--help",
        "--model",
        "--out",
        "--project",
        "--python",
        "--resume",
        "--reward",
        "--seed",
        "--server",
        "--simulator",
        "--steps",
        "--lora-r",
        "--lora-alpha",
        "--lora-targets",
        "--load-in-4bit",
        "--launcher",
        "--num-processes",
        "--accelerate-config",
        "--baseline",
        "--compare",
        "--split-seed",
        "--split-fractions",
      ]),
    ].sort(),
  );
  assert.match(r.stdout, /Usage: fim-rlvr train WORKSPACE\|DATASET_DIR/);
  // The verify options read as verify's do: one table (cli/pool.ts), the same help text.
  const verify = cli(["verify", "--help"]).stdout;
  const shown = (page: string, name: string) =>
    page
      .match(new RegExp(`^ {2}--${name}\\b.*$`, "m"))?.[0]
      .replace(/\s+/g, " ")
      .slice(0, 50);
  for (const name of ["policy", "timeout-ms", "oracle", "memory-mb", "no-sandbox"])
    assert.equal(shown(r.stdout, name), shown(verify, name), `--${name}`);
  assert.match(cli(["--help"]).stdout, /\n {2}train +.*\n {2}algorithms +/);
});

test("a run on the workspace without lake says loudly that the simulator is used, and prints pass@1 before and after", () => {
  const out = join(runTemp(), "run");
  const r = cli([
    "train",
    EXAMPLE,
    "--python",
    FAKE_PYTHON,
    "--steps",
    "2",
    "--group-size",
    "2",
    "--out",
    out,
  ]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /Lean was not found .* SIMULATOR/s);
  assert.match(r.stderr, /NOT Lean/);
  assert.match(
    r.stdout,
    /held-out pass@1 \(test split, \d+ tasks, greedy\): before 0\.0% -> after RL 50\.0%/,
  );
  for (const f of [
    "metrics.jsonl",
    "samples.jsonl",
    "eval.json",
    "config.json",
    "report.html",
    "checkpoints/latest",
  ])
    assert.ok(existsSync(join(out, f)), f);
  assert.match(
    r.stderr,
    /step 2\/2 reward [\d.]+ pass [\d.]+% [\d.–]+ checks\/s/,
    "plain progress lines when not a terminal",
  );
  assert.deepEqual(JSON.parse(readFileSync(join(out, "config.json"), "utf8")).steps, 2);
});

test("Ctrl-C asks the trainer to checkpoint, then exits 130 and says how to resume", async () => {
  const out = join(runTemp(), "run");
  const child = spawn(
    process.execPath,
    [CLI, "train", EXAMPLE, "--simulator", "--python", FAKE_PYTHON, "--steps", "100000", "--out", out],
    {
      env: { ...process.env, PATH: NO_LAKE_PATH },
    },
  );
  let stderr = "";
  let interrupted = false;
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderr += chunk;
    if (!interrupted && /step 2\//.test(stderr)) {
      interrupted = true;
      child.kill("SIGINT");
    }
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  assert.equal(code, 130, stderr);
  assert.match(stderr, /interrupted; asking the trainer to checkpoint/);
  assert.match(stderr, /stopped; checkpoint .*step-\d+/);
  // The hint runs as pasted: this CLI is not on PATH as `fim-rlvr` here, so it names `node dist/cli.js` (issue 25).
  assert.match(stderr, /continue with: node dist\/cli\.js train .* --resume/);
  assert.ok(existsSync(join(out, "checkpoints", "latest")));
  assert.ok(existsSync(join(out, "report.html")));
});

test("bad usage exits 2 with what to fix", () => {
  const cases: [string[], RegExp][] = [
    [["train"], /give the Lean workspace or dataset folder/],
    [["train", EXAMPLE, "--algorithm", "ppo"], /--algorithm must be one of grpo, drgrpo, dapo, gspo, dgpo/],
    [["train", EXAMPLE, "--algo-config", "{epsilon: 1}"], /--algo-config is not valid JSON/],
    [["train", EXAMPLE, "--steps", "1.5"], /--steps must be a whole number/],
    // A negative number reads as a value, with or without `=`, and gets the option's own message (issue 25 item 9).
    [
      ["train", EXAMPLE, "--steps", "-3"],
      /^fim-rlvr train: --steps must be a whole number of at least 0, got "-3"/,
    ],
    [
      ["train", EXAMPLE, "--steps=-3"],
      /^fim-rlvr train: --steps must be a whole number of at least 0, got "-3"/,
    ],
    [["train", EXAMPLE, "--steps="], /--steps must be a whole number of at least 0, got ""/],
    [["train", EXAMPLE, "--workers", "0"], /--workers must be a whole number of at least 1, got "0"/],
    [["train", EXAMPLE, "--resume"], /--resume needs --out RUN_DIR/],
    [["train", EXAMPLE, "--simulator", "--server", "x"], /give one of --verifier, --server and --simulator/],
    [
      ["train", EXAMPLE, "--policy", "/nonexistent/policy.json"],
      /--policy \/nonexistent\/policy\.json: no such file; give a JSON file of policy changes/,
    ],
    [["train", EXAMPLE, "--policy", EXAMPLE], /--policy .*: is a folder, not a file/],
    // The simulator's oracle is read by a process that starts late, and without lake only on the fallback: it is
    // read here first.
    [
      ["train", EXAMPLE, "--oracle", "/nonexistent/oracle.json"],
      /^fim-rlvr train: --oracle \/nonexistent\/oracle\.json: no such file; give a JSON file of accepted proofs/,
    ],
    [
      ["train", EXAMPLE, "--oracle", join(EXAMPLE, "lakefile.toml")],
      /--oracle .*lakefile\.toml: not JSON \(/,
    ],
    [["train", EXAMPLE, "--reward", "dense"], /--reward must be binary or partial/],
    [["train", EXAMPLE, "--lr", "1"], /unknown option --lr/],
    // Found before anything starts, each with what to write instead.
    [
      ["train", "/nonexistent/workspace"],
      /\/nonexistent\/workspace: no such file or folder; give a Lean workspace/,
    ],
    // A folder that is neither: refused before the simulator's banner and the mining, as filter refuses one.
    [
      ["train", join(REPO, "test", "fixtures", "run-records")],
      /run-records is neither a dataset \(no tasks\.jsonl\) nor a Lean workspace .*; give a Lean workspace/,
    ],
    [
      ["train", EXAMPLE, "--algo-config", '{"nope": 1}'],
      /--algo-config: unknown algorithm option nope; valid options: epsilon, epsilon_high, beta/,
    ],
    [["train", EXAMPLE, "--group-size", "1"], /--group-size must be at least 2: GRPO-family advantages/],
    // The options' values too, from the schema the trainer's own check agrees with (test_protocol_schema.py).
    [
      ["train", EXAMPLE, "--algo-config", '{"epsilon": -1}'],
      /--algo-config: algorithm option epsilon must be a number at least 0 and below 1; got -1/,
    ],
    [
      ["train", EXAMPLE, "--algo-config", '{"num_generations": 1}'],
      /--algo-config: num_generations must be at least 2: GRPO-family advantages/,
    ],
    [
      ["train", EXAMPLE, "--group-size", "8", "--algo-config", '{"num_generations": 4}'],
      /num_generations \(4\) differs from group_size \(8\); they are one setting .*give --group-size 4/,
    ],
    [
      ["train", EXAMPLE, "--config", "/nonexistent.yaml"],
      /^fim-rlvr train: --config \/nonexistent\.yaml: no such file; give a TrainConfig file in YAML or JSON/,
    ],
  ];
  for (const [args, pattern] of cases) {
    const r = cli(args);
    assert.equal(r.status, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, pattern, args.join(" "));
    // Said in words before anything starts, never Node's own error line.
    assert.doesNotMatch(r.stderr, /ENOENT|EISDIR|mining|starting the/, args.join(" "));
  }
  const config = join(runTemp(), "config.yaml");
  writeFileSync(config, "steps: 3\nlearnin_rate: 0.1\n");
  const r = cli(["train", EXAMPLE, "--config", config]);
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown key\(s\) learnin_rate; valid keys: .*learning_rate/);
  writeFileSync(config, "compare: [ppo]\n");
  const value = cli(["train", EXAMPLE, "--config", config]);
  assert.equal(value.status, 2, value.stderr);
  assert.match(value.stderr, /compare must be a list of one of: sft, rft, sft_data; got \["ppo"\]/);
  assert.doesNotMatch(value.stderr, /ENOENT|verifier|mining/i, "refused before start-up");
});

test("start-up errors exit 1 with one message, and leave an earlier run's files alone", () => {
  const out = join(runTemp(), "run");
  assert.equal(
    cli(["train", EXAMPLE, "--simulator", "--python", FAKE_PYTHON, "--steps", "1", "--out", out]).status,
    0,
  );
  const metrics = readFileSync(join(out, "metrics.jsonl"), "utf8");
  const cases: [string[], RegExp][] = [
    [["--python", "/nonexistent/python"], /--python \/nonexistent\/python: no such file/],
    [["--python", "/bin/true"], /--python \/bin\/true could not be used/],
    [["--python", FAKE_PYTHON, "--model", join(out, "no-model")], /no such folder/],
  ];
  for (const [extra, pattern] of cases) {
    const r = cli(["train", EXAMPLE, "--simulator", "--out", out, "--resume", ...extra]);
    assert.equal(r.status, 1, r.stderr);
    assert.match(r.stderr, pattern);
    assert.equal(
      r.stderr
        .trim()
        .split("\n")
        .filter((l) => pattern.test(l)).length,
      1,
      r.stderr,
    );
  }
  assert.equal(readFileSync(join(out, "metrics.jsonl"), "utf8"), metrics, "nothing already written was lost");
});

test("algorithms lists every algorithm from the trainer, or says how to get a trainer Python", (t) => {
  const none = cli(["algorithms"], { XDG_CACHE_HOME: runTemp() });
  assert.equal(none.status, 1);
  assert.match(none.stderr, /Pass --python PATH/);
  if (venvSkip) {
    t.skip(venvSkip);
    return;
  }
  const r = cli(["algorithms", "--python", VENV_PYTHON]);
  assert.equal(r.status, 0, r.stderr);
  for (const name of ALGORITHM_NAMES)
    assert.match(r.stdout, new RegExp(`^${name} +\\S.*\\n +paper: .*\\n +defaults: epsilon=`, "m"));
  assert.match(r.stdout, /dapo .*\n.*\n +defaults: .*epsilon_high=0\.28/);
  // What the quick start runs (the embedded model's GRPO beta) is shown beside the paper's, with where it is set.
  assert.match(
    r.stdout,
    /grpo .*\n.*\n +defaults: .*beta=0\.04.*\n +on the embedded model \(the quick start\): beta=0, set in\n +trainer\/fim_rlvr\/core\/config\.py PRESETS/,
  );
});

test("train DATASET_DIR --project DIR checks the dataset's files in DIR; --project beside a workspace is bad usage (issue 25 item 4)", () => {
  const dir = runTemp();
  const dataset = join(dir, "dataset");
  const exported = cli(["export", EXAMPLE, "--out", dataset]);
  assert.equal(exported.status, 0, exported.stderr);
  const run = cli([
    "train",
    dataset,
    "--project",
    EXAMPLE,
    "--simulator",
    "--python",
    FAKE_PYTHON,
    "--steps",
    "1",
    "--out",
    join(dir, "run"),
  ]);
  assert.equal(run.status, 0, run.stderr);
  assert.ok(existsSync(join(dir, "run", "report.html")));

  const other = cli(["train", EXAMPLE, "--project", dir, "--simulator", "--python", FAKE_PYTHON]);
  assert.equal(other.status, 2, other.stderr);
  assert.match(other.stderr, /a workspace target is mined and checked in itself; drop --project/);
  const missing = cli(["train", dataset, "--project", join(dir, "nowhere"), "--simulator"]);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /--project .*nowhere: no such folder/);

  // A project whose file is not the dataset's (another version) is refused before anything runs: holes would
  // point at other text.
  const changed = join(dir, "changed");
  cpSync(EXAMPLE, changed, { recursive: true, filter: (p) => !p.includes(".lake") });
  const file = join(changed, "FimExamples", "Arith.lean");
  writeFileSync(file, readFileSync(file, "utf8") + "\n-- edited\n");
  const stale = cli([
    "train",
    dataset,
    "--project",
    changed,
    "--simulator",
    "--python",
    FAKE_PYTHON,
    "--out",
    join(dir, "run2"),
  ]);
  assert.equal(stale.status, 1, stale.stderr);
  assert.match(
    stale.stderr,
    /does not hold the dataset's files as they were exported: FimExamples\/Arith\.lean differs/,
  );
});

test("a train that fails to start leaves no run folder it made; runs started in the same second get folders of their own (issue 25 item 8)", () => {
  const cwd = runTemp();
  const inCwd = (args: string[]) =>
    spawnSync(process.execPath, [CLI, ...args], {
      cwd,
      encoding: "utf8",
      env: { ...process.env, PATH: NO_LAKE_PATH },
      timeout: 120_000,
    });
  const failed = inCwd(["train", EXAMPLE, "--simulator", "--python", "/nonexistent/python"]);
  assert.equal(failed.status, 1, failed.stderr);
  assert.deepEqual(readdirSync(join(cwd, "runs")), [], "the default runs/<timestamp> is gone again");
  const named = join(cwd, "named", "run");
  assert.equal(
    inCwd(["train", EXAMPLE, "--simulator", "--python", "/nonexistent/python", "--out", named]).status,
    1,
  );
  assert.equal(existsSync(named), false, "an --out folder this run made is gone again");

  const now = new Date("2026-11-28T21:35:15.123Z");
  const first = claimRunFolder(join(cwd, "runs"), now);
  const second = claimRunFolder(join(cwd, "runs"), now);
  assert.notEqual(first.path, second.path);
  assert.match(second.path, /2026-11-28T21-35-15-2$/);
  assert.ok(first.created && second.created);
});
