/**
 * Frame bounds of the verifier service (lean-bridge/serve/frameBounds.ts): the guard finds the frame ends the
 * JSON-RPC reader finds, on every split of the bytes; a client that sends half a frame and stops, one that
 * declares Content-Length: 10^12, one that sends an endless header line each get a JSON-RPC error and a closed
 * socket within the bound, while the service keeps answering other clients. The bounds are small here and every
 * wait is on an event (an answer, a close), never a sleep.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import type { Socket } from "node:net";
import { PassThrough } from "node:stream";
import { ErrorCodes } from "vscode-jsonrpc/node";
import type { VerifyBatchResult } from "../../lean-bridge/protocol/trainer";
import { declaredLength, FrameGuard, type FrameBounds } from "../../lean-bridge/serve/frameBounds";
import { VerifierService } from "../../lean-bridge/serve/service";
import { streamReader } from "../../lean-bridge/util/messageReaders";
import { GatedVerifier, holeItem } from "./fakes";
import { authenticatedSocket, rpcClient } from "./rawClients";

/** Slack for a loaded machine between a timer's due time and the client seeing the close (not a sleep). */
const SCHEDULING_SLACK_MS = 5_000;

test("the Content-Length the reader takes: case, last line wins, parseInt's hexadecimal; refusals say why", () => {
  const h = (...lines: string[]) => `${lines.join("\r\n")}\r\n\r\n`;
  assert.deepEqual(declaredLength(h("Content-Length: 12")), { kind: "ok", length: 12 });
  assert.deepEqual(declaredLength(h("content-LENGTH:7", "Content-Type: x")), { kind: "ok", length: 7 });
  assert.deepEqual(declaredLength(h("Content-Length: 3", "Content-Length: 9")), { kind: "ok", length: 9 });
  assert.deepEqual(declaredLength(h("Content-Length: 0x10")), { kind: "ok", length: 16 });
  assert.deepEqual(declaredLength(h("Content-Length: 12abc")), { kind: "ok", length: 12 });
  assert.match((declaredLength(h("Content-Type: x")) as { why: string }).why, /without Content-Length/);
  assert.match((declaredLength(h("Content-Length 5")) as { why: string }).why, /without ':'/);
  assert.match((declaredLength(h("Content-Length: -5")) as { why: string }).why, /not a byte count/);
  assert.match((declaredLength(h("Content-Length:")) as { why: string }).why, /not a byte count/);
});

test("the guard ends frames where vscode-jsonrpc's reader does, however the bytes are split", async () => {
  const bodies = ['{"jsonrpc":"2.0","method":"a"}', '{"jsonrpc":"2.0","method":"ü","params":[1]}', "{}"];
  const frame = (body: string, header = `Content-Length: ${Buffer.byteLength(body)}`) =>
    `${header}\r\n\r\n${body}`;
  const stream = Buffer.concat([
    Buffer.from(frame(bodies[0]!)),
    // A stray CR before the blank line, a second header, the key in another case, a length in hexadecimal.
    Buffer.from(
      frame(
        bodies[1]!,
        `Content-Type: application/json\r\r\ncontent-length: ${Buffer.byteLength(bodies[1]!)}`,
      ),
    ),
    Buffer.from(frame(bodies[2]!, "Content-Length: 0x2")),
  ]);
  const bounds: FrameBounds = {
    maxHeaderBytes: 1024,
    maxBodyBytes: 1024,
    headerTimeoutMs: 60_000,
    bodyTimeoutMs: 60_000,
    maxFirstFrameBytes: 4096,
  };
  for (const size of [1, 2, 3, 7, 16, stream.length]) {
    const breaches: string[] = [];
    const guard = new FrameGuard(bounds, (why) => breaches.push(why));
    const through = new PassThrough();
    const reader = streamReader(through);
    let messages = 0;
    const all = new Promise<void>((resolve) =>
      reader.listen(() => {
        if (++messages === bodies.length) resolve();
      }),
    );
    for (let at = 0; at < stream.length; at += size) {
      const chunk = stream.subarray(at, at + size);
      guard.read(chunk);
      through.write(chunk);
    }
    await all;
    assert.deepEqual(breaches, [], `chunks of ${size}`);
    assert.equal(guard.framesRead, bodies.length, `chunks of ${size}`);
    guard.dispose();
    reader.dispose();
  }
});

