/**
 * Each version-dependent behaviour, through the simulator playing that Lean (its toolchain) and the
 * verifier reading the same toolchain: module files, `lemma`, `… in` declarations, `open Classical`, the
 * sorry text, stale imports, the `defProp` linter. Lean's own answers are what the simulator models
 * (lean-bridge/simulator/leanVersion.ts names the sources); these tests hold the two sides together.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { SimulatedKernelGate } from "../../lean-bridge/simulator/kernelReplay";
import { DEFAULT_POLICY, type CandidatePolicy } from "../../lean-bridge/verify/policy";
import { inMemory } from "../harness";
import { EXAMPLE, proofHole, readExample } from "../helpers";
import { simulatedLean, sorryWarningText } from "../../lean-bridge/simulator/leanVersion";

const ARITH = readExample("FimExamples/Arith.lean");
const LOGIC = readExample("FimExamples/Logic.lean");
const PROOF = ARITH.slice(ARITH.indexOf(":= by", ARITH.indexOf("theorem add_le_add_3")) + 5)
  .split("\n\n")[0]!
  .trim();

async function verifyOn(toolchain: string, text: string, name: string, candidate = PROOF, faults = false) {
  const h = await inMemory({ toolchain, faults }, { toolchain });
  try {
    return await h.pool.verify(
      { file: "FimExamples/Arith.lean", text, hole: proofHole(text, name) },
      candidate,
    );
  } finally {
    await h.close();
  }
}

test("module files: refused before any check where Lean refuses `#print axioms` there (4.20-4.29), proved from 4.30", async () => {
  const text = `module\n\n${ARITH}`;
  const old = await verifyOn("leanprover/lean4:v4.29.1", text, "add_le_add_3");
  assert.equal(old.kind, "rejected", JSON.stringify(old));
  if (old.kind === "rejected") assert.match(old.reason, /module.*#print axioms.*4\.30/s);
  // Private by default in a module: Lean prints `_private.<Module>.0.<name>`, accepted as the declaration.
  const current = await verifyOn("leanprover/lean4:v4.30.0", text, "add_le_add_3");
  assert.equal(current.kind, "proved", JSON.stringify(current));
  // A toolchain the verifier cannot read: Lean is asked (the simulator plays the newest behaviour).
  assert.equal((await verifyOn("stable", text, "add_le_add_3")).kind, "proved");
});

test("module files on an unreadable toolchain whose Lean refuses: the verdict says why", async () => {
  // The simulator plays 4.29 while the verifier is told nothing it can read.
  const h = await inMemory({ toolchain: "leanprover/lean4:v4.29.0" }, { toolchain: "my-fork/lean4:v4.29.0" });
  try {
    const text = `module\n\n${ARITH}`;
    const v = await h.pool.verify(
      { file: "FimExamples/Arith.lean", text, hole: proofHole(text, "add_le_add_3") },
      PROOF,
    );
    assert.equal(v.kind, "environment", JSON.stringify(v));
    if (v.kind === "environment") assert.match(v.reason, /module.*refuses `#print axioms`/);
  } finally {
    await h.close();
  }
});

test("a `lemma` is verified as the `theorem` Mathlib's macro makes of it, on every version", async () => {
  const text = ARITH.replace("theorem add_le_add_3", "lemma add_le_add_3");
  for (const tc of ["leanprover/lean4:v4.24.0", "leanprover/lean4:v4.34.0"]) {
    const v = await verifyOn(tc, text, "add_le_add_3");
    assert.equal(v.kind, "proved", `${tc}: ${JSON.stringify(v)}`);
  }
});

test("`set_option … in` declarations: documentSymbol does not list them, foldingRange confirms their end", async () => {
  const text = ARITH.replace(
    "theorem add_le_add_3",
    "set_option maxHeartbeats 400000 in\ntheorem add_le_add_3",
  );
  const v = await verifyOn("leanprover/lean4:v4.34.0", text, "add_le_add_3");
  assert.equal(v.kind, "proved", JSON.stringify(v));
  const wrong = await verifyOn("leanprover/lean4:v4.34.0", text, "add_le_add_3", "skip");
  assert.notEqual(wrong.kind, "proved");
});

test("the sorry warning is each version's own text, never naming the declaration", () => {
  assert.equal(sorryWarningText(simulatedLean("leanprover/lean4:v4.23.0")), "declaration uses 'sorry'");
  assert.equal(sorryWarningText(simulatedLean("leanprover/lean4:v4.24.0")), "declaration uses `sorry`");
  assert.equal(sorryWarningText(simulatedLean("leanprover/lean4:v4.35.0-rc1")), "declaration uses `sorry`");
});

test("stale imports (sticky 'should be rebuilt' information) give environment; the candidate cannot write it", async () => {
  const text = `-- sim:stale-deps\n${ARITH}`;
  const v = await verifyOn("leanprover/lean4:v4.34.0", text, "add_le_add_3", PROOF, true);
  assert.equal(v.kind, "environment", JSON.stringify(v));
  if (v.kind === "environment") assert.match(v.reason, /should be rebuilt/);
});

test("renamed Prop examples: the defProp warning is silenced where the option exists, never set where it does not", async () => {
  const exampleAt = LOGIC.lastIndexOf("\nexample") + 1;
  const example = LOGIC.slice(exampleAt, LOGIC.indexOf("\n\n", exampleAt));
  const body = example.slice(example.indexOf(":= by") + 5).trim();
  const hole = (text: string) => {
    const at = text.lastIndexOf(body);
    const before = text.slice(0, at).split("\n");
    const end = text.slice(0, at + body.length).split("\n");
    return {
      start: { line: before.length - 1, character: before.at(-1)!.length },
      end: { line: end.length - 1, character: end.at(-1)!.length },
    };
  };
  for (const tc of ["leanprover/lean4:v4.30.0", "leanprover/lean4:v4.32.0"]) {
    const h = await inMemory({ toolchain: tc }, { toolchain: tc });
    try {
      const v = await h.pool.verify({ file: "FimExamples/Logic.lean", text: LOGIC, hole: hole(LOGIC) }, body);
      assert.equal(v.kind, "proved", `${tc}: ${JSON.stringify(v)}`);
      assert.ok(
        !v.diagnostics.some((d) => /is a proposition/.test(d.message)),
        `${tc}: no defProp warning reaches the verdict`,
      );
    } finally {
      await h.close();
    }
  }
});

// Lean 4.35 removed the legacy native axioms (lean4#14953): from then on every native computation is the
// declaration's own `X._native.<tactic>.ax_…` axiom (since 4.29, lean4#12217), and an axiom named
// `Lean.ofReduceBool` can only be one the document declared. docs/LEAN_VERSIONS.md gives the sources.
const NATIVE_FILE = `axiom Lean.ofReduceBool : False

theorem own : 2 ^ 10 = 1024 := by
  decide

theorem posing : 2 ^ 10 = 1025 := by
  decide
`;
const NATIVE_ORACLE = {
  alternatives: { own: ["by native_decide"], posing: ["by exact Lean.ofReduceBool.elim"] },
};

async function nativeOn(
  toolchain: string,
  name: string,
  candidate: string,
  loosen: Partial<CandidatePolicy> = {},
) {
  const policy: CandidatePolicy = { ...DEFAULT_POLICY, allowNative: true, ...loosen };
  const kernelGate = () => ({
    backend: new SimulatedKernelGate({ cwd: EXAMPLE, toolchain, oracle: NATIVE_ORACLE }),
    mode: { kind: "all" as const },
    timeoutMs: 10_000,
    concurrency: 1,
  });
  const h = await inMemory({ toolchain, oracle: NATIVE_ORACLE }, { toolchain, policy, kernelGate });
  try {
    return await h.pool.verify(
      { file: "Native.lean", text: NATIVE_FILE, hole: proofHole(NATIVE_FILE, name) },
      candidate,
    );
  } finally {
    await h.close();
  }
}

test("native computation by version: legacy axioms before 4.29, the declaration's own from then, and in 4.35 and 4.36; allowNative accepts each and the kernel gate confirms it", async () => {
  const expected: [string, string[]][] = [
    ["leanprover/lean4:v4.28.0", ["Lean.ofReduceBool", "Lean.trustCompiler"]],
    ["leanprover/lean4:v4.35.0", ["own._native.native_decide.ax_1_1"]],
    ["leanprover/lean4:v4.36.0", ["own._native.native_decide.ax_1_1"]],
  ];
  for (const [toolchain, axioms] of expected) {
    const v = await nativeOn(toolchain, "own", "native_decide");
    assert.equal(v.kind, "proved", `${toolchain}: ${JSON.stringify(v)}`);
    if (v.kind !== "proved") continue;
    assert.deepEqual(v.axioms, axioms, toolchain);
    assert.equal(v.confirmedBy, "kernel-replay", toolchain);
  }
  assert.equal(simulatedLean("leanprover/lean4:v4.36.0").legacyNativeRemoved, true);
  assert.equal(simulatedLean("leanprover/lean4:v4.34.1").legacyNativeRemoved, false);
});

test("from 4.35 an axiom named Lean.ofReduceBool is the document's own: allowNative does not take it for compiled code", async () => {
  // The default policy refuses `Lean.…` names outright; with that rule off, the axiom check is what refuses.
  const v = await nativeOn("leanprover/lean4:v4.36.0", "posing", "exact Lean.ofReduceBool.elim", {
    codeNamespaces: [],
  });
  assert.equal(v.kind, "rejected", JSON.stringify(v));
  if (v.kind === "rejected") assert.match(v.reason, /Lean\.ofReduceBool.*(does not provide|declared)/);
  const refused = await nativeOn("leanprover/lean4:v4.36.0", "posing", "exact Lean.ofReduceBool.elim");
  assert.equal(refused.kind === "rejected" && refused.rule, "code-execution", JSON.stringify(refused));
});
