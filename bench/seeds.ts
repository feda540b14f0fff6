/**
 * npm run bench:seeds [-- --seeds N] [--target DIR] [--jobs J] [--out DIR] [--reuse] [-- TRAIN_ARGS...] — does RL add anything
 * over SFT? Runs `fim-rlvr train TARGET --seed S` (the RL run) and `fim-rlvr train TARGET --seed S --baseline sft`
 * (the compute-matched SFT baseline, same warm start) for seeds 0..N-1, then prints each seed's held-out pass@1
 * (all, novel, memorised) and a paired comparison of RL against the baseline:
 *
 * - per seed, the difference RL − baseline; their mean and an exact two-sided sign-flip permutation p-value over
 *   the seeds (the seed is the unit of replication: each run is one draw of the whole training procedure; with N
 *   seeds the smallest p it can give is 2 / 2^N, so 3 seeds can never show significance: run more);
 * - pooled over seeds, the held-out tasks one run proved and the other did not (discordant pairs) and an exact
 *   two-sided binomial (sign) test on them; tasks repeat across seeds, so this p is indicative only.
 *
 * `--reuse` keeps every run of OUT that already has its "after" evaluation and trains only the others (a bench cut
 * short goes on where it stopped; with all runs there it only prints the comparison). Reused runs must have been
 * made with the same TRAIN_ARGS: their config.json says with which.
 *
 * Nothing here is a claim until these figures say so; docs quote only what this prints. Verification uses the
 * simulator (`--simulator` is always passed): a dry run, not Lean.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { signFlipP, signTestP } from "./pairedStats";

interface Stage {
  pass_at_1: number;
  tasks: number;
  by_novelty?: Record<string, { pass_at_1: number; tasks: number }>;
  proved?: string[];
}

interface Pair {
  seed: number;
  rl: Stage;
  sft: Stage;
}

const REPO = resolve(__dirname, "..", "..");

function runTrain(args: string[], log: string): Promise<number> {
  return new Promise((resolveRun) => {
    const child = spawn(process.execPath, [join(REPO, "dist", "cli.js"), "train", ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let tail = "";
    const keep = (chunk: Buffer) => (tail = (tail + chunk.toString()).slice(-4000));
    child.stdout.on("data", keep);
    child.stderr.on("data", keep);
    child.on("close", (code) => {
      if (code !== 0) process.stderr.write(`${log} failed (exit ${code}):\n${tail}\n`);
      resolveRun(code ?? 1);
    });
  });
}

/** Runs the jobs at most `jobs` at a time. */
async function pool(tasks: (() => Promise<void>)[], jobs: number): Promise<void> {
  const queue = [...tasks];
  await Promise.all(
    Array.from({ length: Math.max(1, jobs) }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await next();
    }),
  );
}

function after(runDir: string): Stage | undefined {
  try {
    const evals = JSON.parse(readFileSync(join(runDir, "eval.json"), "utf8")) as Record<string, Stage>;
    return evals.after;
  } catch {
    return undefined;
  }
}

const pct = (x: number | undefined) => (x === undefined ? "    –" : `${(100 * x).toFixed(1).padStart(5)}%`);

