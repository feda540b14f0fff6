/**
 * How many connections a verifier service holds, and which one gives way. Connections are capped in total and
 * per peer address. A connection that has not yet completed its handshake holds little (a few KiB, for a few
 * seconds), so when a cap is reached the oldest such connection is closed to make room: a flood of connections
 * that never authenticate cannot lock out a client that does, which authenticates in its first round trip.
 * Only when every connection under the cap is authenticated is a new one refused.
 */

export interface ConnectionLimits {
  /** The most connections held at once. */
  maxConnections: number;
  /** The most connections held at once from one peer address. */
  maxConnectionsPerPeer: number;
  /** Time from accepting a connection to its `auth`, ms; a connection that has not authenticated by then is closed. */
  authTimeoutMs: number;
  /** Time an authenticated connection may stay without a request in flight and without a byte from its client, ms. */
  idleTimeoutMs: number;
}

/**
 * Generous for real clients: one per trainer process and service (a verl reward loop's workers, TRL's ranks),
 * each authenticating within its first round trip and sending a batch at least every training step.
 */
export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  maxConnections: 1024,
  maxConnectionsPerPeer: 256,
  authTimeoutMs: 5_000,
  idleTimeoutMs: 30 * 60_000,
};

export interface Admitted {
  readonly peer: string;
  authenticated: boolean;
}

export type Admission<T extends Admitted> =
  /** `evict`: connections to close (oldest unauthenticated first) to make room for the new one. */
  { kind: "admitted"; evict: T[] } | { kind: "refused"; why: string };

/** The connections a service holds, in the order they came; `admit` decides on a new one before it is added. */
export class ConnectionTable<T extends Admitted> {
  private readonly held = new Set<T>();

  constructor(private readonly limits: ConnectionLimits) {}

  get size(): number {
    return this.held.size;
  }

  get unauthenticated(): number {
    let n = 0;
    for (const c of this.held) if (!c.authenticated) n++;
    return n;
  }

  /** Whether `peer` may connect now, and who gives way; on admission call `add`. */
  admit(peer: string): Admission<T> {
    const evict: T[] = [];
    const fromPeer = [...this.held].filter((c) => c.peer === peer);
    if (fromPeer.length >= this.limits.maxConnectionsPerPeer) {
      const victim = fromPeer.find((c) => !c.authenticated);
      if (!victim)
        return {
          kind: "refused",
          why: `${this.limits.maxConnectionsPerPeer} authenticated connections from ${peer} are open, the most one peer may hold: close some, or share one client among the processes`,
        };
      evict.push(victim);
    }
    if (this.held.size - evict.length >= this.limits.maxConnections) {
      const victim = [...this.held].find((c) => !c.authenticated && !evict.includes(c));
      if (!victim)
        return {
          kind: "refused",
          why: `${this.limits.maxConnections} authenticated connections are open, the most this service holds: close some, or start more services`,
        };
      evict.push(victim);
    }
    return { kind: "admitted", evict };
  }

  add(connection: T): void {
    this.held.add(connection);
  }

  /** False when it was not held (already removed). */
  delete(connection: T): boolean {
    return this.held.delete(connection);
  }

  values(): T[] {
    return [...this.held];
  }
}
