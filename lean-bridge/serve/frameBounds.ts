/**
 * Bounds on the frames a verifier service reads. JSON-RPC over LSP framing (`Content-Length: N\r\n\r\n` then N
 * bytes) lets a client hold a socket forever without a message the reader ever completes: a header that never
 * ends, a body that never arrives, a Content-Length of 10^12 (vscode-jsonrpc waits for it, and its own
 * partial-message timer only reports, and is switched off here: util/messageReaders.ts). The guard reads every
 * byte of the client before the JSON-RPC reader does, tracking where each frame begins and ends, and ends a
 * connection whose frame breaks a bound: its header longer than `maxHeaderBytes` or not done within
 * `headerTimeoutMs` of its first byte, a declared body larger than `maxBodyBytes` (or no valid Content-Length), a
 * body not done within `bodyTimeoutMs` of its header. The client is told why in a JSON-RPC error (id null: no
 * request was read) and the socket is closed. Time between frames is bounded by the service (idle connections).
 *
 * The first frame of a connection is the handshake (./handshake.ts): the guard itself collects it, bounded by
 * `maxFirstFrameBytes` for header and body together, and hands its body to the service; only the bytes after an
 * accepted handshake are passed on to the JSON-RPC reader. So a client without the token is never read past a
 * few KiB, whatever it declares.
 */
import type { Socket } from "node:net";
import { PassThrough } from "node:stream";
import { ErrorCodes } from "vscode-jsonrpc/node";
import { errorFrame } from "./handshake";

export interface FrameBounds {
  /** Longest header (its lines and the blank line that ends it), bytes. */
  maxHeaderBytes: number;
  /** Largest body a header may declare, bytes. */
  maxBodyBytes: number;
  /** Time from a frame's first byte to the end of its header, ms. */
  headerTimeoutMs: number;
  /** Time from the end of a header to the last byte of its body, ms. */
  bodyTimeoutMs: number;
  /** Largest first frame (the handshake), header and body together, bytes. */
  maxFirstFrameBytes: number;
}

/**
 * Generous for any client that is alive: LSP headers are tens of bytes; a batch of the queue's 4,096 items with
 * the largest candidates is a few MiB; a LAN or loopback client sends that in well under a second.
 */
export const DEFAULT_FRAME_BOUNDS: FrameBounds = {
  maxHeaderBytes: 8 * 1024,
  maxBodyBytes: 256 * 1024 * 1024,
  headerTimeoutMs: 30_000,
  bodyTimeoutMs: 120_000,
  // An `auth` request with a 32-byte token is about 100 bytes.
  maxFirstFrameBytes: 4 * 1024,
};

const CR = 13;
const LF = 10;

/**
 * The Content-Length the JSON-RPC reader will take from a header (vscode-jsonrpc's messageBuffer.ts and
 * messageReader.ts: lines split at CRLF, the key before the first ':' lower-cased, the value trimmed, the last
 * such line winning, `parseInt` of it with no radix, so `0x10` is 16), or why it will not take one. Where the two
 * could differ this refuses the frame: a guard that reads frames apart from the reader would bound nothing.
 */
export function declaredLength(
  header: string,
): { kind: "ok"; length: number } | { kind: "bad"; why: string } {
  let value: string | undefined;
  for (const line of header.split("\r\n").slice(0, -2)) {
    const colon = line.indexOf(":");
    if (colon < 0)
      return { kind: "bad", why: `a header line without ':' (${JSON.stringify(line.slice(0, 80))})` };
    if (line.slice(0, colon).toLowerCase() === "content-length") value = line.slice(colon + 1).trim();
  }
  if (value === undefined) return { kind: "bad", why: "a header without Content-Length" };
  // No radix: the reader's own call, hexadecimal included.
  const length = parseInt(value);
  if (!Number.isSafeInteger(length) || length < 0)
    return { kind: "bad", why: `Content-Length ${JSON.stringify(value.slice(0, 40))} is not a byte count` };
  return { kind: "ok", length };
}

/**
 * What the first frame decides: `pass` passes on the bytes after it to the JSON-RPC reader; `stop` reads no
 * more (the handshake was refused, and its answer closes the connection).
 */
