/**
 * The run's own verifier service (lean-bridge/train/runService.ts) over real TCP with the service client: it binds
 * loopback on a free port, refuses requests without its token, answers by the run's task ids, shows every answered
 * batch (the very verdicts the client got) to the host (which keeps checks/s and the broken-environment stop working), and stops with the run.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { BatchVerdict } from "../../lean-bridge/protocol/trainer";
import { VerifierClient } from "../../lean-bridge/serve/client";
import { startRunService } from "../../lean-bridge/train/runService";
import type { ServiceVerifier } from "../../lean-bridge/serve/service";
import type { VerifyTask } from "../../lean-bridge/verify/verifier";
import type { Verdict } from "../../lean-bridge/verify/verdict";

const IDENTITY = { kind: "simulator" as const, version: "stub", label: "stub verifier (not Lean)" };

/** Proves "ok", reports a broken environment for "env", fails anything else; remembers the tasks it saw. */
function stubVerifier(): ServiceVerifier & { seen: VerifyTask[] } {
  const seen: VerifyTask[] = [];
  return {
    identity: IDENTITY,
    stats: { cacheHits: 0, restarts: 0 },
    slotCount: 2,
    seen,
    verifyMany(items) {
      return Promise.resolve(
        items.map(({ task, candidate }): Verdict => {
          seen.push(task);
          const base = { elapsedMs: 1, verifier: IDENTITY, diagnostics: [] };
          if (candidate === "ok") return { ...base, kind: "proved", axioms: [], axiomsChecked: true };
          if (candidate === "env")
            return {
              ...base,
              kind: "environment",
              reason: "Imports are out of date",
              action: "run `lake build`",
            };
          return { ...base, kind: "failed", reason: "unsolved goals" };
        }),
      );
    },
  };
}

const TASKS = new Map<string, VerifyTask>([
  [
    "t1",
    { file: "A.lean", hole: { start: { line: 1, character: 2 }, end: { line: 1, character: 7 } }, text: "x" },
  ],
]);

test("the run's service: loopback, token, task ids, every batch observed, stops with the run", async () => {
  const verifier = stubVerifier();
  const observed: BatchVerdict[][] = [];
  const started = await startRunService(verifier, TASKS, "binary", (v) => observed.push([...v]));
  assert.equal(started.kind, "ok");
  if (started.kind !== "ok") return;
  const { address } = started.service;
  assert.equal(address.host, "127.0.0.1");
  assert.ok(address.port > 0);
  assert.ok(address.token.length >= 32, "a fresh token of 32 random bytes");

  const stranger = new VerifierClient([address], { retryWindowMs: 2_000 });
  const refused = await stranger.verifyBatch([{ taskId: "t1", candidate: "ok" }]);
  assert.equal(refused.kind, "error", "a request without the token is refused");
  stranger.close();
  assert.equal(verifier.seen.length, 0, "nothing was checked for it");

  const client = new VerifierClient([address], { token: address.token, retryWindowMs: 300 });
  const batch = await client.verifyBatch([
    { taskId: "t1", candidate: "ok" },
    { taskId: "t1", candidate: "env" },
    { taskId: "missing", candidate: "ok" },
  ]);
  assert.equal(batch.kind, "ok");
  if (batch.kind !== "ok") return;
  assert.deepEqual(
    batch.verdicts.map((v) => [v.taskId, v.kind, v.reward]),
    [
      ["t1", "proved", 1],
      ["t1", "environment", 0],
      ["missing", "rejected", 0],
    ],
  );
  assert.equal(verifier.seen[0]?.text, "x", "the task's file text travels with it");
  assert.deepEqual(
    observed.flat(),
    batch.verdicts,
    "the host sees exactly what the trainer got, rewards included (computed once, by the service)",
  );

  await started.service.stop();
  const after = await client.verifyBatch([{ taskId: "t1", candidate: "ok" }]);
  assert.equal(after.kind, "ok");
  if (after.kind === "ok")
    assert.equal(
      after.verdicts[0]?.kind,
      "environment",
      "a check lost with the service is masked, not failed",
    );
  client.close();
});

test("a verifier that fails answers its items as crashed by the infrastructure (masked), never a lost batch", async () => {
  const broken: ServiceVerifier = {
    ...stubVerifier(),
    verifyMany: () => Promise.reject(new Error("pool exploded")),
  };
  const started = await startRunService(broken, TASKS, "binary", () => undefined);
  assert.equal(started.kind, "ok");
  if (started.kind !== "ok") return;
  const client = new VerifierClient([started.service.address], { token: started.service.address.token });
  const batch = await client.verifyBatch([{ taskId: "t1", candidate: "ok" }]);
  assert.equal(batch.kind, "ok");
  if (batch.kind === "ok") {
    assert.equal(batch.verdicts[0]?.kind, "crashed");
    assert.equal(batch.verdicts[0]?.cause, "infrastructure");
    assert.match(batch.verdicts[0]?.diagnostics[0]?.message ?? "", /the verifier failed: pool exploded/);
  }
  client.close();
  await started.service.stop();
});
