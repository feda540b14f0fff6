/**
 * What the extension sends the dashboard's page, and when. A run sends several messages a step (a sample each,
 * the progress, the phase); posted one by one they queued up between the extension host and the page faster
 * than a busy window delivered them (a page opened during a fast run got its full state a minute late, behind
 * thousands of deltas it had to drop, and showed "No run yet" meanwhile). So: nothing is sent to a page before
 * it asks for the full state (which includes everything so far), and after that the deltas go in one batch per
 * `intervalMs`. No `vscode` here: the page and the clock are injected, so this is unit-tested.
 */
import type { DashboardMessage, DashboardState } from "./dashboardModel";

/** The clock: `setTimeout`/`clearTimeout` in the extension, a fake one in tests. */
export interface Timers {
  set(run: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

export const BATCH_INTERVAL_MS = 200;

export class DashboardOutbox {
  private pending: DashboardMessage[] = [];
  private timer: unknown;
  private synced = false;

  constructor(
    private readonly send: (message: DashboardMessage) => void,
    private readonly timers: Timers,
    private readonly intervalMs = BATCH_INTERVAL_MS,
  ) {}

  /** A live message (already applied to the extension's state). */
  post(message: DashboardMessage): void {
    if (!this.synced) return;
    this.pending.push(message);
    this.timer ??= this.timers.set(() => this.flush(), this.intervalMs);
  }

  /** The page asked for the full state: it gets `state`, which holds every message so far, then the deltas. */
  ready(state: DashboardState): void {
    this.cancel();
    this.pending = [];
    this.send({ type: "state", state });
    this.synced = true;
  }

  /** The page is gone or loads anew (hidden, reloaded, closed): nothing goes to it until it asks again. */
  reset(): void {
    this.cancel();
    this.pending = [];
    this.synced = false;
  }

  private flush(): void {
    this.timer = undefined;
    const messages = this.pending;
    this.pending = [];
    if (messages.length === 1) this.send(messages[0]!);
    else if (messages.length > 1) this.send({ type: "batch", messages });
  }

  private cancel(): void {
    if (this.timer === undefined) return;
    this.timers.clear(this.timer);
    this.timer = undefined;
  }
}
