/**
 * Bounds on the frames a verifier service reads. JSON-RPC over LSP framing (`Content-Length: N\r\n\r\n` then N
 * bytes) lets a client hold a socket forever without a message the reader ever completes: a header that never
 * ends, a body that never arrives, a Content-Length of 10^12 (vscode-jsonrpc waits for it, and its own
 * partial-message timer only reports, and is switched off here: util/messageReaders.ts). The guard reads the same
 * bytes as the JSON-RPC reader, beside it, tracking where each frame begins and ends, and ends a connection whose
 * frame breaks a bound: its header longer than `maxHeaderBytes` or not done within `headerTimeoutMs` of its first
 * byte, a declared body larger than `maxBodyBytes` (or no valid Content-Length), a body not done within
 * `bodyTimeoutMs` of its header. The client is told why in a JSON-RPC error (id null: no request was read) and the
 * socket is closed. Time between frames is not bounded: an idle client holds nothing.
 */
import type { Socket } from "node:net";
import { ErrorCodes } from "vscode-jsonrpc/node";

export interface FrameBounds {
  /** Longest header (its lines and the blank line that ends it), bytes. */
  maxHeaderBytes: number;
  /** Largest body a header may declare, bytes. */
  maxBodyBytes: number;
  /** Time from a frame's first byte to the end of its header, ms. */
  headerTimeoutMs: number;
  /** Time from the end of a header to the last byte of its body, ms. */
  bodyTimeoutMs: number;
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

/** Watches one connection's incoming bytes; `onBreach` is called once, with what to tell the client. */
export class FrameGuard {
  /** Whole frames read so far (the JSON-RPC reader has read as many messages). */
  framesRead = 0;
  private state: "idle" | "header" | "body" = "idle";
  /** Header bytes so far, and the end-of-header match state (0: none, 1: CR, 2: CRLF, 3: CRLF CR). */
  private header: Buffer[] = [];
  private headerBytes = 0;
  private match = 0;
  private bodyLeft = 0;
  private timer: NodeJS.Timeout | undefined;
  private breached = false;

  constructor(
    private readonly bounds: FrameBounds,
    private readonly onBreach: (message: string) => void,
  ) {}

  /** The next bytes from the client, in order. */
  read(chunk: Buffer): void {
    let at = 0;
    while (at < chunk.length && !this.breached) {
      if (this.state === "idle") {
        this.state = "header";
        this.arm(this.bounds.headerTimeoutMs, "header");
      }
      if (this.state === "header") at = this.readHeader(chunk, at);
      else {
        const take = Math.min(this.bodyLeft, chunk.length - at);
        this.bodyLeft -= take;
        at += take;
        if (this.bodyLeft === 0) this.frameDone();
      }
    }
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
    if (declared.length > this.bounds.maxBodyBytes) {
      this.breach(
        `a frame declaring ${declared.length} bytes, more than the ${this.bounds.maxBodyBytes} this service reads`,
      );
      return at;
    }
    this.bodyLeft = declared.length;
    this.state = "body";
    if (this.bodyLeft === 0) this.frameDone();
    else this.arm(this.bounds.bodyTimeoutMs, "body");
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

/**
 * Guards `socket`'s incoming frames: on a breach the client gets a JSON-RPC error (code -32700, parse error, id
 * null) saying which bound and what to do, and the socket is closed once it is written (or after `closeGraceMs`
 * when the client does not read it). `onBreach` hears the message too (the service counts them).
 */
export function guardFrames(
  socket: Socket,
  bounds: FrameBounds,
  onBreach?: (message: string) => void,
): FrameGuard {
  const guard = new FrameGuard(bounds, (why) => {
    onBreach?.(why);
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: ErrorCodes.ParseError,
        message: `the service closed this connection: it sent ${why}. Send whole LSP-framed JSON-RPC messages (Content-Length: N, a blank line, then N bytes of JSON).`,
      },
    });
    // No more of this client's bytes are read; what the JSON-RPC reader already holds is dropped with the socket.
    socket.pause();
    const grace = setTimeout(() => socket.destroy(), Math.max(bounds.headerTimeoutMs, 1000));
    grace.unref();
    socket.end(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`, () => {
      clearTimeout(grace);
      socket.destroy();
    });
  });
  socket.on("data", (chunk: Buffer | string) =>
    guard.read(typeof chunk === "string" ? Buffer.from(chunk) : chunk),
  );
  socket.on("close", () => guard.dispose());
  return guard;
}
