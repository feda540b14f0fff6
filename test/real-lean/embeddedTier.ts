/**
 * The real-Lean tier on the embedded Lean 4.35.0: its gate, its tests' registration (each one counted, so that
 * scripts/run-tests.mjs prints how many ran and how many were skipped), and a fresh copy of the prelude fixture
 * workspace (test/fixtures/prelude-workspace) for each test that builds or verifies, since building writes .lake/.
 */
import { appendFileSync, cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestContext } from "node:test";
import { startVerifier, type VerifierSpec } from "../../lean-bridge/verifiers/startVerifier";
import type { Verifier } from "../../lean-bridge/verify/verifier";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import { REPO } from "../helpers";
import { announce, processEmbeddedGate, realLeanTest } from "./gate";

/** Set by scripts/run-tests.mjs: the file each tier test appends `run` or `skip` and its name to. */
export const TIER_COUNT_VARIABLE = "FIM_REAL_LEAN_TIER_COUNT";

export const PRELUDE_FIXTURE = join(REPO, "test", "fixtures", "prelude-workspace");

export const EMBEDDED_GATE = processEmbeddedGate();

/** Counts one test into the tier's line: for tier files that declare their tests themselves (prelude.test.ts). */
export function countTierTest(what: "run" | "skip", name: string): void {
  count(what, name);
}

function count(what: "run" | "skip", name: string): void {
  const file = process.env[TIER_COUNT_VARIABLE];
  if (file) appendFileSync(file, `${what}\t${name.replace(/\s+/g, " ")}\n`);
}

/** Records the Lean release the tier ran on, for the summary line of scripts/run-tests.mjs. */
export function recordTierVersion(release: string): void {
  const file = process.env[TIER_COUNT_VARIABLE];
  if (file) appendFileSync(file, `version\t${release}\n`);
}

/** Says once per file why its tests are skipped or failing. */
export function announceTier(file: string): void {
  announce(file, EMBEDDED_GATE);
}

/** A test of the tier: skipped (and counted so) only where the gate says skip, failing where Lean is missing on CI. */
export function tierTest(name: string, body: (t: TestContext) => Promise<void>): void {
  if (EMBEDDED_GATE.kind === "skip") count("skip", name);
  // Where the embedded Lean was required but is missing, the test runs only to fail: it counts as run.
  if (EMBEDDED_GATE.kind === "missing") count("run", name);
  realLeanTest(name, EMBEDDED_GATE, async (t) => {
    // A test that skips itself (no bubblewrap here) counts as skipped, not run.
    let skipped = false;
    const counted = new Proxy(t, {
      get(target, prop) {
        if (prop === "skip")
          return (message?: string) => {
            skipped = true;
            target.skip(message);
          };
        const value: unknown = Reflect.get(target, prop);
        return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    try {
      await body(counted);
    } finally {
      count(skipped ? "skip" : "run", name);
    }
  });
}

/** A copy of the fixture workspace in a temporary folder, removed by the returned function. */
export function freshWorkspace(): { root: string; remove: () => void } {
  const root = mkdtempSync(join(tmpdir(), "fim-prelude-ws-"));
  // Only the sources: a build or a check run in the fixture itself (README's example) leaves .lake/ and .fim-rlvr/.
  cpSync(PRELUDE_FIXTURE, root, {
    recursive: true,
    filter: (source) => !/[\\/]\.(lake|fim-rlvr)([\\/]|$)/.test(source.slice(PRELUDE_FIXTURE.length)),
  });
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

/**
 * The verifier as every command builds it, asked for the embedded Lean, with the kernel gate on every proof
 * (`all`) unless the test asks otherwise: every proof the tier pays is one the real kernel confirmed. Where the
 * gate is on, a `proved` verdict that does not say `confirmedBy: "kernel-replay"` throws, so no tier test can
 * pass on the server's word alone.
 */
export async function embeddedVerifier(root: string, spec: Partial<VerifierSpec> = {}): Promise<Verifier> {
  const full = {
    kind: "lean",
    lean: "embedded",
    slots: 1,
    timeoutMs: 60_000,
    sandbox: false,
    kernelGate: { kind: "all" },
    ...spec,
  } as VerifierSpec;
  const started = await startVerifier(root, full);
  if (started.kind !== "ok") throw new Error(`${started.message}\n${started.hint}`);
  const pool = started.pool;
  if (full.kind !== "lean" || full.kernelGate?.kind !== "all") return pool;
  const confirmed = (v: Verdict): Verdict => {
    if (v.kind === "proved" && v.confirmedBy !== "kernel-replay")
      throw new Error(
        `a proof the tier would pay was not confirmed by the kernel gate: ${JSON.stringify(v)}`,
      );
    return v;
  };
  const verify = pool.verify.bind(pool);
  const verifyMany = pool.verifyMany.bind(pool);
  pool.verify = async (task, candidate) => confirmed(await verify(task, candidate));
  pool.verifyMany = async (items, onProgress, signal) =>
    (await verifyMany(items, onProgress, signal)).map(confirmed);
  return pool;
}
