/**
 * What can cut a model call short: the caller's abort signal, or the backend's own time limit. One signal is
 * shared by every call of a run (eval's Ctrl-C), so each call must take its listener off again when it ends;
 * left on, they pile up on the signal (Node's MaxListenersExceededWarning after ten calls, and a closure
 * kept alive per call for the whole run).
 */
export interface Interruption {
  /** Settles with why the call was cut short; never settles if it was not. */
  interrupted: Promise<"aborted" | "timeout">;
  /** Takes the listener and the timer off; call it once the call has ended, however it ended. */
  dispose(): void;
}

export function interruption(signal: AbortSignal | undefined, timeoutMs: number | undefined): Interruption {
  let onAbort: (() => void) | undefined;
  let timer: NodeJS.Timeout | undefined;
  const interrupted = new Promise<"aborted" | "timeout">((resolve) => {
    if (signal?.aborted) return resolve("aborted");
    onAbort = () => resolve("aborted");
    signal?.addEventListener("abort", onAbort, { once: true });
    if (timeoutMs) timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  return {
    interrupted,
    dispose() {
      if (onAbort) signal?.removeEventListener("abort", onAbort);
      clearTimeout(timer);
    },
  };
}

/**
 * A signal of one call's own that aborts when the run's does. The openai client adds an abort listener to the
 * signal it is given at every attempt and leaves it there; given this one, they go with the call, and the run's
 * signal holds one listener per call in flight, taken off by `dispose` when the call ends.
 */
export function linkedSignal(signal: AbortSignal | undefined): { signal: AbortSignal; dispose(): void } {
  const call = new AbortController();
  if (signal?.aborted) call.abort();
  const onAbort = () => call.abort();
  signal?.addEventListener("abort", onAbort, { once: true });
  return { signal: call.signal, dispose: () => signal?.removeEventListener("abort", onAbort) };
}
