/**
 * Verdicts already computed, and checks under way: identical checks (duplicates in a GRPO group) cost one
 * check. Bounded in bytes (lru-cache with maxSize + sizeCalculation), not in entries, because a verdict's
 * size is dominated by its diagnostics, which vary by orders of magnitude.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Range } from "vscode-languageserver-protocol";
import type { VerdictOutcome, VerifierIdentity } from "./verdict";

/** 64 MiB of verdicts by default: ~100k typical verdicts. */
export const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024;

/**
 * Outcomes that depend on this run as well as on the candidate: a timeout on the machine's load and the limit,
 * a crash on the worker, `environment` on the workspace's state. Checking again may give a different answer, so
 * they are never cached and the next identical check runs afresh. Not caching changes nothing about whose fault
 * an outcome is: a timeout or crash whose cause is the candidate is the candidate's failure (reward 0, not
 * masked: verdict.ts `isMasked`, the trainer's core/outcomes.py, where only the comparison setting
 * `timeout_reward: mask` masks it); `environment` and the infrastructure's timeouts and crashes are masked.
 */
const NEVER_CACHED: ReadonlySet<string> = new Set(["timeout", "crashed", "environment"]);

export function isCacheable(outcome: VerdictOutcome): boolean {
  return !NEVER_CACHED.has(outcome.kind);
}

/** Everything that can change a verdict. A field left out here would let one setting's verdict answer for another. */
export interface VerdictKeyParts {
  identity: VerifierIdentity;
  /** The verifier's settings that change verdicts (policy, allowed axioms, …), as plain JSON-able data. */
  settings: unknown;
  file: string;
  hole: Range;
  /** The exact document Lean checks (it holds the candidate). */
  documentText: string;
}

export function verdictKey(parts: VerdictKeyParts): string {
  const h = parts.hole;
  return createHash("sha256")
    .update(
      JSON.stringify([
        parts.identity.kind,
        parts.identity.version,
        parts.settings,
        parts.file,
        [h.start.line, h.start.character, h.end.line, h.end.character],
      ]),
    )
    .update("\0")
    .update(parts.documentText)
    .digest("hex");
}

/** An approximation of an outcome's heap size: its JSON in UTF-16, plus the key. */
function sizeOf(outcome: VerdictOutcome, key: string): number {
  return 2 * (JSON.stringify(outcome).length + key.length) + 64;
}

export class VerdictCache {
  private readonly done: LRUCache<string, VerdictOutcome>;
  private readonly inflight = new Map<string, Promise<VerdictOutcome>>();

  constructor(maxBytes = DEFAULT_CACHE_BYTES) {
    this.done = new LRUCache<string, VerdictOutcome>({
      maxSize: Math.max(1024, maxBytes),
      sizeCalculation: sizeOf,
    });
  }

  /**
   * The outcome for `key`: from the cache, from the identical check already under way, or by running
   * `check` (whose outcome is kept when cacheable).
   */
  async getOrCheck(
    key: string,
    check: () => Promise<VerdictOutcome>,
  ): Promise<{ outcome: VerdictOutcome; cached: boolean }> {
    const hit = this.done.get(key);
    if (hit) return { outcome: hit, cached: true };
    const pending = this.inflight.get(key);
    if (pending) return { outcome: await pending, cached: true };
    const running = check().then((outcome) => {
      if (isCacheable(outcome)) this.done.set(key, outcome);
      return outcome;
    });
    this.inflight.set(key, running);
    try {
      return { outcome: await running, cached: false };
    } finally {
      this.inflight.delete(key);
    }
  }

  get size(): number {
    return this.done.size;
  }

  get bytes(): number {
    return this.done.calculatedSize;
  }
}
