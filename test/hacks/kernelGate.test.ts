/**
 * The kernel gate against its class of attacks (kernelGate.cases.ts), through the lean-like server and the
 * simulator, each in the worst case for the verifier: the server proves every attack (the lean-like server's
 * model of tactics closes the goal with `exact …`; the simulator is given each attack as an accepted proof),
 * so what stands between the attack and a reward is the gate, the simulator's model of it
 * (simulator/kernelReplay.ts), which reads the document as Lean would. Every attack must be refuted by the gate
 * (rule kernel-replay-failed: reward 0, never masked) and every control proved and confirmed by it; without
 * the gate the same attacks are paid, which is what shows the gate is the one catching them.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { parseFile } from "../../lean-bridge/lean/commands";
import { LineIndex } from "../../lean-bridge/text/positions";
import { SimulatedKernelGate } from "../../lean-bridge/simulator/kernelReplay";
import type { OracleFile } from "../../lean-bridge/simulator/reference";
import { reindent } from "../../lean-bridge/verify/placeCandidate";
import type { KernelGateConfig } from "../../lean-bridge/verify/gateStage";
import { DEFAULT_POLICY, type CandidatePolicy } from "../../lean-bridge/verify/policy";
import type { VerifierPool } from "../../lean-bridge/verify/pool";
import { KERNEL_GATE_RULE, isKernelGateFailure, type Verdict } from "../../lean-bridge/verify/verdict";
import { inMemory, poolOver } from "../harness";
import { EXAMPLE } from "../helpers";
import { unrewarded } from "./fileCases";
import { GATE_FILE, gateCases, revealHidden, type GateCase } from "./kernelGate.cases";
import { leanLike } from "./leanLike";

const FILE = "FimExamples/Gate.lean";
const CASES = gateCases();

/**
 * What the test doubles accept as proofs: each case's body with its candidate in the hole, as the lexer reads
 * it and as Lean does (the gate's compile reads the revealed text), plus the earlier lemma's own proof.
 */
function oracle(): OracleFile {
  const index = new LineIndex(GATE_FILE);
  const alternatives: Record<string, string[]> = { "G.lemma1": ["by\n  simp"] };
  for (const c of CASES) {
    const start = index.offsetAt(c.hole.start);
    const placed = reindent(c.candidate, c.hole.start.character).text;
    const filled = GATE_FILE.slice(0, start) + placed + GATE_FILE.slice(index.offsetAt(c.hole.end));
    for (const text of [filled, revealHidden(filled)]) {
      const decl = parseFile(text)
        .commands.map((k) => k.declaration)
        .find((d) => d && d.start <= start && start < d.end);
      assert.ok(decl?.fullName && decl.bodyStart !== undefined, `${c.name}: no declaration around the hole`);
      (alternatives[decl.fullName] ??= []).push(text.slice(decl.bodyStart, decl.end));
    }
  }
  return { alternatives };
}

function gate(): () => KernelGateConfig {
  return () => ({
    backend: new SimulatedKernelGate({ cwd: EXAMPLE, oracle: oracle(), leanReads: revealHidden }),
    mode: { kind: "all" },
    timeoutMs: 10_000,
    concurrency: 1,
  });
}

function judge(v: Verdict, c: GateCase, where: string): void {
  const label = `${where}: ${c.name}`;
  if (c.proved) {
    assert.equal(v.kind, "proved", `${label}: ${JSON.stringify(v)}`);
    if (v.kind === "proved") assert.equal(v.confirmedBy, "kernel-replay", label);
    return;
  }
  unrewarded(v, label);
  assert.ok(isKernelGateFailure(v), `${label}: the gate must be what refutes it: ${JSON.stringify(v)}`);
}

const byPolicy = (cases: GateCase[]) => {
  const groups = new Map<CandidatePolicy, GateCase[]>();
  for (const c of cases) {
    const p = c.policy ?? DEFAULT_POLICY;
    groups.set(p, [...(groups.get(p) ?? []), c]);
  }
  return groups;
};

