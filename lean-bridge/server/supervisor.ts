/**
 * Keeps one live Lean server for the pool: hands out the current one, restarts it once when it died (all
 * callers share the same restart), and stops it. A stopped supervisor never starts a server again.
 */
import type { LeanServer, StartResult } from "./leanServer";

/** Starts a server; the signal aborts a start under way (the half-started process group is killed). */
export type StartServer = (signal: AbortSignal) => Promise<StartResult>;

export class ServerSupervisor {
  private current: LeanServer;
  private restarting: Promise<LeanServer | undefined> | undefined;
  private readonly abort = new AbortController();
  private stopping: Promise<void> | undefined;
  restarts = 0;

  constructor(
    server: LeanServer,
    /** undefined: this server cannot be restarted (an in-memory connection). */
    private readonly startServer: StartServer | undefined,
  ) {
    this.current = server;
  }

  /** The server now (alive or not): for its stderr and identity. */
  get server(): LeanServer {
    return this.current;
  }

  get stopped(): boolean {
    return this.abort.signal.aborted;
  }

  /** A live server, restarting a dead one; undefined when stopped or when the restart failed. */
  async live(): Promise<LeanServer | undefined> {
    if (this.stopped) return undefined;
    if (this.current.isAlive) return this.current;
    if (!this.startServer) return undefined;
    const start = this.startServer;
    this.restarting ??= (async () => {
      this.restarts++;
      // Whatever is left of the old server's process group (workers of a dead watchdog) goes first.
      this.current.kill("replaced by a restart");
      const started = await start(this.abort.signal);
      this.restarting = undefined;
      if (started.kind === "failed") return undefined;
      if (this.stopped) {
        // stop() came while the server was starting: it must not outlive the pool.
        started.server.kill();
        return undefined;
      }
      this.current = started.server;
      return started.server;
    })();
    return this.restarting;
  }

  /** Stops the server (and any start under way). Safe to call at any moment, any number of times. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.abort.abort();
      await Promise.all([this.current.stop(), this.restarting]);
    })();
    return this.stopping;
  }
}