function report(pairs: Pair[]): void {
  const out = (line: string) => process.stdout.write(line + "\n");
  const groups = ["all", "novel", "memorised"] as const;
  const score = (s: Stage, g: (typeof groups)[number]) =>
    g === "all" ? s.pass_at_1 : s.by_novelty?.[g]?.pass_at_1;
  const size = (g: (typeof groups)[number]) =>
    g === "all" ? pairs[0]?.rl.tasks : pairs[0]?.rl.by_novelty?.[g]?.tasks;
  out(
    `held-out pass@1 after training (greedy), RL vs the compute-matched SFT baseline, ${pairs.length} seed(s)`,
  );
  out(`seed  ${groups.map((g) => `${g} (${size(g) ?? "?"})`.padEnd(26)).join("")}`);
  for (const p of pairs)
    out(
      `${String(p.seed).padEnd(6)}${groups.map((g) => `RL ${pct(score(p.rl, g))} SFT ${pct(score(p.sft, g))}`.padEnd(26)).join("")}`,
    );
  for (const g of groups) {
    const diffs = pairs.flatMap((p) => {
      const a = score(p.rl, g);
      const b = score(p.sft, g);
      return a !== undefined && b !== undefined ? [a - b] : [];
    });
    if (!diffs.length) continue;
    const mean = diffs.reduce((a, b) => a + b, 0) / diffs.length;
    out(
      `${g}: RL − SFT per seed ${diffs.map((d) => `${d >= 0 ? "+" : ""}${(100 * d).toFixed(1)}`).join(", ")} points; ` +
        `mean ${mean >= 0 ? "+" : ""}${(100 * mean).toFixed(1)} points, sign-flip p = ${signFlipP(diffs).toFixed(3)} ` +
        `(smallest possible with ${diffs.length} seeds: ${(2 / 2 ** diffs.length).toFixed(3)})`,
    );
  }
  let rlOnly = 0;
  let sftOnly = 0;
  for (const p of pairs) {
    const rl = new Set(p.rl.proved ?? []);
    const sft = new Set(p.sft.proved ?? []);
    for (const id of rl) if (!sft.has(id)) rlOnly++;
    for (const id of sft) if (!rl.has(id)) sftOnly++;
  }
  out(
    `held-out tasks proved by one run of a pair only (pooled over seeds): RL ${rlOnly}, SFT ${sftOnly}; ` +
      `sign test p = ${signTestP(rlOnly, rlOnly + sftOnly).toFixed(3)} (indicative: tasks repeat across seeds)`,
  );
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: {
      seeds: { type: "string", default: "3" },
      target: { type: "string", default: join(REPO, "lean-env") },
      jobs: { type: "string", default: "1" },
      out: { type: "string", default: join(REPO, "runs", "seeds") },
      reuse: { type: "boolean", default: false },
    },
    allowPositionals: true,
  });
  const seeds = Number(values.seeds);
  if (!Number.isInteger(seeds) || seeds < 1) {
    process.stderr.write(`--seeds must be a whole number of at least 1, got "${values.seeds}"\n`);
    return 2;
  }
  if (!existsSync(join(REPO, "dist", "cli.js"))) {
    process.stderr.write("dist/cli.js is missing: run `npm run build` first\n");
    return 1;
  }
  const outDir = resolve(values.out);
  mkdirSync(outDir, { recursive: true });
  const jobs: (() => Promise<void>)[] = [];
  for (let seed = 0; seed < seeds; seed++)
    for (const kind of ["rl", "sft"] as const) {
      const runDir = join(outDir, `${kind}-${seed}`);
      const args = [values.target, "--simulator", "--seed", String(seed), "--out", runDir, ...positionals];
      if (kind === "sft") args.push("--baseline", "sft");
      if (values.reuse && after(runDir)) {
        process.stderr.write(`${kind} seed ${seed}: reused (${runDir})\n`);
        continue;
      }
      jobs.push(async () => {
        const started = performance.now();
        const code = await runTrain(args, `${kind} seed ${seed}`);
        const seconds = ((performance.now() - started) / 1000).toFixed(0);
        process.stderr.write(
          `${kind} seed ${seed}: ${code === 0 ? "done" : "FAILED"} in ${seconds} s (${runDir})\n`,
        );
      });
    }
  await pool(jobs, Number(values.jobs));
  const pairs: Pair[] = [];
  for (let seed = 0; seed < seeds; seed++) {
    const rl = after(join(outDir, `rl-${seed}`));
    const sft = after(join(outDir, `sft-${seed}`));
    if (rl && sft) pairs.push({ seed, rl, sft });
    else process.stderr.write(`seed ${seed}: a run has no "after" evaluation; left out of the comparison\n`);
  }
  if (!pairs.length) return 1;
  report(pairs);
  return 0;
}

void main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`bench:seeds failed: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
