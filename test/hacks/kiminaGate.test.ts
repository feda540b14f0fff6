/**
 * The kernel gate behind the Kimina backend: Kimina's server answers with messages only, so the gate runs on
 * the verifier's machine, on the check document Kimina checked (lean-bridge/kimina/verifier.ts). A proof
 * Kimina accepts is refuted when the gate refutes it (a hack: reward 0, never masked) and confirmed when it
 * confirms it; without a gate the verdict says it stands on the server's word. Against the stub in test/kimina,
 * with a scripted gate (what the gate itself decides is test/unit/kernelGate.test.ts's).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { KiminaVerifier } from "../../lean-bridge/kimina/verifier";
import type { KiminaMessage } from "../../lean-bridge/kimina/protocol";
import type { GateReport, GateRequest, KernelGateBackend } from "../../lean-bridge/verify/kernelGate";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { isKernelGateFailure, isMasked } from "../../lean-bridge/verify/verdict";
import { EXAMPLE, proofHole, readExample } from "../helpers";
import { printAxiomsLine, startStub } from "../kimina/stub";

const FILE = "FimExamples/Arith.lean";
const TEXT = readExample(FILE);
const NAME = "FimExamples.Arith.add_le_add_1";
const task = { file: FILE, hole: proofHole(TEXT, "add_le_add_1"), text: TEXT };

/** Kimina proves the candidate (`#print axioms` on its line) and fails the hole's `skip` probe. */
function answer(code: string) {
  const line = printAxiomsLine(code);
  if (/^\s*skip\s*$/m.test(code)) {
    const error: KiminaMessage = { severity: "error", pos: { line: 2, column: 0 }, data: "unsolved goals" };
    return { messages: [error] };
  }
  const info: KiminaMessage = {
    severity: "info",
    pos: { line, column: 0 },
    endPos: { line, column: 10 },
    data: `'${NAME}' depends on axioms: [propext]`,
  };
  return { messages: [info] };
}

function gate(report: (r: GateRequest) => GateReport): KernelGateBackend & { seen: GateRequest[] } {
  const seen: GateRequest[] = [];
  return {
    name: "kernel-replay",
    seen,
    run: (r) => {
      seen.push(r);
      return Promise.resolve(report(r));
    },
  };
}

test("Kimina's proofs go through the local kernel gate: refuted is a hack, confirmed names the gate", async () => {
  const stub = await startStub({ answer });
  try {
    const make = (backend?: KernelGateBackend) =>
      new KiminaVerifier({
        url: stub.url,
        projectRoot: EXAMPLE,
        timeoutMs: 1000,
        backoffMs: 5,
        maxRetries: 1,
        ...(backend
          ? { kernelGate: { backend, mode: { kind: "all" as const }, timeoutMs: 1000, concurrency: 1 } }
          : {}),
      });
    const refuting = gate(() => ({
      kind: "kernel-rejected",
      declaration: NAME,
      message: "(kernel) declaration has metavariables",
      elapsedMs: 1,
    }));
    const refuted = await make(refuting).verify(task, "omega");
    assert.ok(isKernelGateFailure(refuted), JSON.stringify(refuted));
    assert.equal(isMasked(refuted), false);
    assert.equal(rewardOf(refuted, "partial").reward, 0);
    assert.deepEqual(refuting.seen[0]?.declaration, ["FimExamples", "Arith", "add_le_add_1"]);
    assert.ok(refuting.seen[0]?.documentText.includes("#print axioms"), "the document Kimina checked");

    const confirming = gate(() => ({
      kind: "replayed",
      declaration: NAME,
      replayed: 1,
      axioms: [],
      elapsedMs: 1,
    }));
    const confirmed = await make(confirming).verify(task, "omega");
    assert.equal(
      confirmed.kind === "proved" && confirmed.confirmedBy,
      "kernel-replay",
      JSON.stringify(confirmed),
    );

    const alone = await make().verify(task, "omega");
    assert.equal(alone.kind === "proved" && alone.confirmedBy, "server", "no local Lean: Kimina's word");
  } finally {
    await stub.close();
  }
});
