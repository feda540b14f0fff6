import { test } from "node:test";
import assert from "node:assert/strict";
import { parseFile } from "../../lean-bridge/lean/commands";
import { LineIndex } from "../../lean-bridge/text/positions";
import { buildCheckDocument, locateHole } from "../../lean-bridge/verify/checkDocument";
import { classify, parseAxioms } from "../../lean-bridge/verify/classify";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import type { LeanDiagnostic } from "../../lean-bridge/protocol/lean";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import { proofHole, realPayloads } from "../helpers";

const FILE = "theorem early : 1 = 1 := by\n  rfl\n\ntheorem t (a : Nat) : a = a := by\n  skip\n  rfl\n";

function doc(candidate = "skip\n  rfl") {
  const parsed = parseFile(FILE);
  const located = locateHole(parsed, new LineIndex(FILE), proofHole(FILE, "t"));
  if (located.kind !== "ok") throw new Error("bad hole");
  const built = buildCheckDocument(parsed, located.hole, candidate);
  if (built.kind !== "ok") throw new Error("bad doc");
  return built.doc;
}

const at = (line: number, character: number, endChar = character + 1) => ({
  start: { line, character },
  end: { line, character: endChar },
});
const axiomsInfo = (message: string): LeanDiagnostic => ({ range: at(7, 0, 20), severity: 3, message });

test("axiom lists are read even when Lean wraps them over lines", () => {
  assert.deepEqual(parseAxioms("'x' depends on axioms: [propext,\n Classical.choice,\n Quot.sound]"), [
    "propext",
    "Classical.choice",
    "Quot.sound",
  ]);
  assert.deepEqual(parseAxioms("'x' does not depend on any axioms"), []);
  assert.deepEqual(
    parseAxioms("'A.add_zero'' depends on axioms: [propext]"),
    ["propext"],
    "a name with a prime",
  );
  assert.deepEqual(parseAxioms("'A.two_mul'' does not depend on any axioms"), []);
  assert.equal(parseAxioms("something else"), undefined);
});

test("clean diagnostics with allowed axioms prove; sorryAx or foreign axioms do not", () => {
  const d = doc();
  assert.equal(classify(d, [axiomsInfo("'t' depends on axioms: [propext]")], false).kind, "proved");
  assert.equal(classify(d, [axiomsInfo("'t' depends on axioms: [sorryAx]")], false).kind, "incomplete");
  const foreign = classify(d, [axiomsInfo("'t' depends on axioms: [Lean.ofReduceBool]")], false);
  assert.equal(foreign.kind, "failed");
  assert.equal(classify(d, [], false).kind, "failed", "no #print axioms output is not a proof");
  const checked = classify(d, [axiomsInfo("'t' does not depend on any axioms")], false);
  assert.equal(checked.kind === "proved" && checked.axiomsChecked, true);
});

test("errors before the declaration are ignored; errors in it fail with candidate-relative ranges", () => {
  const d = doc();
  const before: LeanDiagnostic = { range: at(1, 2), severity: 1, message: "boom" };
  assert.equal(classify(d, [before, axiomsInfo("'t' does not depend on any axioms")], false).kind, "proved");
  const inCandidate: LeanDiagnostic = { range: at(5, 2, 5), severity: 1, message: "Type mismatch" };
  const r = classify(d, [inCandidate], false);
  assert.equal(r.kind, "failed");
  // The candidate keeps its own layout ("skip\n  rfl"), so `rfl` sits at character 2 of its line 1.
  assert.deepEqual(r.diagnostics[0]?.candidateRange, {
    start: { line: 1, character: 2 },
    end: { line: 1, character: 5 },
  });
});

test("the real Lean payloads classify as Lean meant them", () => {
  const [incremental] = realPayloads();
  const d = doc();
  // The first real payload holds an unsolved-goals error (leanTags [1]) and a tactic error.
  const unsolvedOnly = incremental!.diagnostics
    .filter((x) => x.leanTags?.includes(1))
    .map((x) => ({ ...x, range: at(3, 25), fullRange: at(5, 5) }));
  const r = classify(d, unsolvedOnly, false);
  assert.equal(r.kind, "incomplete");
  if (r.kind === "incomplete") assert.equal(r.goalsLeft, 1);
  const both = incremental!.diagnostics.map((x) => ({ ...x, range: at(4, 2) }));
  assert.equal(classify(d, both, false).kind, "failed");
  const sorry: LeanDiagnostic = { range: at(3, 8, 9), severity: 2, message: "declaration uses 'sorry'" };
  assert.equal(classify(d, [sorry], false).kind, "incomplete");
  assert.equal(classify(d, [{ ...sorry, message: "declaration uses `sorry`" }], false).kind, "incomplete");
});

test("rewards: binary by default; partial follows diagnostics, not length", () => {
  const base = { elapsedMs: 1, verifier: { kind: "simulator" as const, version: "x", label: "simulator" } };
  const proved: Verdict = { ...base, kind: "proved", axioms: [], axiomsChecked: true, diagnostics: [] };
  const failedAt = (line: number): Verdict => ({
    ...base,
    kind: "failed",
    reason: "x",
    diagnostics: [{ severity: 1, message: "e", range: at(0, 0), candidateRange: at(line, 0) }],
  });
  assert.equal(rewardOf(proved).reward, 1);
  assert.equal(rewardOf(failedAt(3)).reward, 0);
  assert.ok(rewardOf(failedAt(3), "partial", 4).reward > rewardOf(failedAt(0), "partial", 4).reward);
  // Padding the candidate with more lines after the error does not raise the reward.
  assert.ok(rewardOf(failedAt(3), "partial", 40).reward <= rewardOf(failedAt(3), "partial", 4).reward);
  assert.ok(rewardOf(failedAt(3), "partial", 4).reward < 0.5);
});

test("anonymous declarations prove without an axiom check, and the verdict says so", () => {
  const text = "example (a : Nat) : a = a := by\n  rfl\n";
  const parsed = parseFile(text);
  const located = locateHole(parsed, new LineIndex(text), {
    start: { line: 1, character: 2 },
    end: { line: 1, character: 5 },
  });
  if (located.kind !== "ok") throw new Error("bad hole");
  const built = buildCheckDocument(parsed, located.hole, "rfl");
  if (built.kind !== "ok") throw new Error("bad doc");
  assert.equal(built.doc.axiomsLine, -1);
  assert.doesNotMatch(built.doc.text, /#print axioms/);
  const r = classify(built.doc, [], false);
  assert.equal(r.kind, "proved");
  assert.equal(r.kind === "proved" && r.axiomsChecked, false);
});
