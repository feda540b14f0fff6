/**
 * A peer that dies between a message's header and its body must not keep this process alive: vscode-jsonrpc's
 * own reader leaves a self-re-arming timer behind (once seen as test/train/session.test.ts not exiting under
 * load, after a trainer was killed mid-request). The readers of lean-bridge/util/messageReaders.ts leave none.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer, connect, type Socket } from "node:net";
import { PassThrough } from "node:stream";
import { createMessageConnection, SocketMessageWriter, StreamMessageWriter } from "vscode-jsonrpc/node";
import { socketReader, streamReader } from "../../lean-bridge/util/messageReaders";

const HALF_A_MESSAGE = 'Content-Length: 40\r\n\r\n{"jsonrpc":"2.0",';

const timers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

test("a stream reader left holding half a message leaves no timer once its connection is disposed", async () => {
  const before = timers();
  const input = new PassThrough();
  const rpc = createMessageConnection(streamReader(input), new StreamMessageWriter(new PassThrough()));
  rpc.listen();
  input.write(HALF_A_MESSAGE);
  await turn();
  input.end();
  rpc.dispose();
  await turn();
  assert.equal(timers(), before);
});

test("a socket reader whose peer died mid-message leaves no timer once its connection is disposed", async () => {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  assert.ok(address && typeof address === "object");
  const accepted = once(server, "connection") as Promise<[Socket]>;
  const peer = connect(address.port, "127.0.0.1");
  const [socket] = await accepted;
  const before = timers();
  const rpc = createMessageConnection(socketReader(socket), new SocketMessageWriter(socket));
  const got = new Promise<void>((resolve) => socket.once("data", () => setImmediate(resolve)));
  rpc.listen();
  peer.end(HALF_A_MESSAGE);
  await got;
  const closed = once(socket, "close");
  peer.destroy();
  socket.destroy();
  await closed;
  rpc.dispose();
  server.close();
  await turn();
  assert.equal(timers(), before);
});