export type FirstFrameDecision = "pass" | "stop";

/**
 * Watches one connection's incoming bytes; `onBreach` is called once, with what to tell the client. With
 * `onFirstFrame`, the first frame is collected (within `maxFirstFrameBytes`) and given to it, and `read` passes
 * on nothing before it; without, every byte is passed on.
 */
export class FrameGuard {
  /** Whole frames read so far (the JSON-RPC reader has read as many messages, the first frame aside). */
  framesRead = 0;
  private state: "idle" | "header" | "body" = "idle";
  /** The first frame's bytes while it is collected; undefined once it was decided (or when there is none). */
  private first: Buffer[] | undefined;
  private firstBytes = 0;
  /** Header bytes so far, and the end-of-header match state (0: none, 1: CR, 2: CRLF, 3: CRLF CR). */
  private header: Buffer[] = [];
  private headerBytes = 0;
  private match = 0;
  private bodyLeft = 0;
  private timer: NodeJS.Timeout | undefined;
  private breached = false;
  /** The first frame was refused: nothing more is read. */
  private stopped = false;

  constructor(
    private readonly bounds: FrameBounds,
    private readonly onBreach: (message: string) => void,
    private readonly onFirstFrame?: (body: Buffer) => FirstFrameDecision,
  ) {
    if (onFirstFrame) this.first = [];
  }

  /** The next bytes from the client, in order; what of them the JSON-RPC reader may read (empty: nothing). */
  read(chunk: Buffer): Buffer {
    let at = 0;
    // Where the bytes to pass on begin: after the first frame, once it was accepted.
    let passFrom = this.first === undefined && !this.stopped ? 0 : chunk.length;
    while (at < chunk.length && !this.breached && !this.stopped) {
      if (this.state === "idle") {
        this.state = "header";
        this.arm(this.bounds.headerTimeoutMs, "header");
      }
      const from = at;
      if (this.state === "header") at = this.readHeader(chunk, at);
      else {
        const take = Math.min(this.bodyLeft, chunk.length - at);
        this.bodyLeft -= take;
        at += take;
      }
      if (this.first !== undefined && !this.breached) {
        this.first.push(chunk.subarray(from, at));
        this.firstBytes += at - from;
        if (this.firstBytes > this.bounds.maxFirstFrameBytes) {
          this.breach(
            `a first frame longer than ${this.bounds.maxFirstFrameBytes} bytes (it must be the small \`auth\` request)`,
          );
          break;
        }
      }
      if (this.state === "body" && this.bodyLeft === 0) {
        this.frameDone();
        if (this.first !== undefined) {
          if (this.decideFirst() === "stop") break;
          passFrom = at;
        }
      }
    }
    return this.breached || this.stopped ? Buffer.alloc(0) : chunk.subarray(passFrom);
  }

  /** The first frame is whole: its body (after the header) goes to the handshake. */
  private decideFirst(): FirstFrameDecision {
    const frame = Buffer.concat(this.first!);
    this.first = undefined;
    const body = frame.subarray(frame.indexOf("\r\n\r\n") + 4);
    const decision = this.onFirstFrame!(body);
    if (decision === "stop") {
      this.stopped = true;
      this.dispose();
    }
    return decision;
  }

