/**
 * npm run bench:gate — what the kernel gate costs per proved candidate, against a check, under the SIMULATOR's
 * cost model (simulator/kernelReplay.ts: the gate compiles the whole check document afresh, header and every
 * declaration, then loads the header again and re-checks the closure at SIM_KERNEL_SHARE of elaboration).
 * Every figure here is modelled with timers, not Lean's: the ratios follow from the model, which is why they are
 * given by the depth of the hole (declarations above it), what the gate's cost grows with. The costs are those
 * measured on the embedded Lean (bench/realLeanCosts.json): the server's for the checks, a fresh `lean`
 * process's for the gate's two processes. Beside them it prints what the embedded Lean's own gate cost when the
 * calibration measured it. One slot, warm (the slot already holds the hole's declaration, as in a GRPO group),
 * mode `all`.
 *
 *   node --import tsx bench/kernelGate.ts
 */
import { rmSync } from "node:fs";
import { parseFile } from "../lean-bridge/lean/commands";
import { SIM_KERNEL_SHARE, SimulatedKernelGate } from "../lean-bridge/simulator/kernelReplay";
import { resolveOracle, type OracleFile } from "../lean-bridge/simulator/reference";
import { AUTO_COST_RATIO, MIN_AUTO_SHARE } from "../lean-bridge/verify/gateStage";
import type { VerifierPool } from "../lean-bridge/verify/pool";
import { inMemory } from "../test/harness";
import { EXAMPLE, readExample } from "../test/helpers";
import { holes, statementProject, type Hole } from "./workload";
import { calibration, modelCosts, provenance } from "./realLeanCosts";

const { server, fresh } = modelCosts();

function oracleOf(root: string): { oracle?: OracleFile } {
  const found = resolveOracle(root);
  if (found.kind === "error") throw new Error(`${root}: ${found.message}`);
  return { oracle: found.resolved.oracle };
}

interface Sample {
  above: number;
  checkMs: number;
  gateMs: number;
  provedMs: number;
}

function line(label: string, value: string): void {
  process.stdout.write(`${label.padEnd(58)} ${value}\n`);
}

function declarationsAbove(h: Hole, text: string): number {
  const index = text.split("\n").slice(0, h.task.hole.start.line).join("\n").length;
  return parseFile(text).commands.filter((c) => c.declaration && c.end <= index).length;
}

/**
 * Per hole: a wrong candidate (warms the slot; no gate), a second wrong one (timed: a check), then the hole's
 * own middle (timed: a proved candidate's whole verification, the gate's run read from its counters).
 */
async function measure(pool: VerifierPool, hs: Hole[], text: (h: Hole) => string): Promise<Sample[]> {
  const out: Sample[] = [];
  for (const h of hs) {
    await pool.verify(h.task, "exact warm_up_1");
    let t0 = performance.now();
    const wrong = await pool.verify(h.task, "exact warm_up_2");
    const checkMs = performance.now() - t0;
    if (wrong.kind === "proved") throw new Error("a wrong candidate proved");
    const before = pool.kernelGate!.stats.runMs;
    t0 = performance.now();
    const v = await pool.verify(h.task, h.middle);
    const provedMs = performance.now() - t0;
    if (v.kind !== "proved" || v.confirmedBy !== "kernel-replay")
      throw new Error(`expected ${h.task.file}'s own proof confirmed by the gate: ${JSON.stringify(v)}`);
    out.push({
      above: declarationsAbove(h, text(h)),
      checkMs,
      gateMs: pool.kernelGate!.stats.runMs - before,
      provedMs,
    });
  }
  return out;
}

function report(samples: Sample[], buckets: [number, number][]): void {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
  for (const [lo, hi] of buckets) {
    const s = samples.filter((x) => x.above >= lo && x.above <= hi);
    if (s.length === 0) continue;
    const check = mean(s.map((x) => x.checkMs));
    const gate = mean(s.map((x) => x.gateMs));
    const ratio = gate / check;
    const share = ratio <= AUTO_COST_RATIO ? 1 : Math.max(MIN_AUTO_SHARE, AUTO_COST_RATIO / ratio);
    line(
      `   ${lo}-${hi === Infinity ? "" : hi} declarations above (${s.length} holes)`,
      `check ${check.toFixed(0)} ms, gate ${gate.toFixed(0)} ms: ${ratio.toFixed(1)}x a check; auto gates ${(share * 100).toFixed(0)}%`,
    );
  }
  const check = mean(samples.map((x) => x.checkMs));
  const gate = mean(samples.map((x) => x.gateMs));
  line(
    "   all holes",
    `check ${check.toFixed(0)} ms, gate ${gate.toFixed(0)} ms: ${(gate / check).toFixed(1)}x a check`,
  );
  line(
    "   a proved candidate's verification, gate included",
    `${mean(samples.map((x) => x.provedMs)).toFixed(0)} ms (check, documentSymbol, the hole's skip probe once, gate)`,
  );
}

async function main(): Promise<void> {
  const real = calibration().costs;
  process.stdout.write(
    `bench:gate — the kernel gate's cost per proved candidate, MODELLED by the simulator (timers, not Lean)\n` +
      `   costs ${provenance()}\n` +
      `   checks: the server's edit ${server.editMs} ms + ${server.declMs} ms per declaration, header ${server.headerMs} ms per worker start\n` +
      `   gate: a fresh lean's start and header ${fresh.headerMs} ms (twice), ${fresh.declMs} ms per declaration compiled,\n` +
      `   kernel re-check ${SIM_KERNEL_SHARE * 100}% of that (the model's figure); 1 slot, warm; mode all\n` +
      `   the embedded Lean's own gate, as calibrated: ${real.kernelGateMs.ms} ms at 10 declarations above,\n` +
      `   ${real.kernelGatePerDeclarationAboveMs.ms} ms more per declaration above; its check in the prefix form ${real.prefixCheckMs.ms} ms\n`,
  );
  const sim = { headerMs: server.headerMs, declMs: server.declMs, editMs: server.editMs };
  // The gate judges with the oracle the simulator's server judges with (the workspace's own fim-oracle.json), as
  // the verifier's composition root gives it (verifiers/gateConfig.ts): without it, it refutes the oracle's proofs.
  const gate = (cwd: string) => () => ({
    backend: new SimulatedKernelGate({
      cwd,
      ...oracleOf(cwd),
      headerMs: fresh.headerMs,
      declMs: fresh.declMs,
    }),
    mode: { kind: "all" as const },
    timeoutMs: 600_000,
    concurrency: 1,
  });
  process.stdout.write("\n1. Every tactic proof of the example workspace, its own proof as the candidate\n");
  const workspace = await inMemory({ ...sim }, { slots: 1, timeoutMs: 600_000, kernelGate: gate(EXAMPLE) });
  try {
    const samples = await measure(workspace.pool, holes(), (h) => readExample(h.task.file));
    report(samples, [
      [0, 4],
      [5, 14],
      [15, Infinity],
    ]);
  } finally {
    await workspace.close();
  }
  process.stdout.write(
    "\n2. One-statement files as `fim-rlvr import` writes them (nothing above the hole)\n",
  );
  const { root, hs } = statementProject(12);
  const statements = await inMemory(
    { ...sim, cwd: root },
    { slots: 1, timeoutMs: 600_000, projectRoot: root, kernelGate: gate(root) },
  );
  try {
    const { readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    report(await measure(statements.pool, hs, (h) => readFileSync(join(root, h.task.file), "utf8")), [
      [0, 0],
    ]);
  } finally {
    await statements.close();
    rmSync(root, { recursive: true, force: true });
  }
}

void main();
