/** The service client: balancing, hole affinity, and checks lost with a service resubmitted, never failed. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { VerifierClient } from "../../lean-bridge/serve/client";
import { VerifierService, type ServiceVerifier } from "../../lean-bridge/serve/service";
import { GatedVerifier, holeItem } from "./fakes";

async function serve(verifier: ServiceVerifier, port = 0, token?: string): Promise<VerifierService> {
  const started = await VerifierService.start(verifier, {
    host: "127.0.0.1",
    port,
    policy: token ? { kind: "token", token, generated: false } : { kind: "open" },
    queueLimit: 1000,
    reward: "binary",
    tasks: new Map(),
  });
  if (started.kind !== "ok") throw new Error(started.message);
  return started.service;
}

const FAST = { backoffMs: 5, maxBackoffMs: 50, connectTimeoutMs: 2000 };

/** 4 holes (lines 10, 20, 30, 40) x 4 candidates, half of them right. */
function groups(lines = [10, 20, 30, 40]) {
  return lines.flatMap((line) => ["ok", "bad", "ok", "worse"].map((c) => holeItem(line, c)));
}

test(
  "the client balances holes over services and keeps each hole's group on one service",
  { timeout: 20_000 },
  async () => {
    const a = new GatedVerifier();
    const b = new GatedVerifier();
    const services = [await serve(a), await serve(b)];
    const client = new VerifierClient(
      services.map((s) => s.address),
      { timing: FAST },
    );
    try {
      const items = groups();
      const first = await client.verifyBatch(items);
      assert.equal(first.kind, "ok");
      if (first.kind !== "ok") return;
      assert.deepEqual(
        first.verdicts.map((v) => v.kind),
        items.map((i) => (i.candidate === "ok" ? "proved" : "failed")),
        "verdicts come back in the items' order",
      );
      const holesOf = (v: GatedVerifier) => new Set(v.seen.map((s) => s.line));
      assert.equal(holesOf(a).size, 2, "each service got half of the holes");
      assert.equal(holesOf(b).size, 2);
      for (const line of holesOf(a)) assert.ok(!holesOf(b).has(line), `hole ${line} was split over services`);
      assert.equal(a.seen.length, 8);
      // The same holes again, with a new one: old holes stay where their snapshots are.
      const before = { a: holesOf(a), b: holesOf(b) };
      const second = await client.verifyBatch(groups([40, 30, 20, 10, 50]));
      assert.equal(second.kind, "ok");
      for (const line of [10, 20, 30, 40]) {
        const owner = before.a.has(line) ? a : b;
        const other = owner === a ? b : a;
        assert.equal(
          owner.seen.filter((s) => s.line === line).length,
          8,
          `hole ${line} went back to its service`,
        );
        assert.equal(other.seen.filter((s) => s.line === line).length, 0);
      }
    } finally {
      client.close();
      await Promise.all(services.map((s) => s.stop()));
    }
  },
);

test(
  "a service killed mid-batch: its checks are resubmitted to another service, none counted as a failure",
  { timeout: 20_000 },
  async () => {
    const doomed = new GatedVerifier();
    const healthy = new GatedVerifier();
    const a = await serve(doomed);
    const b = await serve(healthy);
    const client = new VerifierClient([a.address, b.address], { timing: FAST });
    try {
      // "slow" candidates hold the doomed service's batch until it is killed; the healthy one answers them.
      const items = [10, 20].flatMap((line) => ["slow ok", "slow bad"].map((c) => holeItem(line, c)));
      const pending = client.verifyBatch(items);
      await doomed.receivedAtLeast(2);
      await healthy.receivedAtLeast(2);
      await a.stop();
      healthy.gate.resolve();
      const result = await pending;
      assert.equal(result.kind, "ok");
      if (result.kind !== "ok") return;
      assert.deepEqual(
        result.verdicts.map((v) => v.kind),
        ["proved", "failed", "proved", "failed"],
      );
      assert.ok(result.verdicts.every((v) => v.verifier.label === "fake verifier (not Lean)"));
      assert.equal(
        client.counters.resubmitted,
        2,
        "the two checks lost with the killed service were sent again",
      );
      assert.equal(healthy.seen.length, 4);
    } finally {
      client.close();
      await b.stop();
    }
  },
);

test(
  "a service restarted on its port: the client reconnects and resubmits what was in flight",
  { timeout: 20_000 },
  async () => {
    const first = new GatedVerifier();
    const service = await serve(first, 0, "restart-token-1");
    const port = service.address.port;
    const client = new VerifierClient([{ host: "127.0.0.1", port }], {
      timing: FAST,
      token: "restart-token-1",
    });
    let restarted: VerifierService | undefined;
    try {
      const pending = client.verifyBatch([holeItem(5, "slow ok"), holeItem(5, "slow no")]);
      await first.receivedAtLeast(2);
      await service.stop();
      const second = new GatedVerifier();
      second.gate.resolve();
      restarted = await serve(second, port, "restart-token-1");
      const result = await pending;
      assert.equal(result.kind, "ok");
      if (result.kind !== "ok") return;
      assert.deepEqual(
        result.verdicts.map((v) => v.kind),
        ["proved", "failed"],
      );
      assert.equal(second.seen.length, 2, "the restarted service checked the resubmitted items");
      assert.ok(client.reconnects >= 1);
      const [report] = await client.stats();
      assert.equal(report!.kind, "ok");
    } finally {
      client.close();
      await restarted?.stop();
    }
  },
);

test(
  "with no service reachable, items become environment verdicts (masked), and a bad token is an error",
  { timeout: 20_000 },
  async () => {
    const probe = await serve(new GatedVerifier(), 0, "the-right-token");
    const port = probe.address.port;
    const wrong = new VerifierClient([{ host: "127.0.0.1", port }], { timing: FAST, token: "a-wrong-token" });
    const refused = await wrong.verifyBatch([holeItem(1, "ok")]);
    wrong.close();
    assert.equal(refused.kind, "error");
    assert.match(refused.kind === "error" ? refused.message : "", /refused the connection: wrong token/);
    await probe.stop();
    const client = new VerifierClient([{ host: "127.0.0.1", port }], { timing: FAST, retryWindowMs: 200 });
    try {
      const result = await client.verifyBatch([holeItem(1, "ok")]);
      assert.equal(result.kind, "ok");
      if (result.kind !== "ok") return;
      assert.equal(result.verdicts[0]!.kind, "environment");
      assert.match(
        result.verdicts[0]!.diagnostics[0]!.message,
        /no verifier service answered .*fim-rlvr serve/,
      );
      const [report] = await client.stats();
      assert.equal(report!.kind, "down");
    } finally {
      client.close();
    }
  },
);
