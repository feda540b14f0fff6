/**
 * One way to wait on the connection: every await on the server goes through `withDeadline`, so no wait can
 * outlive its deadline. vscode-jsonrpc's cancellation only *asks* the server to stop; it does not settle
 * the client's promise, and a write into a pipe the server no longer reads never completes. Whoever calls
 * this decides what expiry means (LeanServer kills the process group for connection-level waits).
 */
export type DeadlineResult<T> =
  { kind: "ok"; value: T } | { kind: "timeout" } | { kind: "error"; error: unknown };

/**
 * Settles with the work's value, its error, or `timeout` when `deadlineMs` passes first, whichever comes
 * first. `onExpire` runs once, synchronously, at expiry (before the result is returned).
 */
export function withDeadline<T>(
  work: Promise<T>,
  deadlineMs: number,
  onExpire?: () => void,
): Promise<DeadlineResult<T>> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (result: DeadlineResult<T>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(result);
    };
    const timer = setTimeout(
      () => {
        if (settled) return;
        onExpire?.();
        finish({ kind: "timeout" });
      },
      Math.max(0, deadlineMs),
    );
    work.then(
      (value) => finish({ kind: "ok", value }),
      (error: unknown) => finish({ kind: "error", error }),
    );
  });
}
