/**
 * Training on tasks the simulator can never reward (no reference proof, no oracle entry) is said before the
 * run spends anything, and a run where no training task could earn anything is refused (issue 25 item 2).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { reachWarning, simulatorReach } from "../../lean-bridge/train/simulatorReach";
import { REPO } from "../helpers";
import { tempDir } from "../tempDirs";

const CLI = join(REPO, "dist", "cli.js");
const FAKE_PYTHON = join(REPO, "test", "fixtures", "fake-trainer", "python");
const PATH = [dirname(process.execPath), "/usr/bin", "/bin"].join(":");

function dataset(rows: object[]): string {
  const dir = tempDir("fim-reach-");
  writeFileSync(join(dir, "tasks.jsonl"), rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
  return dir;
}

test("the reach counts training tasks without a reference that no oracle proof covers", () => {
  const dir = dataset([
    { split: "train", decl: "A.proved" },
    { split: "train", decl: "A.open1", reference: false },
    { split: "train", decl: "A.open2", reference: false },
    { split: "test", decl: "A.open3", reference: false },
  ]);
  const none = simulatorReach(dir, {});
  assert.deepEqual(none, {
    training: 3,
    withoutReference: 2,
    coveredByOracle: 0,
    examples: ["A.open1", "A.open2"],
  });
  const w = reachWarning(none)!;
  assert.equal(w.nothingToLearn, false);
  assert.match(
    w.message,
    /^2 of 3 training tasks have no reference proof .*A\.open1, A\.open2\).*--oracle FILE/,
  );
  const covered = simulatorReach(dir, { alternatives: { "A.open1": ["by omega"], "A.open2": ["by simp"] } });
  assert.equal(reachWarning(covered), undefined, "an oracle that covers them: nothing to say");
  const allOpen = simulatorReach(dataset([{ split: "train", decl: "B.t", reference: false }]), {});
  assert.equal(reachWarning(allOpen)?.nothingToLearn, true);
});

function workspace(theorems: string): string {
  const dir = tempDir("fim-reach-ws-");
  cpSync(join(REPO, "lean-env", "lean-toolchain"), join(dir, "lean-toolchain"));
  writeFileSync(join(dir, "lakefile.toml"), 'name = "reach"\n');
  mkdirSync(join(dir, "Reach"));
  writeFileSync(join(dir, "Reach", "Basic.lean"), theorems);
  return dir;
}

const OPEN = Array.from(
  { length: 12 },
  (_, k) => `theorem open_${k} (a : Nat) : a + ${k} = ${k} + a := by\n  sorry\n`,
).join("\n");
const PROVED = Array.from(
  { length: 12 },
  (_, k) => `theorem closed_${k} (a : Nat) : a + ${k} ≥ a := by\n  omega\n`,
).join("\n");

test("train with the simulator refuses a workspace whose every training task is an open goal, and warns on some", () => {
  const run = (ws: string) =>
    spawnSync(
      process.execPath,
      [CLI, "train", ws, "--simulator", "--python", FAKE_PYTHON, "--steps", "1", "--out", join(ws, "run")],
      {
        encoding: "utf8",
        env: { ...process.env, PATH },
        timeout: 120_000,
      },
    );
  const refused = run(workspace(OPEN));
  assert.equal(refused.status, 1, refused.stderr);
  assert.match(
    refused.stderr,
    /nothing to train on with the simulator: \d+ of \d+ training tasks have no reference proof/,
  );
  assert.match(refused.stderr, /install elan .* or give the simulator an oracle/);
  const mixed = run(workspace(PROVED + "\n" + OPEN));
  assert.equal(mixed.status, 0, mixed.stderr);
  assert.match(
    mixed.stderr,
    /warning: \d+ of \d+ training tasks have no reference proof and no proof in the simulator's oracle/,
  );
});
