/** Events per second over the last N seconds, in per-second buckets (constant memory). */
export class RateWindow {
  private readonly buckets: number[];
  private readonly seconds: number[];
  private readonly born = performance.now();

  constructor(private readonly windowSeconds: number) {
    this.buckets = new Array<number>(windowSeconds).fill(0);
    this.seconds = new Array<number>(windowSeconds).fill(-1);
  }

  add(count: number, nowMs = performance.now()): void {
    const second = Math.floor(nowMs / 1000);
    const k = second % this.windowSeconds;
    if (this.seconds[k] !== second) {
      this.seconds[k] = second;
      this.buckets[k] = 0;
    }
    this.buckets[k]! += count;
  }

  /** The rate over the window, or over the time since creation when that is shorter. */
  perSecond(nowMs = performance.now()): number {
    const second = Math.floor(nowMs / 1000);
    let total = 0;
    for (let k = 0; k < this.windowSeconds; k++)
      if (this.seconds[k]! > second - this.windowSeconds) total += this.buckets[k]!;
    const span = Math.min(this.windowSeconds, Math.max(1, (nowMs - this.born) / 1000));
    return total / span;
  }
}
