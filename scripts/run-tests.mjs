// Runs every *.test.ts under test/ with Node's test runner (TypeScript through tsx), then the trainer's pytest
// suite with trainer/.venv/bin/python when that environment exists (`npm run test:setup` makes it), and
// exits non-zero if either failed. Given test files, runs only those (a .py file goes to pytest).
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";

// The real-Lean tier on the embedded Lean (test/real-lean/embeddedTier.ts) appends one line per test to this file,
// `run` or `skip` and its name, and the Lean version it ran on: the summary counts what really ran.
const TIER_COUNT_VARIABLE = "FIM_REAL_LEAN_TIER_COUNT";
const tierDir = mkdtempSync(join(tmpdir(), "fim-tier-"));
const tierCount = join(tierDir, "count.tsv");

/** `real-Lean tier: N run, S skipped (Lean X embedded)`, or undefined when no test of the tier was registered. */
function tierSummary() {
  const lines = existsSync(tierCount) ? readFileSync(tierCount, "utf8").split("\n").filter(Boolean) : [];
  const runs = lines.filter((l) => l.startsWith("run\t")).length;
  const skips = lines.filter((l) => l.startsWith("skip\t")).length;
  if (runs + skips === 0) return undefined;
  const seen = lines.find((l) => l.startsWith("version\t"))?.slice("version\t".length);
  // Where no test got as far as asking Lean, the version is the one the installer pins.
  const pinned = /^VERSION=(\S+)$/m.exec(readFileSync(join("scripts", "setup-lean.sh"), "utf8"))?.[1];
  return `real-Lean tier: ${runs} run, ${skips} skipped (Lean ${seen ?? pinned ?? "?"} embedded)`;
}

/**
 * What test/real-lean/agreement.test.ts measured, written to the tier's file as `agreement` lines:
 * `simulator agreement with Lean X: A/N documents`, repeated in the summary.
 */
function agreementLines() {
  const lines = existsSync(tierCount) ? readFileSync(tierCount, "utf8").split("\n") : [];
  return lines.filter((l) => l.startsWith("agreement\t")).map((l) => l.slice("agreement\t".length));
}

