/**
 * The quick start (README's first line: `fim-rlvr train lean-env-prelude` on the embedded Lean) shows what training
 * did: held-out pass@1 on held-out instances and on held-out families before training, after SFT, after RL and for
 * the compute-matched SFT baseline, which runs by default for the embedded model, every verdict from real Lean.
 * Here with the real trainer at tiny settings (a few SFT and RL steps), so the lines are checked, not the figures.
 * Skipped, with the reason, where trainer/.venv or the embedded Lean is missing (a failing test where CI=true).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { embeddedLabel, EMBEDDED_LEAN_RELEASE } from "../../lean-bridge/embedded/install";
import { REPO, runCli } from "../helpers";
import { findEmbeddedLean } from "../real-lean/preludeLean";
import { toolSkip } from "../toolSkip";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const PYTHON = join(REPO, "trainer", ".venv", "bin", "python");
/** The workspace README's first line trains. */
const QUICK_START_WORKSPACE = join(REPO, "lean-env-prelude");
const lean = findEmbeddedLean();
const missing = !existsSync(PYTHON)
  ? `${PYTHON} is missing (npm run test:setup creates it)`
  : lean.kind === "missing"
    ? lean.reason
    : undefined;
toolSkip("the quick start through the real trainer on the embedded Lean", missing);
/** No `lake` on PATH, as on a fresh machine: the embedded Lean judges the prelude workspace. */
const ENV = { ...process.env, PATH: [dirname(process.execPath), "/usr/bin", "/bin"].join(":") };

test(
  "train lean-env-prelude prints held-out pass@1 on instances and families before, after SFT, after RL and for the compute-matched SFT baseline, judged by the embedded Lean",
  { skip: missing ?? false, timeout: 600_000 },
  async () => {
    const dir = tempDir("fim-quick-");
    const config = join(dir, "tiny.json");
    writeFileSync(config, JSON.stringify({ sft_steps: 2, validation_every: 0, max_new_tokens: 8 }));
    const out = join(dir, "run");
    const args = ["train", QUICK_START_WORKSPACE, "--python", PYTHON, "--out", out, "--config", config];
    const r = await runCli(CLI, [...args, "--steps", "1", "--batch-size", "2", "--group-size", "2"], ENV);
    assert.equal(r.code, 0, r.stderr.slice(-3000));
    const pct = String.raw`\d+\.\d%`;
    const lines = r.stdout.trim().split("\n");
    assert.match(
      lines[0]!,
      new RegExp(
        String.raw`^held-out pass@1 \(test split, 93 tasks, greedy\): before ${pct} -> after SFT ${pct} -> after RL ${pct}; compute-matched baseline: SFT ${pct}$`,
      ),
    );
    assert.match(
      lines[1]!,
      new RegExp(
        String.raw`^  held-out instances \(59 tasks\): ${pct} -> ${pct} -> ${pct}; compute-matched baseline: SFT ${pct}$`,
      ),
    );
    assert.match(
      lines[2]!,
      new RegExp(
        String.raw`^  held-out families \(34 tasks\): ${pct} -> ${pct} -> ${pct}; compute-matched baseline: SFT ${pct}$`,
      ),
    );
    // The figures are the run's own: eval.json holds each stage, the baseline's from the warm start's weights.
    const evals = JSON.parse(readFileSync(join(out, "eval.json"), "utf8")) as Record<
      string,
      {
        by_held_out: Record<string, { pass_at_1: number; tasks: number }>;
        compute?: { trained: { sequences: number; tokens: number } };
      }
    >;
    assert.deepEqual(Object.keys(evals), ["before", "sft", "after", "baseline-sft"]);
    const shown = (x: number) => `${(100 * x).toFixed(1)}%`;
    assert.ok(lines[1]!.endsWith(`SFT ${shown(evals["baseline-sft"]!.by_held_out.instance!.pass_at_1)}`));
    assert.equal(evals["after"]!.compute!.trained.sequences, 4); // 1 RL step of 2 x 2
    assert.ok(
      evals["baseline-sft"]!.compute!.trained.sequences >= 4,
      "the SFT baseline trains on at least as many",
    );
    assert.match(r.stderr, /compute-matched baseline: the SFT baseline, from the SFT warm start's weights/);
    // Real Lean, named as every verdict names it; no fallback to the simulator.
    const label = embeddedLabel(EMBEDDED_LEAN_RELEASE);
    assert.ok(r.stderr.includes(`read with ${label}`), r.stderr.slice(-3000));
    assert.doesNotMatch(r.stderr, /SIMULATOR|not Lean/);
    assert.ok(readFileSync(join(out, "report.html"), "utf8").includes(label));
  },
);