async function runCases(pool: VerifierPool, cases: GateCase[], where: string): Promise<Verdict[]> {
  const verdicts: Verdict[] = [];
  for (const c of cases) {
    const v = await pool.verify({ file: FILE, text: GATE_FILE, hole: c.hole }, c.candidate);
    judge(v, c, where);
    verdicts.push(v);
  }
  return verdicts;
}

test("through the lean-like server: every attack is refuted by the gate, the controls are confirmed by it", async () => {
  const lean = await leanLike({ leanReads: revealHidden });
  try {
    for (const [policy, cases] of byPolicy(CASES)) {
      const pool = poolOver(lean.server, { policy, kernelGate: gate() });
      await runCases(pool, cases, "lean-like");
      assert.equal(pool.kernelGate?.stats.refuted, cases.filter((c) => !c.proved).length);
    }
  } finally {
    await lean.close();
  }
});

test("through the simulator: every attack is refuted by the gate, the controls are confirmed by it", async () => {
  for (const [policy, cases] of byPolicy(CASES)) {
    const h = await inMemory({ oracle: oracle() }, { policy, kernelGate: gate() });
    try {
      await runCases(h.pool, cases, "simulator");
    } finally {
      await h.close();
    }
  }
});

test("without the gate the same attacks are paid: the gate is what catches them", async () => {
  const lean = await leanLike({ leanReads: revealHidden });
  try {
    for (const [policy, cases] of byPolicy(CASES)) {
      const pool = poolOver(lean.server, { policy });
      for (const c of cases.filter((k) => !k.proved)) {
        const v = await pool.verify({ file: FILE, text: GATE_FILE, hole: c.hole }, c.candidate);
        assert.equal(v.kind, "proved", `${c.name} (no gate): ${JSON.stringify(v)}`);
        if (v.kind === "proved") assert.equal(v.confirmedBy, "server");
      }
    }
  } finally {
    await lean.close();
  }
});

test("a gate refutation says which declaration or axiom, under the gate's rule", async () => {
  const lean = await leanLike({ leanReads: revealHidden });
  try {
    const pool = poolOver(lean.server, { kernelGate: gate() });
    const byName = (name: string) => CASES.find((c) => c.name.startsWith(name))!;
    const task = (c: GateCase) => ({ file: FILE, text: GATE_FILE, hole: c.hole });
    const unchecked = await pool.verify(
      task(byName("a declaration a command above")),
      byName("a declaration a command above").candidate,
    );
    assert.ok(unchecked.kind === "rejected" && unchecked.rule === KERNEL_GATE_RULE);
    if (unchecked.kind === "rejected") assert.match(unchecked.reason, /unchecked.*without the kernel/);
    const axiom = await pool.verify(task(byName("a document-level axiom")), "exact cheat.elim");
    if (axiom.kind === "rejected")
      assert.match(axiom.reason, /axiom 'G\.cheat', declared in the checked document/);
    else assert.fail(JSON.stringify(axiom));
  } finally {
    await lean.close();
  }
});

test("a gate that runs out of time or dies on a proof refutes it, never masks it (a candidate could cause either)", async () => {
  for (const marker of ["sim:gate-hang", "sim:gate-crash"]) {
    const text = GATE_FILE.replace("theorem target", `-- ${marker}\ntheorem target`);
    const lean = await leanLike();
    try {
      const pool = poolOver(lean.server, {
        kernelGate: () => ({
          backend: new SimulatedKernelGate({ cwd: EXAMPLE, oracle: oracle(), faults: true }),
          mode: { kind: "all" },
          timeoutMs: 300,
          concurrency: 1,
        }),
      });
      const c = CASES[0]!;
      const hole = {
        ...c.hole,
        start: { ...c.hole.start, line: c.hole.start.line + 1 },
        end: { ...c.hole.end, line: c.hole.end.line + 1 },
      };
      const v = await pool.verify({ file: FILE, text, hole }, c.candidate);
      unrewarded(v, marker);
      assert.ok(isKernelGateFailure(v), `${marker}: ${JSON.stringify(v)}`);
      if (v.kind === "rejected") assert.match(v.reason, marker === "sim:gate-hang" ? /300 ms/ : /died/);
    } finally {
      await lean.close();
    }
  }
});
