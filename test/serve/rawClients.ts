/** Clients of a verifier service as tests need them: a raw socket past the `auth` handshake, a JSON-RPC one. */
import assert from "node:assert/strict";
import { connect, type Socket } from "node:net";
import {
  createMessageConnection,
  SocketMessageReader,
  SocketMessageWriter,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import type { AuthResult } from "../../lean-bridge/protocol/trainer";

/** One LSP frame holding `message` as JSON. */
export function frame(message: unknown): string {
  const body = JSON.stringify(message);
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** A TCP connection to the service's port (from `localAddress`, any loopback address, when given). */
export async function openSocket(port: number, localAddress?: string): Promise<Socket> {
  const socket = connect({ port, host: "127.0.0.1", ...(localAddress ? { localAddress } : {}) });
  await new Promise((resolve, reject) => socket.once("connect", resolve).once("error", reject));
  return socket;
}

/** Reads one whole LSP frame from `socket` (the next the service sends) as JSON. */
export function readFrame(socket: Socket): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf("\r\n\r\n");
      if (end < 0) return;
      const length = Number(/Content-Length: (\d+)/.exec(buffered.subarray(0, end).toString())?.[1]);
      if (buffered.length < end + 4 + length) return;
      socket.off("data", onData);
      socket.off("close", onClose);
      const rest = buffered.subarray(end + 4 + length);
      if (rest.length > 0) socket.unshift(rest);
      resolve(JSON.parse(buffered.subarray(end + 4, end + 4 + length).toString("utf8")));
    };
    const onClose = () => reject(new Error("the service closed the connection before a whole frame"));
    socket.on("data", onData);
    socket.once("close", onClose);
  });
}

/** A raw socket that has passed `auth` (with `token` when given). */
export async function authenticatedSocket(port: number, token?: string): Promise<Socket> {
  const socket = await openSocket(port);
  const answer = readFrame(socket);
  socket.write(frame({ jsonrpc: "2.0", id: 0, method: "auth", params: token ? { token } : {} }));
  const reply = (await answer) as { result?: AuthResult; error?: unknown };
  assert.ok(reply.result, `auth accepted: ${JSON.stringify(reply)}`);
  return socket;
}

/** A JSON-RPC connection that has passed `auth`. */
export async function rpcClient(port: number, token?: string): Promise<MessageConnection> {
  const socket = await openSocket(port);
  const rpc = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  rpc.listen();
  await rpc.sendRequest("auth", token ? { token } : {});
  return rpc;
}
