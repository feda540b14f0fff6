/**
 * Training started from the editor mines the workspace as the editor's export command does: in a child
 * process (the bundled dist/exportWorker.js), so the extension host's thread stays free. The run itself uses
 * the scripted fake trainer and the simulator (not Lean).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { childProcessRunner } from "../../extension/exportProcess";
import type { ExportRunner } from "../../lean-bridge/dataset/workerProtocol";
import { inProcessExport, prepareTarget } from "../../lean-bridge/train/dataset";
import { startTraining, type TrainingOptions } from "../../lean-bridge/train/session";
import { EXAMPLE, REPO } from "../helpers";
import { tempDir } from "../tempDirs";

const WORKER = join(REPO, "dist", "exportWorker.js");
const FAKE_PYTHON = join(REPO, "test", "fixtures", "fake-trainer", "python");

function options(exporter: ExportRunner, extra: Partial<TrainingOptions> = {}): TrainingOptions {
  return {
    target: EXAMPLE,
    runDir: tempDir("fim-train-mine-"),
    config: { steps: 1, group_size: 2, kinds: ["tactic"] },
    reward: "binary",
    verifier: { kind: "simulator", slots: 2, timeoutMs: 5_000 },
    resume: false,
    python: FAKE_PYTHON,
    exporter,
    ...extra,
  };
}

test("training from the editor mines in a separate process and trains on what it mined", async () => {
  const pids: (number | undefined)[] = [];
  const exporter = childProcessRunner(WORKER, (child) => pids.push(child.pid));
  const phases: string[] = [];
  const opts = options(exporter);
  const started = await startTraining(opts, { onPhase: (p) => phases.push(p) });
  assert.equal(started.kind, "started", JSON.stringify(started));
  if (started.kind !== "started") return;
  assert.equal((await started.session.done).kind, "completed");
  assert.equal(phases[0], "mining");
  assert.equal(pids.length, 1, "one export child for the one mining step");
  assert.ok(pids[0] !== undefined && pids[0] !== process.pid, "a separate process");

  // The child mines exactly what the CLI mines in its own process.
  const cliRun = tempDir("fim-train-mine-cli-");
  const inProcess = await prepareTarget(EXAMPLE, cliRun, {
    resume: false,
    verifier: "simulator",
    exporter: inProcessExport,
  });
  assert.equal(inProcess.kind, "ok");
  // The run then added the goal at each hole from its verifier (train/dataset.ts `withGoals`): the rest is equal.
  const rows = (dir: string) =>
    readFileSync(join(dir, "dataset", "tasks.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { goal?: string | null });
  const trained = rows(opts.runDir);
  assert.ok(trained.every((t) => t.goal?.includes("⊢")));
  const withoutGoal = ({ goal: _, ...t }: { goal?: string | null }) => t;
  assert.deepEqual(trained.map(withoutGoal), rows(cliRun).map(withoutGoal));
});

test("cancelling the start while the child mines abandons the start with a clear message", async () => {
  const pids: (number | undefined)[] = [];
  const abort = new AbortController();
  abort.abort();
  const started = await startTraining(
    options(
      childProcessRunner(WORKER, (child) => pids.push(child.pid)),
      { signal: abort.signal },
    ),
    {},
  );
  assert.equal(pids.length, 1, "the child was started, then told to cancel");
  // Usually the child stops mid-mining; should it finish first, the start is abandoned right after.
  assert.equal(started.kind, "error");
  if (started.kind === "error")
    assert.match(started.message, /^(mining was cancelled|the start was cancelled)$/);
});

test("a memory budget too small for the slots asked for runs fewer slots and says so", async () => {
  const logs: string[] = [];
  // The simulator's worker counts 64 MB: a 64 MB budget leaves room for one slot of the two asked for.
  const started = await startTraining(
    options(inProcessExport, {
      verifier: { kind: "simulator", slots: 2, timeoutMs: 5_000, memoryBudgetMb: 64 },
    }),
    {
      onLog: (l) => logs.push(`${l.level}: ${l.message}`),
    },
  );
  assert.equal(started.kind, "started", JSON.stringify(started));
  if (started.kind !== "started") return;
  assert.equal((await started.session.done).kind, "completed");
  const warning = logs.find((l) => l.includes("memory budget"));
  assert.match(
    warning ?? "(no warning)",
    /^warning: the verifier checks 1 candidate\(s\) at a time instead of 2: the memory budget \(64 MB\)/,
  );
  assert.match(warning!, /fimRlvr\.verifier\.memoryBudgetMb/);
  const roomy = await startTraining(
    options(inProcessExport, {
      verifier: { kind: "simulator", slots: 2, timeoutMs: 5_000, memoryBudgetMb: 128 },
    }),
    {
      onLog: (l) => logs.push(`${l.level}: ${l.message}`),
    },
  );
  assert.equal(roomy.kind, "started");
  if (roomy.kind === "started") assert.equal((await roomy.session.done).kind, "completed");
  assert.equal(logs.filter((l) => l.includes("memory budget")).length, 1, "a budget for two slots is quiet");
});
