/**
 * node --import tsx bench/baselines.ts [--workspace DIR] [--seed S] — what trivial provers (bench/trivialProvers.ts:
 * one fixed tactic for every hole, the majority proof per family) score on a workspace's held-out sets, the floor a
 * trained arm must clear for its figure to mean something. The workspace is exported as `fim-rlvr train` mines it
 * (every kind, the default family split, seed S: train always mines with seed 0), and each held-out set (instances,
 * families; the test split and validation + test) is tried. The simulator checks them, with the workspace's oracle.
 * Where the embedded Lean can judge every file of the workspace (lean-env-prelude/), or with `--verifier embedded`,
 * it prints bench/portfolio.ts's baselines instead: the best single tactic and a fixed portfolio, judged by Lean.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { exportDataset } from "../lean-bridge/dataset/exporter";
import { HOLE_KINDS } from "../lean-bridge/holes/mine";
import {
  REAL_LEAN_SPLIT_FRACTIONS,
  embeddedCanJudge,
  formatPortfolioReport,
  formatSplitSummary,
  portfolioBaselines,
  splitSummary,
} from "./portfolio";
import { trivialProofs, type Row } from "./trivialProvers";

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      workspace: { type: "string", default: "lean-env" },
      seed: { type: "string", default: "0" },
      verifier: { type: "string", default: "auto" },
    },
  });
  const verifier = values.verifier!;
  if (!["auto", "embedded", "simulator"].includes(verifier))
    throw new Error(`--verifier ${verifier}: expected auto, embedded or simulator`);
  const workspace = resolve(values.workspace!);
  const out = join(mkdtempSync(join(tmpdir(), "fim-baselines-")), "ds");
  const real = verifier === "embedded" || (verifier === "auto" && embeddedCanJudge(workspace));
  const exported = await exportDataset({
    workspace,
    out,
    kinds: [...HOLE_KINDS],
    seed: Number(values.seed),
    maxFileBytes: 4 << 20,
    formats: ["native"],
    // The real-Lean workspace is measured on larger held-out splits; lean-env keeps the default.
    ...(real ? { splitFractions: REAL_LEAN_SPLIT_FRACTIONS } : {}),
  });
  if (exported.kind !== "ok") throw new Error(`export: ${exported.kind}`);
  if (real) {
    const report = await portfolioBaselines(out, workspace);
    process.stdout.write(
      `${exported.report.workspaceName}, split ${exported.report.split.mode}, seed ${values.seed}\n` +
        formatSplitSummary(splitSummary(out)) +
        formatPortfolioReport(report),
    );
    return;
  }
  const { heldOut, provers, verifierLabel } = await trivialProofs(out, workspace);
  process.stdout.write(
    `${exported.report.workspaceName}, split ${exported.report.split.mode}, seed ${values.seed}; verifier: ${verifierLabel}\n` +
      `held-out pass@1 of trivial provers (proved / tasks):\n`,
  );
  const sets: [string, (t: Row) => boolean][] = [
    ["test instances", (t) => t.split === "test" && t.heldOut === "instance"],
    ["test families", (t) => t.split === "test" && t.heldOut === "family"],
    ["validation+test instances", (t) => t.heldOut === "instance"],
    ["validation+test families", (t) => t.heldOut === "family"],
  ];
  for (const [setName, inSet] of sets) {
    const members = heldOut.map((t, k) => [t, k] as const).filter(([t]) => inSet(t));
    const proofOnly = members.filter(([t]) => t.kind === "proof");
    const cells = provers.map(({ name, proved: p }) => {
      const all = members.filter(([, k]) => p[k]).length;
      const proofs = proofOnly.filter(([, k]) => p[k]).length;
      return `${name} ${pct(all, members.length)} (${all}/${members.length}; proof holes ${proofs}/${proofOnly.length})`;
    });
    process.stdout.write(`  ${setName}:\n${cells.map((c) => `    ${c}\n`).join("")}`);
  }
}

function pct(n: number, d: number): string {
  return d ? `${((100 * n) / d).toFixed(1)}%` : "–";
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
