/**
 * `verify/progress`: the throttle (a manual clock, no waiting) and the service sending it while a batch is
 * checked, to the batch being checked and to a batch queued behind it, never for a batch sent without a batchId.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import {
  createMessageConnection,
  SocketMessageReader,
  SocketMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import {
  VerifyProgress,
  type VerifyBatchResult,
  type VerifyProgressParams,
} from "../../lean-bridge/protocol/trainer";
import { BatchProgress, type ProgressClock } from "../../lean-bridge/serve/progress";
import { VerifierService, type ServiceVerifier } from "../../lean-bridge/serve/service";
import type { VerifyTask } from "../../lean-bridge/verify/verifier";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import { FAKE_IDENTITY, deferred, holeItem, type Deferred } from "./fakes";

class ManualClock implements ProgressClock {
  time = 0;
  private timers: { at: number; run: () => void }[] = [];
  now(): number {
    return this.time;
  }
  after(ms: number, run: () => void): () => void {
    const timer = { at: this.time + ms, run };
    this.timers.push(timer);
    return () => (this.timers = this.timers.filter((t) => t !== timer));
  }
  advance(ms: number): void {
    this.time += ms;
    const due = this.timers.filter((t) => t.at <= this.time);
    this.timers = this.timers.filter((t) => t.at > this.time);
    for (const t of due) t.run();
  }
}

test("progress is sent at once after a quiet second, then at most once a second with the latest figures", () => {
  const clock = new ManualClock();
  const sent: VerifyProgressParams[] = [];
  const progress = new BatchProgress("b1", 5, (p) => sent.push(p), 1000, clock);
  progress.ownDone(1);
  progress.serviceProgressed(1);
  assert.deepEqual(sent, [{ batchId: "b1", done: 1, total: 5, serviceDone: 1 }], "the first change: at once");
  clock.advance(200);
  progress.serviceProgressed(2);
  clock.advance(100);
  progress.ownDone(2);
  progress.serviceProgressed(3);
  assert.equal(sent.length, 1, "changes within the second wait");
  clock.advance(699);
  assert.equal(sent.length, 1);
  clock.advance(1);
  assert.deepEqual(sent.at(-1), { batchId: "b1", done: 2, total: 5, serviceDone: 3 }, "one note, the latest");
  clock.advance(5000);
  assert.equal(sent.length, 2, "nothing is sent without a change");
  progress.serviceProgressed(4);
  assert.equal(sent.length, 3, "a change after a quiet second: at once");
  clock.advance(10);
  progress.serviceProgressed(5);
  progress.close();
  clock.advance(5000);
  assert.equal(sent.length, 3, "nothing after the batch was answered");
});

/** A verifier whose every item finishes when the test says so (by its candidate); a batch's items in order. */
class SteppedVerifier implements ServiceVerifier {
  readonly identity = FAKE_IDENTITY;
  readonly stats = { cacheHits: 0, restarts: 0 };
  readonly slotCount = 1;
  private readonly gates = new Map<string, Deferred>();
  private received = 0;
  private onReceived = () => {};

  finish(candidate: string): void {
    this.gate(candidate).resolve();
  }

  async receivedAtLeast(n: number): Promise<void> {
    while (this.received < n) await new Promise<void>((resolve) => (this.onReceived = resolve));
  }

  private gate(candidate: string): Deferred {
    if (!this.gates.has(candidate)) this.gates.set(candidate, deferred());
    return this.gates.get(candidate)!;
  }

  async verifyMany(
    items: readonly { task: VerifyTask; candidate: string }[],
    onProgress?: (done: number, total: number, verdict: Verdict) => void,
  ): Promise<Verdict[]> {
    this.received += items.length;
    this.onReceived();
    const verdicts: Verdict[] = [];
    for (const { candidate } of items) {
      await this.gate(candidate).promise;
      const verdict: Verdict = {
        kind: "failed",
        reason: "not ok",
        diagnostics: [],
        elapsedMs: 1,
        verifier: this.identity,
      };
      verdicts.push(verdict);
      onProgress?.(verdicts.length, items.length, verdict);
    }
    return verdicts;
  }
}

async function rawClient(port: number): Promise<MessageConnection> {
  const socket = connect(port, "127.0.0.1");
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const rpc = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  rpc.listen();
  await rpc.sendRequest("auth", {});
  return rpc;
}

/** Notifications heard on a connection, and a way to wait for the n-th. */
function listen(rpc: MessageConnection) {
  const heard: VerifyProgressParams[] = [];
  let wake = () => {};
  rpc.onNotification(VerifyProgress, (p) => {
    heard.push(p);
    wake();
  });
  const atLeast = async (n: number) => {
    while (heard.length < n) await new Promise<void>((resolve) => (wake = resolve));
  };
  return { heard, atLeast };
}

test(
  "the service sends verify/progress to the batch being checked and to the batches queued behind it",
  { timeout: 20_000 },
  async () => {
    const verifier = new SteppedVerifier();
    const started = await VerifierService.start(verifier, {
      host: "127.0.0.1",
      port: 0,
      policy: { kind: "open" },
      queueLimit: 100,
      reward: "binary",
      tasks: new Map(),
      progressIntervalMs: 0,
    });
    assert.equal(started.kind, "ok");
    const service = (started as { service: VerifierService }).service;
    const first = await rawClient(service.address.port);
    const second = await rawClient(service.address.port);
    const heardFirst = listen(first);
    const heardSecond = listen(second);
    try {
      const running = first.sendRequest<VerifyBatchResult>("verify/batch", {
        batchId: "a",
        items: [holeItem(1, "x"), holeItem(2, "y")],
      });
      const anonymous = first.sendRequest<VerifyBatchResult>("verify/batch", { items: [holeItem(3, "z")] });
      const queued = second.sendRequest<VerifyBatchResult>("verify/batch", {
        batchId: "b",
        items: [holeItem(4, "w")],
      });
      await verifier.receivedAtLeast(4);
      verifier.finish("x");
      await Promise.all([heardFirst.atLeast(1), heardSecond.atLeast(1)]);
      assert.deepEqual(heardFirst.heard, [{ batchId: "a", done: 1, total: 2, serviceDone: 1 }]);
      assert.deepEqual(
        heardSecond.heard,
        [{ batchId: "b", done: 0, total: 1, serviceDone: 1 }],
        "a queued batch hears that the service works on others",
      );
      verifier.finish("y");
      assert.equal((await running).verdicts.length, 2);
      await heardSecond.atLeast(2);
      assert.deepEqual(heardSecond.heard[1], { batchId: "b", done: 0, total: 1, serviceDone: 2 });
      verifier.finish("z");
      await anonymous;
      verifier.finish("w");
      await queued;
      await heardSecond.atLeast(4);
      assert.deepEqual(
        heardSecond.heard.map((p) => [p.done, p.serviceDone]),
        [
          [0, 1],
          [0, 2],
          [0, 3],
          [1, 4],
        ],
      );
      assert.deepEqual(
        heardFirst.heard.map((p) => p.batchId),
        ["a", "a"],
        "nothing for a batch without a batchId, nothing once a batch is answered",
      );
      assert.deepEqual(heardFirst.heard[1], { batchId: "a", done: 2, total: 2, serviceDone: 2 });
    } finally {
      first.dispose();
      second.dispose();
      await service.stop();
    }
  },
);
