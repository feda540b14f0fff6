/**
 * Whether the dashboard's document started. A webview whose script never runs (its resources did not load:
 * seen after a window reload, the restored tab showing only its static text and no styles; or a document that
 * never arrived on a loaded machine) stays that way: VS Code does not retry. The script says "ready" as its
 * first act, so a visible dashboard that has not said it within `waitMs` is loaded again, a bounded number of
 * times, each wait twice the last (a slow machine's document is not cut off again and again); then the user
 * is told. No `vscode` here: the panel and the clock are injected, so this is unit-tested.
 */

import type { Timers } from "./dashboardOutbox";

export type BootTimers = Timers;

export interface BootActions {
  /** Load the document again (a fresh nonce, so VS Code does not skip it as unchanged). */
  reload(attempt: number): void;
  /** Every reload went unanswered. */
  giveUp(reloads: number): void;
}

/**
 * The first wait. A page that works says "ready" within a second or two, but a busy extension host (a fast run's
 * thousands of messages) can take many seconds to hear it; a reload then costs a working page, so the wait is
 * generous.
 */
export const BOOT_WAIT_MS = 30_000;
export const BOOT_RELOADS = 3;

export class BootWatch {
  private timer: unknown;
  private reloads = 0;

  constructor(
    private readonly actions: BootActions,
    private readonly timers: BootTimers,
    private readonly waitMs = BOOT_WAIT_MS,
    private readonly maxReloads = BOOT_RELOADS,
  ) {}

  /**
   * A document is due to start: it was (re)loaded while visible, or the panel became visible (VS Code drops a
   * hidden webview's document and loads it again when shown). Restarts the wait.
   */
  expect(): void {
    this.cancel();
    this.timer = this.timers.set(() => this.overdue(), this.waitMs * 2 ** this.reloads);
  }

  /** The script said "ready": the document runs; a later failure gets its reloads again. */
  ready(): void {
    this.cancel();
    this.reloads = 0;
  }

  /** Hidden: no document runs, none is due. */
  hidden(): void {
    this.cancel();
  }

  dispose(): void {
    this.cancel();
  }

  /** Whether a "ready" is awaited now. */
  get waiting(): boolean {
    return this.timer !== undefined;
  }

  private overdue(): void {
    this.timer = undefined;
    if (this.reloads >= this.maxReloads) {
      this.actions.giveUp(this.reloads);
      return;
    }
    this.reloads++;
    this.actions.reload(this.reloads);
  }

  private cancel(): void {
    if (this.timer === undefined) return;
    this.timers.clear(this.timer);
    this.timer = undefined;
  }
}
