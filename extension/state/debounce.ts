/**
 * Keyed debouncing for redraws: many samples or keystrokes for one file become one redraw after a quiet
 * period. The clock is injected so tests drive time by hand instead of sleeping.
 */
export interface Clock {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const realClock: Clock = {
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

export class KeyedDebouncer<K> {
  private readonly pending = new Map<K, unknown>();

  constructor(
    private readonly run: (key: K) => void,
    private readonly delayMs: number,
    private readonly clock: Clock = realClock,
  ) {}

  /** Runs `run(key)` once, `delayMs` after the last call for that key. */
  schedule(key: K): void {
    const previous = this.pending.get(key);
    if (previous !== undefined) this.clock.clearTimeout(previous);
    this.pending.set(
      key,
      this.clock.setTimeout(() => {
        this.pending.delete(key);
        this.run(key);
      }, this.delayMs),
    );
  }

  /** Runs every pending key now (e.g. when an editor becomes visible). */
  flush(): void {
    const keys = [...this.pending.keys()];
    for (const key of keys) {
      this.clock.clearTimeout(this.pending.get(key));
      this.pending.delete(key);
      this.run(key);
    }
  }

  dispose(): void {
    for (const handle of this.pending.values()) this.clock.clearTimeout(handle);
    this.pending.clear();
  }
}
