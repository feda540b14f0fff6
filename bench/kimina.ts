/**
 * npm run bench:kimina — what switching the verifier to a Kimina Lean Server costs: checks/s on the same
 * whole-proof tasks (the example workspace's tactic proofs, GRPO groups of 8) through Kimina's protocol
 * (`--verifier kimina:URL`: KiminaVerifier, HTTP batches to the stub in test/kimina/stub.ts) and through our
 * pool on the Lean server SIMULATOR. Both costs are simulated (timers), not Lean's: a declaration costs
 * DECL_MS to elaborate and a header HEADER_MS to load, on either side. Kimina, as it is built, keeps each
 * REPL's imports but elaborates every check document from the top (every declaration above the hole's, then
 * the hole's); the pool keeps one warm document per slot and re-elaborates only the edited declaration.
 */
import { rmSync } from "node:fs";
import { cpus } from "node:os";
import { parseFile } from "../lean-bridge/lean/commands";
import { KiminaVerifier } from "../lean-bridge/kimina/verifier";
import { simulatorCommand } from "../lean-bridge/server/launch";
import type { Verdict } from "../lean-bridge/verify/verdict";
import type { Verifier } from "../lean-bridge/verify/verifier";
import { VerifierPool } from "../lean-bridge/verify/pool";
import { EXAMPLE } from "../test/helpers";
import { printAxiomsLine, startStub } from "../test/kimina/stub";
import { groups, holes, statementProject, type Hole } from "./workload";

const HEADER_MS = 1000;
const DECL_MS = 20;
const SLOTS = 4;
const GROUP = 8;

function line(label: string, value: string): void {
  process.stdout.write(`${label.padEnd(53)} ${value}\n`);
}

/** Kimina's cost of one check document on a REPL: its header once per REPL, then every declaration in it. */
function kiminaCost(code: string, loaded: Set<string>): number {
  const header = code
    .split("\n")
    .filter((l) => l.startsWith("import "))
    .join("\n");
  const headerMs = loaded.has(header) ? 0 : HEADER_MS;
  loaded.add(header);
  const declarations = parseFile(code).commands.filter((c) => c.declaration).length;
  return headerMs + DECL_MS * declarations;
}

/** The stub's REPL answer: the hole's own proof is proved (with the axioms answer); the misses are errors. */
function answer(code: string) {
  const axiomsLine = printAxiomsLine(code);
  const name = /#print axioms _root_\.(.+)$/m.exec(code)?.[1] ?? "?";
  const miss = /exact h_\d+_\d+/.test(code);
  return {
    messages: [
      ...(miss
        ? [
            {
              severity: "error" as const,
              pos: { line: axiomsLine - 2, column: 2 },
              data: "unknown identifier",
            },
          ]
        : []),
      {
        severity: "info" as const,
        pos: { line: axiomsLine, column: 0 },
        endPos: { line: axiomsLine, column: 10 },
        data: miss ? `'${name}' depends on axioms: [sorryAx]` : `'${name}' does not depend on any axioms`,
      },
    ],
  };
}

async function measure(
  verifier: Verifier,
  hs: Hole[],
): Promise<{ rate: number; checks: number; proved: number; seconds: number }> {
  // One check per task first, so the headers are loaded on both sides (a one-time cost either way).
  await verifier.verifyMany(hs.map((h) => ({ task: h.task, candidate: "done" })));
  const work = groups(hs, GROUP);
  const t0 = performance.now();
  const verdicts: Verdict[] = await verifier.verifyMany(work);
  const seconds = (performance.now() - t0) / 1000;
  return {
    rate: work.length / seconds,
    checks: work.length,
    proved: verdicts.filter((v) => v.kind === "proved").length,
    seconds,
  };
}

async function compare(title: string, root: string, hs: Hole[]): Promise<void> {
  const stub = await startStub({ answer, cost: kiminaCost, repls: SLOTS });
  const kimina = new KiminaVerifier({
    url: stub.url,
    projectRoot: root,
    timeoutMs: 600_000,
    concurrency: SLOTS,
  });
  const viaKimina = await measure(kimina, hs);
  await kimina.stop();
  await stub.close();

  const started = await VerifierPool.start({
    projectRoot: root,
    launch: {
      command: [...simulatorCommand(), "--header-ms", String(HEADER_MS), "--decl-ms", String(DECL_MS)],
      cwd: root,
    },
    slots: SLOTS,
    timeoutMs: 600_000,
    memoryPerWorkerMb: 1,
    memoryBudgetMb: 1024,
  });
  if (started.kind !== "ok") throw new Error(started.message);
  const viaPool = await measure(started.pool, hs);
  await started.pool.stop();

  const show = (r: typeof viaKimina) =>
    `${r.rate.toFixed(1)} checks/s (${r.checks} checks, ${r.proved} proved, ${r.seconds.toFixed(2)} s)`;
  process.stdout.write(`${title}\n`);
  line("   Kimina protocol (full re-elaboration per check)", show(viaKimina));
  line("   our pool (incremental, simulator)", show(viaPool));
  line("   pool / Kimina", `${(viaPool.rate / viaKimina.rate).toFixed(1)}x`);
  if (viaKimina.proved !== viaPool.proved)
    process.stdout.write(
      `   note: the two disagree on proved counts (${viaKimina.proved} vs ${viaPool.proved})\n`,
    );
}

async function main(): Promise<void> {
  const hs = holes().filter((_, k) => k % 6 === 0);
  process.stdout.write(
    `bench:kimina — Kimina's protocol (stub, not Kimina) vs our pool (SIMULATOR, not Lean); simulated costs:\n` +
      `  header ${HEADER_MS} ms once per REPL/slot, ${DECL_MS} ms per declaration elaborated; ${SLOTS} REPLs vs ${SLOTS} slots;\n` +
      `  GRPO groups of ${GROUP}; ${cpus().length} CPU cores\n\n`,
  );
  await compare(
    `1. Tactic proofs of the example workspace (${hs.length} tasks, declarations above them)`,
    EXAMPLE,
    hs,
  );
  const statements = statementProject(35);
  try {
    await compare(
      `2. One-statement files as \`fim-rlvr import\` writes them (${statements.hs.length} tasks, two headers in turn)`,
      statements.root,
      statements.hs,
    );
  } finally {
    rmSync(statements.root, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:kimina failed: ${error instanceof Error ? error.stack : String(error)}\n`);
  process.exit(1);
});
