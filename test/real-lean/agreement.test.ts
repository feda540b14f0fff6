/**
 * The simulator measured against Lean: every document of the conformance set (test/fixtures/conformance) is
 * checked by the simulator and by the embedded Lean 4.35.0, both started as every command starts them, and their
 * verdicts compared by kind and partial reward. The documents where they differ must be exactly those
 * docs/LEAN_FIDELITY_SIMULATOR.md lists, with the outcomes it states: a new difference, or one fixed, fails
 * here until the document says so. The agreement is printed, and scripts/run-tests.mjs repeats it in its
 * summary. Part of the real-Lean tier: never skipped where the embedded Lean is installed, failing under CI=true
 * where it is missing.
 */
import assert from "node:assert/strict";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startVerifier } from "../../lean-bridge/verifiers/startVerifier";
import type { Verifier, VerifyTask } from "../../lean-bridge/verify/verifier";
import { REPO } from "../helpers";
import {
  conformanceWorkspace,
  holeOf,
  listedDifferences,
  outcomeOf,
  readConformanceCases,
} from "./conformance";
import {
  TIER_COUNT_VARIABLE,
  announceTier,
  embeddedVerifier,
  recordTierVersion,
  tierTest,
} from "./embeddedTier";

announceTier("test/real-lean/agreement.test.ts");

const FIDELITY_DOC = join(REPO, "docs", "LEAN_FIDELITY_SIMULATOR.md");

async function simulatorVerifier(root: string): Promise<Verifier> {
  const started = await startVerifier(root, { kind: "simulator", slots: 1, kernelGate: { kind: "off" } });
  if (started.kind !== "ok") throw new Error(`${started.message}\n${started.hint}`);
  return started.pool;
}

tierTest(
  "the simulator agrees with the embedded Lean on the conformance set, except where the docs say why",
  async () => {
    const cases = readConformanceCases();
    const ws = conformanceWorkspace();
    const texts = new Map<string, string>();
    const items = cases.map((c) => {
      const text = texts.get(c.file) ?? readFileSync(join(ws.root, c.file), "utf8");
      texts.set(c.file, text);
      const task: VerifyTask = { file: c.file, hole: holeOf(text, c) };
      return { task, candidate: c.candidate };
    });
    // The embedded Lean first: it builds the workspace's modules, which the simulator's import fingerprint, taken
    // when it starts, must already see (a module written after it is a tampered import to it).
    const lean = await embeddedVerifier(ws.root);
    const simulator = await simulatorVerifier(ws.root);
    try {
      const [bySimulator, byLean] = await Promise.all([simulator.verifyMany(items), lean.verifyMany(items)]);
      const release = /v(\d+\.\d+\.\d+)$/.exec(lean.identity.version)?.[1] ?? lean.identity.version;
      recordTierVersion(release);
      const measured = cases.map((c, k) => ({
        id: c.id,
        simulator: outcomeOf(bySimulator[k]!),
        lean: outcomeOf(byLean[k]!),
      }));
      // Neither side may have judged a document it could not check: that would compare nothing.
      for (const [k, v] of byLean.entries())
        assert.ok(
          v.kind !== "environment" && v.kind !== "crashed" && v.kind !== "timeout",
          `${cases[k]!.id}: Lean did not judge it: ${JSON.stringify(v)}`,
        );
      const differing = measured.filter((m) => m.simulator !== m.lean);
      const agreed = measured.length - differing.length;
      const line = `simulator agreement with Lean ${release}: ${agreed}/${measured.length} documents`;
      console.log(line);
      for (const m of differing) console.log(`  differs: ${m.id}: simulator ${m.simulator}, Lean ${m.lean}`);
      const countFile = process.env[TIER_COUNT_VARIABLE];
      if (countFile) appendFileSync(countFile, `agreement\t${line}\n`);

      const doc = readFileSync(FIDELITY_DOC, "utf8");
      assert.ok(doc.includes(`\n${line}\n`), `docs/LEAN_FIDELITY_SIMULATOR.md must show the line ${line}`);
      const listed = listedDifferences(doc);
      const known = new Set(cases.map((c) => c.id));
      for (const row of listed)
        assert.ok(
          known.has(row.id),
          `docs/LEAN_FIDELITY_SIMULATOR.md lists ${row.id}, no case of cases.json`,
        );
      assert.deepEqual(
        differing.map((m) => m.id).sort(),
        listed.map((row) => row.id).sort(),
        "the documents where the simulator and Lean differ must be exactly those docs/LEAN_FIDELITY_SIMULATOR.md lists",
      );
      for (const row of listed) {
        const m = differing.find((d) => d.id === row.id)!;
        assert.deepEqual(
          { simulator: row.simulator, lean: row.lean },
          { simulator: m.simulator, lean: m.lean },
          `${row.id}: the outcomes docs/LEAN_FIDELITY_SIMULATOR.md states`,
        );
      }
    } finally {
      await Promise.all([simulator.stop(), lean.stop()]);
      ws.remove();
    }
  },
);
