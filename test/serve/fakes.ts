/** Stand-ins for the pool behind a service, whose checks finish exactly when a test says so. */
import type { VerifyTask } from "../../lean-bridge/verify/verifier";
import type { Verdict, VerifierIdentity } from "../../lean-bridge/verify/verdict";
import type { ServiceVerifier } from "../../lean-bridge/serve/service";

export const FAKE_IDENTITY: VerifierIdentity = {
  kind: "simulator",
  version: "test",
  label: "fake verifier (not Lean)",
};

export interface Deferred {
  promise: Promise<void>;
  resolve(): void;
}

export function deferred(): Deferred {
  let resolve: () => void = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/**
 * A verifier that proves the candidate "ok" and fails anything else. A candidate starting with "slow" waits
 * for `gate`; every received item is recorded (hole key and candidate), and `received` fires on each batch.
 */
export class GatedVerifier implements ServiceVerifier {
  readonly identity = FAKE_IDENTITY;
  readonly stats = { cacheHits: 0, restarts: 0 };
  readonly slotCount = 2;
  readonly seen: { file: string; line: number; candidate: string }[] = [];
  gate = deferred();
  private waiters: (() => void)[] = [];

  /** Resolves once at least `n` items have been received. */
  receivedAtLeast(n: number): Promise<void> {
    if (this.seen.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push(() => this.seen.length >= n && resolve()));
  }

  async verifyMany(items: readonly { task: VerifyTask; candidate: string }[]): Promise<Verdict[]> {
    for (const item of items)
      this.seen.push({ file: item.task.file, line: item.task.hole.start.line, candidate: item.candidate });
    for (const w of this.waiters) w();
    if (items.some((i) => i.candidate.startsWith("slow"))) await this.gate.promise;
    return items.map(({ candidate }): Verdict =>
      candidate === "ok" || candidate === "slow ok"
        ? {
            kind: "proved",
            axioms: [],
            axiomsChecked: true,
            diagnostics: [],
            elapsedMs: 1,
            verifier: this.identity,
          }
        : { kind: "failed", reason: "not ok", diagnostics: [], elapsedMs: 1, verifier: this.identity },
    );
  }
}

/** An item for a hole on line `line` of a file that need not exist (the fake verifier never reads it). */
export function holeItem(line: number, candidate: string, file = "F.lean") {
  return {
    file,
    hole: { start: { line, character: 2 }, end: { line, character: 7 } },
    candidate,
  };
}