  /** Stops the timers (the connection closed). */
  dispose(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  private readHeader(chunk: Buffer, from: number): number {
    let at = from;
    while (at < chunk.length && this.match < 4) {
      const byte = chunk[at++]!;
      // vscode-jsonrpc's scan, state for state (messageBuffer.ts `tryReadHeaders`), so both see one frame end.
      if (byte === CR) this.match = this.match === 0 ? 1 : this.match === 2 ? 3 : 0;
      else if (byte === LF && (this.match === 1 || this.match === 3)) this.match++;
      else this.match = 0;
    }
    this.header.push(chunk.subarray(from, at));
    this.headerBytes += at - from;
    if (this.headerBytes > this.bounds.maxHeaderBytes) {
      this.breach(`a frame header longer than ${this.bounds.maxHeaderBytes} bytes`);
      return at;
    }
    if (this.match < 4) return at;
    // "ascii", as the reader decodes a header (Node's clears each byte's high bit).
    const declared = declaredLength(Buffer.concat(this.header).toString("ascii"));
    this.header = [];
    this.headerBytes = 0;
    this.match = 0;
    if (declared.kind === "bad") {
      this.breach(declared.why);
      return at;
    }
    if (
      this.first !== undefined &&
      at - from + this.firstBytes + declared.length > this.bounds.maxFirstFrameBytes
    ) {
      this.breach(
        `a first frame declaring ${declared.length} bytes, more than the ${this.bounds.maxFirstFrameBytes} read before \`auth\``,
      );
      return at;
    }
    if (declared.length > this.bounds.maxBodyBytes) {
      this.breach(
        `a frame declaring ${declared.length} bytes, more than the ${this.bounds.maxBodyBytes} this service reads`,
      );
      return at;
    }
    this.bodyLeft = declared.length;
    this.state = "body";
    if (this.bodyLeft > 0) this.arm(this.bounds.bodyTimeoutMs, "body");
    return at;
  }

  private frameDone(): void {
    this.framesRead++;
    this.state = "idle";
    this.dispose();
  }

  private arm(ms: number, part: "header" | "body"): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.breach(`a frame whose ${part} did not arrive within ${ms} ms`), ms);
  }

  private breach(message: string): void {
    if (this.breached) return;
    this.breached = true;
    this.dispose();
    this.onBreach(message);
  }
}

const closing = new WeakSet<Socket>();

/** How long a closing connection waits for its client to read why and close its end, ms. */
export const CLOSE_GRACE_MS = 2000;

/**
 * Writes `frame` (an answer that ends the connection) and closes `socket` once the client has closed its end, or
 * after `graceMs`. What the client still sends meanwhile is read and dropped: a socket destroyed with unread bytes
 * is reset, and a reset can discard the answer before the client reads it. Nothing of it reaches the guard or the
 * JSON-RPC reader any more.
 */
export function closeWith(socket: Socket, frame: string, graceMs: number): void {
  if (socket.destroyed || closing.has(socket)) return;
  closing.add(socket);
  socket.removeAllListeners("data");
  socket.on("data", () => undefined);
  socket.on("end", () => socket.destroy());
  const grace = setTimeout(() => socket.destroy(), graceMs);
  grace.unref();
  socket.once("close", () => clearTimeout(grace));
  socket.end(frame);
  socket.resume();
}

export interface GuardedInput {
  guard: FrameGuard;
  /** The client's bytes the JSON-RPC reader may read: everything after an accepted first frame. */
  input: PassThrough;
}

/**
 * Guards `socket`'s incoming frames: on a breach the client gets a JSON-RPC error (code -32700, parse error, id
 * null) saying which bound and what to do, and the socket is closed once it is written (closeWith).
 * `onBreach` hears the message too (the service counts them). With `onFirstFrame`, the first frame goes there
 * and only what follows an accepted one reaches `input`.
 */
export function guardFrames(
  socket: Socket,
  bounds: FrameBounds,
  handlers: {
    onBreach?: (message: string) => void;
    onFirstFrame?: (body: Buffer) => FirstFrameDecision;
  } = {},
): GuardedInput {
  const input = new PassThrough();
  const guard = new FrameGuard(
    bounds,
    (why) => {
      handlers.onBreach?.(why);
      const frame = errorFrame(
        null,
        ErrorCodes.ParseError,
        `the service closed this connection: it sent ${why}. Send whole LSP-framed JSON-RPC messages (Content-Length: N, a blank line, then N bytes of JSON), the first of them the \`auth\` request.`,
      );
      // What the JSON-RPC reader already holds is dropped with the socket.
      closeWith(socket, frame, CLOSE_GRACE_MS);
    },
    handlers.onFirstFrame,
  );
  socket.on("data", (chunk: Buffer | string) => {
    const pass = guard.read(typeof chunk === "string" ? Buffer.from(chunk) : chunk);
    // The reader takes what it is given at once; a full input only means its consumer is behind.
    if (pass.length > 0 && !input.write(pass)) {
      socket.pause();
      input.once("drain", () => socket.resume());
    }
  });
  socket.on("close", () => {
    guard.dispose();
    input.end();
  });
  return { guard, input };
}
