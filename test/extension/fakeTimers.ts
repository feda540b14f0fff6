/** A clock the test advances by hand, for the extension's parts that take their timers (outbox, boot watch). */
import type { Timers } from "../../extension/state/dashboardOutbox";

export interface FakeTimers extends Timers {
  /** Moves time on by `ms`, running what falls due, earliest first. */
  advance(ms: number): void;
  /** Timers set and neither run nor cleared. */
  pending(): number;
}

export function fakeTimers(): FakeTimers {
  let now = 0;
  let next = 0;
  const due = new Map<number, { at: number; run: () => void }>();
  return {
    set(run, ms) {
      due.set(++next, { at: now + ms, run });
      return next;
    },
    clear(handle) {
      due.delete(handle as number);
    },
    advance(ms) {
      now += ms;
      for (const [handle, { at, run }] of [...due].sort((a, b) => a[1].at - b[1].at))
        if (at <= now && due.delete(handle)) run();
    },
    pending: () => due.size,
  };
}
