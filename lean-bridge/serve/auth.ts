/**
 * Who may use the service. Bound to loopback, only processes of this machine can connect, so no token is
 * needed unless one is given. Bound to any other address, a token is required: generated (and printed) when
 * the user gives none. Tokens are compared in constant time.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { isIP } from "node:net";

export const DEFAULT_HOST = "127.0.0.1";

/** Whether a bind address only accepts connections from this machine. */
export function isLoopback(host: string): boolean {
  if (host === "localhost" || host === "::1") return true;
  return isIP(host) === 4 && host.startsWith("127.");
}

/** A fresh token: 32 random bytes, URL-safe base64 (safe in shells and URLs). */
export function generateToken(): string {
  return randomBytes(32).toString("base64url");
}

export type TokenPolicy = { kind: "open" } | { kind: "token"; token: string; generated: boolean };

/** The token rule for a bind address and the user's --token (if any). */
export function tokenPolicy(host: string, token: string | undefined): TokenPolicy {
  if (token !== undefined) return { kind: "token", token, generated: false };
  if (isLoopback(host)) return { kind: "open" };
  return { kind: "token", token: generateToken(), generated: true };
}

/** Whether a request's `token` field satisfies the policy. */
export function tokenAccepted(policy: TokenPolicy, given: unknown): boolean {
  if (policy.kind === "open") return true;
  if (typeof given !== "string") return false;
  const a = Buffer.from(given, "utf8");
  const b = Buffer.from(policy.token, "utf8");
  return a.length === b.length && timingSafeEqual(a, b);
}
