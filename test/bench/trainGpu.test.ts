/**
 * bench:train's GPU comparison (bench/trainGpu.ts + bench/gpu_train.py): without a GPU `--gpu` says so and exits
 * 0; `--cpu-smoke` runs the same path (model built from a config, our loop, TRL's GRPOTrainer through the
 * verifier service) on the CPU with a tiny model and prints a row with a measured tokens/s for each engine.
 * The figures themselves are not checked (a benchmark, not a timed test); that both loops ran and were timed is.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../helpers";

const python = join(REPO, "trainer", ".venv", "bin", "python");
const trl = existsSync(python) && spawnSync(python, ["-c", "import trl, datasets"]).status === 0;
const skip = trl ? false : "trainer/.venv with trl and datasets is missing (run `npm run test:setup`)";
if (skip) process.stderr.write(`bench:train --gpu test skipped: ${skip}\n`);

test(
  "bench:train --gpu / --cpu-smoke: our loop and TRL's GRPOTrainer on the same model, timed",
  { skip, timeout: 300_000 },
  () => {
    const built = spawnSync(process.execPath, ["esbuild.mjs", "--bench-only"], {
      cwd: REPO,
      encoding: "utf8",
    });
    assert.equal(built.status, 0, built.stderr);
    const cuda = spawnSync(python, ["-c", "import torch; print(torch.cuda.is_available())"], {
      encoding: "utf8",
    });
    if (cuda.stdout.trim() !== "True") {
      const gpu = spawnSync(process.execPath, ["dist/bench/train.js", "--gpu"], {
        cwd: REPO,
        encoding: "utf8",
      });
      assert.equal(gpu.status, 0, gpu.stderr);
      assert.match(gpu.stdout, /no GPU here/);
    }
    const smoke = spawnSync(process.execPath, ["dist/bench/train.js", "--cpu-smoke", "--steps", "3"], {
      cwd: REPO,
      encoding: "utf8",
      timeout: 280_000,
    });
    assert.equal(smoke.status, 0, `${smoke.stdout}\n${smoke.stderr}`);
    assert.match(smoke.stdout, /SIMULATOR \(not Lean\)/);
    const row = (engine: string) => {
      const found = new RegExp(
        `^${engine.replace(/[()]/g, "\\$&")}\\s+([\\d.]+)\\s+([\\d.]+)\\s+(\\d+)$`,
        "m",
      ).exec(smoke.stdout);
      assert.ok(found, `a row for ${engine} in:\n${smoke.stdout}`);
      return { tokensPerSecond: Number(found[1]), timedSteps: Number(found[3]) };
    };
    for (const engine of ["ours (transformers)", "trl"]) {
      const r = row(engine);
      assert.ok(r.tokensPerSecond > 0, `${engine} generated and was timed`);
      assert.equal(r.timedSteps, 2, `${engine}: steps 2 and 3 timed (the first is warm-up)`);
    }
    assert.match(smoke.stdout, /ratio ours \(transformers\) \/ trl: [\d.]+x/);
  },
);