async function serve(bounds: FrameBounds): Promise<{ service: VerifierService; verifier: GatedVerifier }> {
  const verifier = new GatedVerifier();
  const started = await VerifierService.start(verifier, {
    host: "127.0.0.1",
    port: 0,
    policy: { kind: "open" },
    queueLimit: 100,
    reward: "binary",
    tasks: new Map(),
    frameBounds: bounds,
  });
  assert.equal(started.kind, "ok");
  return { service: (started as { service: VerifierService }).service, verifier };
}

/** A raw connection past the handshake: these bounds are the ones an authenticated client meets. */
function open(service: VerifierService): Promise<Socket> {
  return authenticatedSocket(service.address.port);
}

/** Writes `bytes` and resolves once they are handed to the kernel, with the time then. */
function send(socket: Socket, bytes: string | Buffer): Promise<number> {
  return new Promise((resolve, reject) =>
    socket.write(bytes, (error) => (error ? reject(error) : resolve(performance.now()))),
  );
}

/** Everything the service sends until it closes the socket, and when the close came. */
function untilClosed(socket: Socket): Promise<{ text: string; closedAt: number }> {
  const chunks: Buffer[] = [];
  socket.on("data", (chunk: Buffer) => chunks.push(chunk));
  // Writes into a socket the service has closed fail; the close is what the test waits for.
  socket.on("error", () => undefined);
  return new Promise((resolve) =>
    socket.once("close", () =>
      resolve({ text: Buffer.concat(chunks).toString("utf8"), closedAt: performance.now() }),
    ),
  );
}

/** The one JSON-RPC error the service answers a breaking frame with. */
function errorAnswer(text: string): { code: number; message: string } {
  const match = /^Content-Length: (\d+)\r\n\r\n([\s\S]*)$/.exec(text);
  assert.ok(match, `one LSP frame: ${JSON.stringify(text.slice(0, 200))}`);
  assert.equal(Buffer.byteLength(match[2]!), Number(match[1]));
  const message = JSON.parse(match[2]!) as {
    jsonrpc: string;
    id: null;
    error: { code: number; message: string };
  };
  assert.equal(message.jsonrpc, "2.0");
  assert.equal(message.id, null);
  return message.error;
}

async function stillServes(service: VerifierService, line: number): Promise<void> {
  const rpc = await rpcClient(service.address.port);
  try {
    const answer = await rpc.sendRequest<VerifyBatchResult>("verify/batch", {
      items: [holeItem(line, "ok")],
    });
    assert.equal(answer.verdicts[0]!.kind, "proved");
  } finally {
    rpc.dispose();
  }
}

test(
  "half a frame, then silence: an error and a closed socket when the body's bound passes; others are served",
  { timeout: 30_000 },
  async () => {
    const bounds = {
      maxHeaderBytes: 1024,
      maxBodyBytes: 1 << 20,
      headerTimeoutMs: 60_000,
      bodyTimeoutMs: 150,
      maxFirstFrameBytes: 4096,
    };
    const { service } = await serve(bounds);
    try {
      const socket = await open(service);
      const closed = untilClosed(socket);
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "stats", params: {} });
      const sentAt = await send(
        socket,
        `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, 10)}`,
      );
      // Another client is answered while this one holds half a frame.
      await stillServes(service, 1);
      const { text, closedAt } = await closed;
      const error = errorAnswer(text);
      assert.equal(error.code, ErrorCodes.ParseError);
      assert.match(error.message, /a frame whose body did not arrive within 150 ms/);
      assert.match(error.message, /Content-Length: N/, "says what to send");
      assert.ok(closedAt - sentAt >= bounds.bodyTimeoutMs - 1, "not before the bound");
      assert.ok(closedAt - sentAt < bounds.bodyTimeoutMs + SCHEDULING_SLACK_MS, "within the bound");
      await stillServes(service, 2);
    } finally {
      await service.stop();
    }
  },
);

