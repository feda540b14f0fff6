/**
 * A hack the kernel gate caught reaches the training run's log, one line per verdict with its task and why,
 * counted over the run (lean-bridge/train/run.ts, `observe`): a run that learns a hack shows it. Its reward
 * stays 0 and it is not masked (the verdict's own business: test/unit/kernelGate.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { BatchVerdict, TrainLogParams } from "../../lean-bridge/protocol/trainer";
import { TrainerRun } from "../../lean-bridge/train/run";
import type { RunService } from "../../lean-bridge/train/runService";
import type { TrainerProcess } from "../../lean-bridge/train/trainerProcess";
import type { Verifier } from "../../lean-bridge/verify/verifier";

const verifier = { kind: "simulator" as const, version: "t", label: "simulator (not Lean)" };
const verdict = (taskId: string, extra: Partial<BatchVerdict>): BatchVerdict => ({
  taskId,
  kind: "rejected",
  reward: 0,
  rewardMetrics: {},
  diagnostics: [
    { severity: 1, message: "the kernel gate (kernel-replay) refutes this proof", candidateRange: null },
  ],
  elapsedMs: 1,
  cached: false,
  verifier,
  ...extra,
});

test("each verdict the kernel gate refuted is logged as a hack, counted over the run; other verdicts are not", () => {
  const logs: TrainLogParams[] = [];
  const pool = {
    stats: { checks: 0, cacheHits: 0, restarts: 0, timeouts: 0, crashes: 0 },
  } as unknown as Verifier;
  const run = new TrainerRun(
    "/nowhere",
    {} as TrainerProcess,
    pool,
    {} as RunService,
    { onLog: (l) => logs.push(l) },
    () => undefined,
    1000,
  );
  run.observe([
    verdict("a", { rule: "kernel-replay-failed", hack: true }),
    verdict("b", { rule: "policy" }),
    verdict("c", { kind: "proved", reward: 1, confirmedBy: "kernel-replay", diagnostics: [] }),
  ]);
  run.observe([verdict("d", { rule: "kernel-replay-failed", hack: true })]);
  const hacks = logs.filter((l) => /hack/.test(l.message));
  assert.equal(hacks.length, 2);
  assert.equal(hacks[0]?.level, "warning");
  assert.match(hacks[0]?.message ?? "", /1 so far.*task a: the kernel gate/);
  assert.match(hacks[1]?.message ?? "", /2 so far.*task d/);
});
