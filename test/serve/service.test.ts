/** The verifier service over loopback TCP: tokens, back-pressure, out-of-order answers, real verdicts. */
import { test } from "node:test";
import assert from "node:assert/strict";
import { connect } from "node:net";
import {
  createMessageConnection,
  ResponseError,
  SocketMessageReader,
  SocketMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import { isLoopback, tokenAccepted, tokenPolicy } from "../../lean-bridge/serve/auth";
import {
  SERVICE_BUSY,
  SERVICE_UNAUTHORIZED,
  type ServiceStats,
  type VerifyBatchResult,
} from "../../lean-bridge/protocol/trainer";
import { VerifierService, type ServiceOptions, type ServiceVerifier } from "../../lean-bridge/serve/service";
import { inMemory } from "../harness";
import { proofHole, readExample } from "../helpers";
import { GatedVerifier, holeItem } from "./fakes";
import { frame, openSocket, readFrame, rpcClient } from "./rawClients";

async function serve(
  verifier: ServiceVerifier,
  options: Partial<ServiceOptions> = {},
): Promise<VerifierService> {
  const started = await VerifierService.start(verifier, {
    host: "127.0.0.1",
    port: 0,
    policy: { kind: "open" },
    queueLimit: 100,
    reward: "binary",
    tasks: new Map(),
    ...options,
  });
  assert.equal(started.kind, "ok");
  return (started as { service: VerifierService }).service;
}

async function rawClient(service: VerifierService): Promise<MessageConnection> {
  const socket = connect(service.address.port, "127.0.0.1");
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  const rpc = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  rpc.listen();
  await rpc.sendRequest("auth", {});
  return rpc;
}

const verify = (rpc: MessageConnection, params: unknown) =>
  rpc.sendRequest<VerifyBatchResult>("verify/batch", params);
const stats = (rpc: MessageConnection, params: unknown = {}) =>
  rpc.sendRequest<ServiceStats>("stats", params);

async function errorOf(promise: Promise<unknown>): Promise<ResponseError<unknown>> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof ResponseError) return error;
    throw error;
  }
  assert.fail("expected a JSON-RPC error");
}

test("only loopback binds are open; any other address gets a generated token", () => {
  assert.ok(
    isLoopback("127.0.0.1") && isLoopback("::1") && isLoopback("localhost") && isLoopback("127.1.2.3"),
  );
  assert.ok(
    !isLoopback("0.0.0.0") && !isLoopback("10.0.0.5") && !isLoopback("::") && !isLoopback("example.org"),
  );
  assert.deepEqual(tokenPolicy("127.0.0.1", undefined), { kind: "open" });
  const generated = tokenPolicy("0.0.0.0", undefined);
  assert.equal(generated.kind, "token");
  if (generated.kind !== "token") return;
  assert.equal(generated.generated, true);
  assert.ok(generated.token.length >= 32);
  const other = tokenPolicy("::", undefined);
  assert.ok(other.kind === "token" && other.token !== generated.token, "each service gets its own token");

  assert.ok(tokenAccepted(generated, generated.token));
  assert.ok(!tokenAccepted(generated, undefined) && !tokenAccepted(generated, generated.token.slice(1)));
  assert.deepEqual(tokenPolicy("127.0.0.1", "my-secret-token"), {
    kind: "token",
    token: "my-secret-token",
    generated: false,
  });
});

test(
  "with a token, a connection must open with auth and the right token; then its requests need none",
  { timeout: 20_000 },
  async () => {
    const verifier = new GatedVerifier();
    const service = await serve(verifier, { policy: tokenPolicy("127.0.0.1", "right-token-123") });
    const port = service.address.port;
    const refusedHandshake = async (message: unknown) => {
      const socket = await openSocket(port);
      const answer = readFrame(socket);
      const closed = new Promise((resolve) => socket.once("close", resolve));
      socket.write(frame(message));
      const reply = (await answer) as { id: unknown; error: { code: number; message: string } };
      await closed;
      return reply;
    };
    try {
      const noAuth = await refusedHandshake({
        jsonrpc: "2.0",
        id: 1,
        method: "verify/batch",
        params: { token: "right-token-123", items: [holeItem(1, "ok")] },
      });
      assert.equal(noAuth.error.code, SERVICE_UNAUTHORIZED);
      assert.equal(noAuth.id, 1);
      assert.match(noAuth.error.message, /first message of a connection must be the `auth` request/);
      const missing = await refusedHandshake({ jsonrpc: "2.0", id: 2, method: "auth", params: {} });
      assert.equal(missing.error.code, SERVICE_UNAUTHORIZED);
      assert.match(missing.error.message, /requires a token/);
      const wrong = await refusedHandshake({
        jsonrpc: "2.0",
        id: 3,
        method: "auth",
        params: { token: "wrong-token-123" },
      });
      assert.match(wrong.error.message, /wrong token/);
      assert.equal(verifier.seen.length, 0, "refused connections check nothing");

      const rpc = await rpcClient(port, "right-token-123");
      try {
        const ok = await verify(rpc, { items: [holeItem(1, "ok")] });
        assert.equal(ok.verdicts[0]!.kind, "proved");
        const wrongInRequest = await errorOf(
          verify(rpc, { token: "wrong-token-123", items: [holeItem(1, "ok")] }),
        );
        assert.equal(
          wrongInRequest.code,
          SERVICE_UNAUTHORIZED,
          "a request's own token must be right when given",
        );
        const s = await stats(rpc, { token: "right-token-123" });
        assert.equal(s.refused, 4);
        assert.equal(s.checks, 1);
      } finally {
        rpc.dispose();
      }
    } finally {
      await service.stop();
    }
  },
);