test(
  "half a header, then silence: an error and a closed socket when the header's bound passes",
  { timeout: 30_000 },
  async () => {
    const bounds = {
      maxHeaderBytes: 1024,
      maxBodyBytes: 1 << 20,
      headerTimeoutMs: 150,
      bodyTimeoutMs: 60_000,
      maxFirstFrameBytes: 4096,
    };
    const { service } = await serve(bounds);
    try {
      const socket = await open(service);
      const closed = untilClosed(socket);
      const sentAt = await send(socket, "Content-Len");
      const { text, closedAt } = await closed;
      assert.match(errorAnswer(text).message, /a frame whose header did not arrive within 150 ms/);
      assert.ok(closedAt - sentAt >= bounds.headerTimeoutMs - 1);
      assert.ok(closedAt - sentAt < bounds.headerTimeoutMs + SCHEDULING_SLACK_MS);
      await stillServes(service, 1);
    } finally {
      await service.stop();
    }
  },
);

test(
  "Content-Length: 10^12 is refused at once, with an error and a closed socket",
  { timeout: 30_000 },
  async () => {
    // Time bounds far beyond the test's own timeout: only the size bound can end this connection in time.
    const bounds = {
      maxHeaderBytes: 1024,
      maxBodyBytes: 1 << 20,
      headerTimeoutMs: 600_000,
      bodyTimeoutMs: 600_000,
      maxFirstFrameBytes: 4096,
    };
    const { service, verifier } = await serve(bounds);
    try {
      const socket = await open(service);
      const closed = untilClosed(socket);
      await send(
        socket,
        `Content-Length: ${10 ** 12}\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"verify/batch"`,
      );
      const { text } = await closed;
      const error = errorAnswer(text);
      assert.equal(error.code, ErrorCodes.ParseError);
      assert.match(
        error.message,
        /a frame declaring 1000000000000 bytes, more than the 1048576 this service reads/,
      );
      await stillServes(service, 1);
      assert.equal(verifier.seen.length, 1, "only the good client's item was checked");
    } finally {
      await service.stop();
    }
  },
);

test(
  "an endless header line is refused once it passes the header's size bound",
  { timeout: 30_000 },
  async () => {
    const bounds = {
      maxHeaderBytes: 4096,
      maxBodyBytes: 1 << 20,
      headerTimeoutMs: 600_000,
      bodyTimeoutMs: 600_000,
      maxFirstFrameBytes: 4096,
    };
    const { service } = await serve(bounds);
    try {
      const socket = await open(service);
      const closed = untilClosed(socket);
      let open_ = true;
      void closed.then(() => (open_ = false));
      // Keep writing one header line without an end, as such a client does, until the service hangs up.
      const line = Buffer.alloc(1024, "X");
      let sent = 0;
      while (open_ && sent < 64 * 1024 * 1024) {
        try {
          await send(socket, line);
        } catch {
          break;
        }
        sent += line.length;
      }
      const { text } = await closed;
      assert.match(errorAnswer(text).message, /a frame header longer than 4096 bytes/);
      assert.ok(sent < 64 * 1024 * 1024, "the service hung up long before the client stopped");
      await stillServes(service, 1);
    } finally {
      await service.stop();
    }
  },
);

test(
  "a frame without a usable Content-Length is refused, not left to the reader",
  { timeout: 30_000 },
  async () => {
    const bounds = {
      maxHeaderBytes: 1024,
      maxBodyBytes: 1 << 20,
      headerTimeoutMs: 600_000,
      bodyTimeoutMs: 600_000,
      maxFirstFrameBytes: 4096,
    };
    const { service } = await serve(bounds);
    try {
      for (const header of ["Content-Type: application/json", "Content-Length: -1", "garbage"]) {
        const socket = await open(service);
        const closed = untilClosed(socket);
        await send(socket, `${header}\r\n\r\n{}`);
        assert.equal(errorAnswer((await closed).text).code, ErrorCodes.ParseError, header);
      }
      await stillServes(service, 1);
    } finally {
      await service.stop();
    }
  },
);
