/**
 * The prefix-import form on the embedded Lean (lean-bridge/verify/prefixForm.ts, prefixModules.ts): a hole deep in a
 * long file is checked against a compiled module of the declarations above it. Lean must judge every candidate
 * exactly as it judges it in the whole file: the same verdict kinds before the module is compiled (whole file) and
 * after (import form), proofs confirmed by the real kernel gate in both, and a candidate that cites the theorem
 * itself or one below it refused in both (the module holds only what stands above the hole's declaration).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Range } from "vscode-languageserver-protocol";
import { VerifierPool } from "../../lean-bridge/verify/pool";
import { isMaskedVerdict } from "../../lean-bridge/protocol/trainer";
import { announceTier, embeddedVerifier, tierTest } from "./embeddedTier";
import { copyPreludeLibrary } from "./preludeLean";

announceTier("test/real-lean/prefixForm.test.ts");

const THEOREMS = 40;

/** A workspace on the project's prelude library: one file of THEOREMS small theorems, the hole in the 31st. */
function workspace(): { root: string; hole: Range; remove: () => void } {
  const root = mkdtempSync(join(tmpdir(), "fim-prefix-form-"));
  copyPreludeLibrary(root);
  const lines = ["prelude", "import FimPrelude", "", "namespace Deep", ""];
  let hole: Range | undefined;
  for (let i = 0; i < THEOREMS; i++) {
    lines.push(`theorem step${i} (p q : Prop) (hp : p) (hq : q) : p ∧ q := by`);
    const proof = "  exact ⟨hp, hq⟩";
    if (i === 30)
      hole = {
        start: { line: lines.length, character: 2 },
        end: { line: lines.length, character: proof.length },
      };
    lines.push(proof, "");
  }
  lines.push("end Deep", "");
  writeFileSync(join(root, "Deep.lean"), lines.join("\n"));
  return { root, hole: hole!, remove: () => rmSync(root, { recursive: true, force: true }) };
}

const CANDIDATES = [
  "exact ⟨hp, hq⟩",
  "constructor\n  · exact hp\n  · exact hq",
  "exact ⟨hq, hp⟩",
  "constructor\n  · exact hp",
  "exact step29 p q hp hq",
  "exact step30 p q hp hq",
  "exact step31 p q hp hq",
  "sorry",
];

tierTest(
  "prefix form: the embedded Lean judges a deep hole as in the whole file, the kernel gate confirms",
  async () => {
    const ws = workspace();
    try {
      const verifier = (await embeddedVerifier(ws.root, {
        kernelGate: { kind: "all" },
        prefixMinDeclarations: 16,
      })) as VerifierPool;
      try {
        const prefixes = verifier.prefixes;
        assert.ok(prefixes, "the embedded Lean's pool compiles prefix modules");
        const task = { file: "Deep.lean", hole: ws.hole };
        const whole = await verifier.verifyMany(CANDIDATES.map((candidate) => ({ task, candidate })));
        await prefixes.settled();
        assert.equal(prefixes.counts.compiled, 1, JSON.stringify(prefixes.counts));
        const waited = prefixes.counts.waited;
        assert.ok(waited > 0, "the first checks took the whole file while the module compiled");
        // Fresh candidates text-wise (the verdict cache keys on the document): a trailing blank changes nothing.
        const imported = await verifier.verifyMany(
          CANDIDATES.map((candidate) => ({ task, candidate: candidate + " " })),
        );
        assert.equal(prefixes.counts.waited, waited, "every later check stood on the compiled module");
        const kinds = (vs: typeof whole) => vs.map((v) => v.kind);
        assert.deepEqual(kinds(imported), kinds(whole), JSON.stringify({ whole, imported }, null, 1));
        assert.deepEqual(kinds(whole), [
          "proved",
          "proved",
          "failed",
          "incomplete",
          "proved",
          "failed",
          "failed",
          "rejected",
        ]);
        for (const v of [...whole, ...imported]) {
          assert.equal(isMaskedVerdict(v), false, JSON.stringify(v));
          if (v.kind === "proved") assert.equal(v.confirmedBy, "kernel-replay", JSON.stringify(v));
        }
      } finally {
        await verifier.stop();
      }
    } finally {
      ws.remove();
    }
  },
);
