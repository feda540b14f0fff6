/**
 * `verify/progress` for one batch in flight, rate-limited. The service calls `serviceProgressed` after every
 * check it finishes (of any batch, any client): the trainer waits on a batch only as long as the verifier keeps
 * making progress, and a batch queued behind other batches progresses when they do. A notification goes out at
 * once after a quiet interval; changes within the interval are folded into one sent when it ends, so a client
 * hears the latest figures within one interval and never more than one notification an interval per batch.
 */
import type { VerifyProgressParams } from "../protocol/trainer";

/** The time source and timer the throttle uses (tests give a manual one). */
export interface ProgressClock {
  now(): number;
  /** Runs `run` after `ms`; the function returned cancels it. */
  after(ms: number, run: () => void): () => void;
}

export const realClock: ProgressClock = {
  now: () => performance.now(),
  after: (ms, run) => {
    const timer = setTimeout(run, ms);
    // A pending progress note must not keep a stopping process alive.
    timer.unref();
    return () => clearTimeout(timer);
  },
};

export const PROGRESS_INTERVAL_MS = 1000;

export class BatchProgress {
  private done = 0;
  private serviceDone = 0;
  private sentAt = Number.NEGATIVE_INFINITY;
  private cancelPending: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly batchId: string,
    private readonly total: number,
    private readonly send: (params: VerifyProgressParams) => void,
    private readonly intervalMs = PROGRESS_INTERVAL_MS,
    private readonly clock: ProgressClock = realClock,
  ) {}

  /** This batch's own answered items (the service then calls `serviceProgressed` too). */
  ownDone(done: number): void {
    this.done = done;
  }

  /** A check of the service finished; `serviceDone` counts every one since the service started. */
  serviceProgressed(serviceDone: number): void {
    this.serviceDone = serviceDone;
    if (this.closed || this.cancelPending) return; // the send already due carries the latest figures
    const wait = this.sentAt + this.intervalMs - this.clock.now();
    if (wait <= 0) {
      this.flush();
      return;
    }
    this.cancelPending = this.clock.after(wait, () => {
      this.cancelPending = undefined;
      this.flush();
    });
  }

  /** The batch was answered (or its client left): nothing more is sent. */
  close(): void {
    this.closed = true;
    this.cancelPending?.();
    this.cancelPending = undefined;
  }

  private flush(): void {
    if (this.closed) return;
    this.sentAt = this.clock.now();
    this.send({ batchId: this.batchId, done: this.done, total: this.total, serviceDone: this.serviceDone });
  }
}
