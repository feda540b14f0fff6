/**
 * Ctrl-C for commands that run a verifier: the first SIGINT (or SIGTERM) stops the pool, which kills the
 * server's process group, runs the command's own cleanup (e.g. discarding a half-written output file),
 * and exits 130 as shells expect. A second Ctrl-C exits at once.
 */
import type { Verifier as VerifierPool } from "../verify/verifier";

export interface InterruptGuard {
  /** Whether a signal arrived: checks still in flight then end as "crashed", which is not a result to print. */
  readonly interrupted: boolean;
  /** Removes the signal handlers (when the command is done). */
  release(): void;
}

export function stopOnInterrupt(
  command: string,
  pool: VerifierPool,
  cleanup: () => void = () => {},
): InterruptGuard {
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) process.exit(130);
    interrupted = true;
    process.stderr.write(
      `\n${command}: ${signal === "SIGINT" ? "interrupted" : "terminated"}; stopping the verifier\n`,
    );
    cleanup();
    void pool.stop().finally(() => process.exit(130));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    get interrupted() {
      return interrupted;
    },
    release() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
