/**
 * The first message of every connection: `auth`, a JSON-RPC request `{ token? }` in one small frame. It is read
 * and answered here, below the JSON-RPC reader, before any other byte of the client is read: so a client that
 * does not hold the token never gets a frame larger than the first-frame bound read, and nothing it sends reaches
 * the reader. Under the open policy (loopback without --token) `auth` still comes first: it is what lifts the
 * connection from the small first-frame bound to the body bound, so that an idle or hostile local process holds
 * only a few KiB.
 */
import { ErrorCodes } from "vscode-jsonrpc/node";
import { Auth, SERVICE_UNAUTHORIZED, type AuthResult } from "../protocol/trainer";
import { tokenAccepted, type TokenPolicy } from "./auth";

/** One LSP frame holding `message` as JSON. */
export function frameOf(message: object): string {
  const body = JSON.stringify(message);
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

/** A JSON-RPC error answer (id null when no request id could be read). */
export function errorFrame(id: number | string | null, code: number, message: string): string {
  return frameOf({ jsonrpc: "2.0", id, error: { code, message } });
}

export type HandshakeOutcome =
  /** The connection may send requests; `reply` answers the `auth` request. */
  | { kind: "accepted"; reply: string }
  /** The connection is closed after `reply`; `why` is counted (the service's `refused`). */
  | { kind: "refused"; reply: string; why: string };

/** Reads the first frame's body: an `auth` request whose token the policy accepts, or a refusal that says why. */
export function answerHandshake(body: Buffer, policy: TokenPolicy, result: AuthResult): HandshakeOutcome {
  let message: unknown;
  try {
    message = JSON.parse(body.toString("utf8"));
  } catch {
    return {
      kind: "refused",
      why: "the first frame is not JSON",
      reply: errorFrame(
        null,
        ErrorCodes.ParseError,
        `the first frame is not JSON: send \`${Auth.method}\` first, a JSON-RPC request {"token": …}`,
      ),
    };
  }
  const request = typeof message === "object" && message !== null ? (message as Record<string, unknown>) : {};
  const id = typeof request.id === "number" || typeof request.id === "string" ? request.id : null;
  if (request.jsonrpc !== "2.0" || request.method !== Auth.method || id === null)
    return {
      kind: "refused",
      why: "the first message was not auth",
      reply: errorFrame(
        id,
        SERVICE_UNAUTHORIZED,
        `the first message of a connection must be the \`${Auth.method}\` request (params {"token": …}, the token \`fim-rlvr serve\` printed, or none on an open service); nothing else is read before it`,
      ),
    };
  const params = request.params;
  const token =
    typeof params === "object" && params !== null ? (params as { token?: unknown }).token : undefined;
  if (!tokenAccepted(policy, token))
    return {
      kind: "refused",
      why: token === undefined ? "no token" : "a wrong token",
      reply: errorFrame(
        id,
        SERVICE_UNAUTHORIZED,
        token === undefined
          ? "this service requires a token: pass the one `fim-rlvr serve` printed as the `token` of `auth`"
          : "wrong token: pass the one `fim-rlvr serve` printed (or its --token) as the `token` of `auth`",
      ),
    };
  return { kind: "accepted", reply: frameOf({ jsonrpc: "2.0", id, result }) };
}