test(
  "a full queue answers busy at once (never queues without bound), and takes work again when it drains",
  { timeout: 20_000 },
  async () => {
    const verifier = new GatedVerifier();
    const service = await serve(verifier, { queueLimit: 4 });
    const rpc = await rawClient(service);
    try {
      const first = verify(rpc, { items: [holeItem(1, "slow ok"), holeItem(1, "x"), holeItem(2, "ok")] });
      await verifier.receivedAtLeast(3);
      assert.equal((await stats(rpc)).queue, 3);
      const busy = await errorOf(verify(rpc, { items: [holeItem(3, "ok"), holeItem(4, "ok")] }));
      assert.equal(busy.code, SERVICE_BUSY);
      assert.match(busy.message, /busy: 3 items are queued \(limit 4\); retry/);
      const tooBig = await errorOf(
        verify(rpc, { items: Array.from({ length: 5 }, (_, k) => holeItem(k, "ok")) }),
      );
      assert.equal(tooBig.code, SERVICE_BUSY);
      assert.match(tooBig.message, /larger than the queue \(4\): split it/);
      assert.equal(verifier.seen.length, 3, "refused batches were not checked");
      verifier.gate.resolve();
      assert.deepEqual(
        (await first).verdicts.map((v) => v.kind),
        ["proved", "failed", "proved"],
      );
      const s = await stats(rpc);
      assert.equal(s.busy, 2);
      assert.equal(s.queue, 0);
      assert.equal((await verify(rpc, { items: [holeItem(3, "ok"), holeItem(4, "ok")] })).verdicts.length, 2);
    } finally {
      rpc.dispose();
      await service.stop();
    }
  },
);

test(
  "answers come back as each batch finishes: a slow check does not hold back a fast one",
  { timeout: 20_000 },
  async () => {
    const verifier = new GatedVerifier();
    const service = await serve(verifier);
    const rpc = await rawClient(service);
    try {
      let slowSettled = false;
      const slow = verify(rpc, { items: [holeItem(1, "slow ok")] }).finally(() => (slowSettled = true));
      await verifier.receivedAtLeast(1);
      const fast = await verify(rpc, { items: [holeItem(2, "ok"), holeItem(3, "nope")] });
      assert.deepEqual(
        fast.verdicts.map((v) => [v.taskId, v.kind, v.reward]),
        [
          ["F.lean@2:2-2:7", "proved", 1],
          ["F.lean@3:2-3:7", "failed", 0],
        ],
      );
      assert.equal(slowSettled, false, "the slow batch is still being checked");
      verifier.gate.resolve();
      assert.equal((await slow).verdicts[0]!.kind, "proved");
    } finally {
      rpc.dispose();
      await service.stop();
    }
  },
);

test(
  "real checks through the service: items by task id and by file+hole, bad items rejected alone",
  { timeout: 20_000 },
  async () => {
    const ARITH = "FimExamples/Arith.lean";
    const hole = proofHole(readExample(ARITH), "add_le_add_3");
    const h = await inMemory();
    const service = await serve(h.pool, { tasks: new Map([["t1", { file: ARITH, hole }]]) });
    const rpc = await rawClient(service);
    try {
      const result = await verify(rpc, {
        items: [
          { taskId: "t1", candidate: "omega" },
          { file: ARITH, hole, candidate: "simp" },
          { taskId: "nope", candidate: "omega" },
          { taskId: "t1" },
        ],
      });
      const [byId, byHole, unknown, noCandidate] = result.verdicts;
      assert.equal(byId!.kind, "proved");
      assert.equal(byId!.reward, 1);
      assert.equal(byId!.taskId, "t1");
      assert.equal(byId!.verifier.kind, "simulator");
      assert.equal(byHole!.kind, "failed");
      assert.equal(
        byHole!.taskId,
        `${ARITH}@${hole.start.line}:${hole.start.character}-${hole.end.line}:${hole.end.character}`,
      );
      assert.ok(byHole!.diagnostics.some((d) => d.severity === 1 && d.candidateRange !== null));
      assert.equal(unknown!.kind, "rejected");
      assert.match(unknown!.diagnostics[0]!.message, /unknown task id nope/);
      assert.equal(noCandidate!.kind, "rejected");
      const s = await stats(rpc);
      assert.equal(s.checks, 4);
      assert.equal(s.tasks, 1);
      assert.equal(s.verifier.kind, "simulator");
      assert.ok(s.checksPerSecond > 0);
      const again = await verify(rpc, { items: [{ taskId: "t1", candidate: "omega" }] });
      assert.equal(again.verdicts[0]!.cached, true);
      // The proof's own verdict and the hole's no-op check (verify/noopProbe.ts), both from the cache.
      assert.equal((await stats(rpc)).cacheHits, 2);
    } finally {
      rpc.dispose();
      await service.stop();
      await h.close();
    }
  },
);
