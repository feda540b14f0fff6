/**
 * JSON-RPC message readers that never keep the process alive on their own.
 *
 * vscode-jsonrpc's stream reader starts a "partial message" timer whenever it holds part of a message (a peer
 * writes a message's header and body as two writes, so a read between them is enough). The timer re-arms itself
 * every 10 s for as long as that message stays incomplete, and disposing the connection does not clear it: a
 * peer that dies between a header and its body (a trainer killed mid-request, a crashed server) would keep this
 * process running forever. Nothing here listens for partial-message events, so the timer is switched off.
 */
import type { Socket } from "node:net";
import { SocketMessageReader, StreamMessageReader } from "vscode-jsonrpc/node";

/** A reader over a child's stdout (or any readable stream). */
export function streamReader(readable: NodeJS.ReadableStream): StreamMessageReader {
  const reader = new StreamMessageReader(readable);
  reader.partialMessageTimeout = 0;
  return reader;
}

/** A reader over a TCP socket. */
export function socketReader(socket: Socket): SocketMessageReader {
  const reader = new SocketMessageReader(socket);
  reader.partialMessageTimeout = 0;
  return reader;
}