function find(dir, out = []) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) find(path, out);
    else if (name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

/** The project's temp folders (every test names its folder fim-…): those the run leaves behind are listed at the end. */
const ourTempFolders = () => new Set(readdirSync(tmpdir()).filter((name) => name.startsWith("fim-")));
const tempBefore = ourTempFolders();

const only = process.argv.slice(2);
const nodeFiles = (only.length ? only.filter((f) => !f.endsWith(".py")) : find("test")).sort();
const pyFiles = only.filter((f) => f.endsWith(".py"));
const runPytest = only.length === 0 || pyFiles.length > 0;

// Each entry: [name, status, seconds]; the summary says how long each part took (where the test line's time goes).
const results = [];
const seconds = (started) => Math.round((performance.now() - started) / 1000);
// Tests whose assertions compare costs (the kernel gate's against a check) run after the rest, one at a time: with
// the other files' Lean processes beside them they would measure the machine's load instead.
const ALONE = new Set([join("test", "real-lean", "embeddedGateCost.test.ts")]);

/** Node's test runner on `files`, `concurrency` files at a time; its exit status. */
function nodeTests(files, concurrency) {
  const run = spawnSync(
    process.execPath,
    [
      "--import",
      "tsx",
      "--test",
      `--test-concurrency=${concurrency}`,
      // A test file's process ends when its tests have: a handle left open (once seen under heavy load in
      // test/train/session.test.ts: vscode-jsonrpc's partial-message timer, left by a trainer killed mid-message;
      // lean-bridge/util/messageReaders.ts now switches it off) must not hang the whole run.
      "--test-force-exit",
      ...files,
    ],
    {
      stdio: "inherit",
      env: { ...process.env, [TIER_COUNT_VARIABLE]: tierCount },
    },
  );
  return run.status ?? 1;
}

if (nodeFiles.length > 0) {
  const nodeStarted = performance.now();
  const together = nodeFiles.filter((f) => !ALONE.has(f));
  const alone = nodeFiles.filter((f) => ALONE.has(f));
  const statuses = [];
  if (together.length) statuses.push(nodeTests(together, 2));
  if (alone.length) {
    console.log(`\nnode tests run alone (they compare costs): ${alone.join(", ")}`);
    statuses.push(nodeTests(alone, 1));
  }
  results.push(["node tests", statuses.find((status) => status !== 0) ?? 0, seconds(nodeStarted)]);
}

const VERL_TEST = join("tests", "test_integrations_verl.py");

if (runPytest) {
  const python = join("trainer", ".venv", "bin", "python");
  if (!existsSync(python)) {
    console.log(`\npytest: SKIPPED, ${python} does not exist (run \`npm run test:setup\` to create it)`);
    // On CI the trainer's suite must run: a setup that failed to make the venv is a failure, not a skip.
    results.push(["trainer pytest", process.env.CI === "true" ? "missing on CI" : "skipped"]);
  } else {
    const targets = pyFiles.length
      ? pyFiles.map((f) => (f.startsWith("trainer/") ? f.slice(8) : join("..", f)))
      : [];
    const tests = ["tests", ...(existsSync(join("test", "python")) ? [join("..", "test", "python")] : [])];
    // The whole suite runs on up to 4 processes (pytest-xdist, in trainer[test]), each test file on one of them
    // (files share fixtures and processes they start): most of its time is spent waiting on subprocesses.
    const xdist =
      targets.length === 0 &&
      spawnSync(join(".venv", "bin", "python"), ["-c", "import xdist"], { cwd: "trainer" }).status === 0
        ? ["-n", "auto", "--maxprocesses", "4", "--dist", "loadfile"]
        : [];
    console.log(
      `\npytest: ${python} -m pytest ${[...xdist, ...(targets.length ? targets : tests)].join(" ")} (in trainer/)`,
    );
    const pyStarted = performance.now();
    const py = spawnSync(
      join(".venv", "bin", "python"),
      ["-m", "pytest", ...xdist, ...(targets.length ? targets : tests)],
      {
        cwd: "trainer",
        stdio: "inherit",
      },
    );
    results.push(["trainer pytest", py.status ?? 1, seconds(pyStarted)]);
    if (targets.length === 0 || targets.includes(VERL_TEST)) runVerl();
  }
}

/**
 * The verl integration's test file again, in trainer/.venv-verl (scripts/setup-verl.sh: verl 0.9.1, which pins an
 * older transformers than the trainer's environment, layered over it) with FIM_RLVR_VERL=1, so that its last test
 * runs verl's own RewardLoopManager on a loopback Ray cluster. In the main suite that test skips, saying it runs here.
 */
function runVerl() {
  const python = join(".venv-verl", "bin", "python");
  if (!existsSync(join("trainer", python))) {
    console.log(
      `\nverl: SKIPPED, trainer/${python} does not exist (run \`bash scripts/setup-verl.sh\` to create it)`,
    );
    results.push(["verl pytest", process.env.CI === "true" ? "missing on CI" : "skipped"]);
    return;
  }
  console.log(`\nverl: trainer/${python} -m pytest ${VERL_TEST} (in trainer/, FIM_RLVR_VERL=1)`);
  const started = performance.now();
  const run = spawnSync(python, ["-m", "pytest", "-p", "no:cacheprovider", VERL_TEST], {
    cwd: "trainer",
    stdio: "inherit",
    env: { ...process.env, FIM_RLVR_VERL: "1" },
  });
  results.push(["verl pytest", run.status ?? 1, seconds(started)]);
}

const tier = tierSummary();
const agreement = agreementLines();
rmSync(tierDir, { recursive: true, force: true });
if (tier) console.log(`\n${tier}`);
for (const line of agreement) console.log(line);
// Tests remove what they make (test/tempDirs.ts); a folder left here names the test that leaks it by its prefix.
// On CI nothing else runs on the machine, so a folder left is this run's and fails it; elsewhere other processes
// may make fim- folders too, so it is a report.
const left = [...ourTempFolders()].filter((name) => !tempBefore.has(name)).sort();
if (left.length) {
  console.log(
    `\ntemp folders left in ${tmpdir()} by this run (or by another process meanwhile): ${left.join(", ")}`,
  );
  if (process.env.CI === "true")
    results.push([
      "temp folders",
      `${left.length} left: make them with test/tempDirs.ts \`tempDir\`, which removes them after the file's tests`,
    ]);
}

const failed = results.filter(([, status]) => status !== 0 && status !== "skipped");
console.log(
  `\nsummary: ${results.map(([name, status, took]) => `${name} ${status === 0 ? "passed" : status === "skipped" ? "skipped" : `FAILED (${typeof status === "number" ? `exit ${status}` : status})`}${took === undefined ? "" : ` in ${took} s`}`).join(", ")}`,
);
process.exit(failed.length ? 1 : 0);
