/**
 * The dataset folder swap never leaves the target missing (issue #6 item 10): a process killed at each
 * point of the swap is simulated by SIGKILL in a child process, and the next run finishes the swap.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { StagingDir, type SwapStep } from "../../lean-bridge/dataset/atomicDir";
import { REPO } from "../helpers";
import { tempDir } from "../tempDirs";

const STEPS: SwapStep[] = ["journal-written", "old-moved-aside", "new-moved-in"];

/** Writes a dataset "v2" over `target` in a child process that is SIGKILLed right after `step`. */
function crashDuringSwap(target: string, step: SwapStep): void {
  const script = join(tempDir("fim-crash-script-"), "crash.ts");
  writeFileSync(
    script,
    `import { StagingDir } from ${JSON.stringify(join(REPO, "lean-bridge", "dataset", "atomicDir"))};
const prepared = StagingDir.prepare(${JSON.stringify(target)});
if (prepared.kind !== "ok") throw new Error(prepared.message);
prepared.staging.write("tasks.jsonl", "v2\\n");
prepared.staging.commit((step) => {
  if (step === ${JSON.stringify(step)}) process.kill(process.pid, "SIGKILL");
});
`,
  );
  const r = spawnSync(process.execPath, ["--import", "tsx", script], {
    cwd: REPO,
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(r.signal, "SIGKILL", `the child died at ${step}: ${r.stderr}`);
}

function writeDataset(target: string, content: string): void {
  const prepared = StagingDir.prepare(target);
  assert.equal(prepared.kind, "ok");
  if (prepared.kind !== "ok") return;
  prepared.staging.write("tasks.jsonl", content);
  prepared.staging.commit();
}

for (const step of STEPS)
  test(`a crash after "${step}" is finished by the next run; the target is never lost`, () => {
    const root = tempDir("fim-swap-");
    const target = join(root, "ds");
    writeDataset(target, "v1\n");
    crashDuringSwap(target, step);
    if (step === "old-moved-aside") assert.ok(!existsSync(target), "the crash fell between the renames");
    // The next run (any prepare of this target) recovers first: the staged dataset was complete.
    const next = StagingDir.prepare(target);
    assert.equal(next.kind, "ok");
    assert.equal(readFileSync(join(target, "tasks.jsonl"), "utf8"), "v2\n");
    if (next.kind === "ok") next.staging.discard();
    assert.deepEqual(readdirSync(root), ["ds"], "no journal, staging or previous folder is left");
  });

test("a crash before any swap leaves the old dataset, and the dead run's staging folder is removed", () => {
  const root = tempDir("fim-swap-");
  const target = join(root, "ds");
  writeDataset(target, "v1\n");
  // A staging folder of a process that no longer exists (pid 2^22 + 1 is above Linux's pid_max default).
  mkdirSync(join(root, ".ds.staging-4194305-1"));
  writeDataset(target, "v2\n");
  assert.equal(readFileSync(join(target, "tasks.jsonl"), "utf8"), "v2\n");
  assert.deepEqual(readdirSync(root), ["ds"]);
});
