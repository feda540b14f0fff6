/**
 * node --import tsx bench/baselines.ts [--workspace DIR] [--seed S] — what trivial provers score on a workspace's
 * held-out sets, the floor a trained arm must clear for its figure to mean something. The workspace is exported as
 * `fim-rlvr train` mines it (every kind, the default family split, seed S: train always mines with seed 0), and
 * each held-out set (instances, families; the test split and validation + test) is tried with:
 *
 * - one fixed tactic for every hole: `omega`, `simp`, `decide`, `rfl`, `assumption`;
 * - the majority proof per family: for each hole, the proof the training split's reference proofs of its family
 *   use most (what SFT can imitate), else the most common training proof overall (for a family without any).
 *
 * Candidates are checked by the simulator, which on lean-env judges with its oracle (fim-oracle.json): its model
 * of the families, not Lean (Lean may prove a few candidates the menus leave out, never fewer).
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { exportDataset } from "../lean-bridge/dataset/exporter";
import type { TaskRecord } from "../lean-bridge/dataset/records";
import { HOLE_KINDS } from "../lean-bridge/holes/mine";
import { startVerifier } from "../lean-bridge/verify/startVerifier";

type Row = TaskRecord & { heldOut?: string };

const FIXED = ["omega", "simp", "decide", "rfl", "assumption"];

function readRows<T>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

function mostCommon(items: readonly string[]): string | undefined {
  const counts = new Map<string, number>();
  for (const i of items) counts.set(i, (counts.get(i) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0];
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { workspace: { type: "string", default: "lean-env" }, seed: { type: "string", default: "0" } },
  });
  const workspace = resolve(values.workspace!);
  const out = join(mkdtempSync(join(tmpdir(), "fim-baselines-")), "ds");
  const exported = await exportDataset({
    workspace,
    out,
    kinds: [...HOLE_KINDS],
    seed: Number(values.seed),
    maxFileBytes: 4 << 20,
    formats: ["native"],
  });
  if (exported.kind !== "ok") throw new Error(`export: ${exported.kind}`);
  const rows = readRows<Row>(join(out, "tasks.jsonl"));
  const contexts = readRows<{ file: string; scope: string[] }>(join(out, "contexts.jsonl"));
  const family = (t: Row) => {
    const c = contexts[t.context]!;
    return `${c.file}#${c.scope.flatMap((s) => /^(?:namespace|section) (\S+)/.exec(s)?.[1] ?? []).join(".")}`;
  };
  // What SFT sees: the training split's proofs written in the files (not the open goals' `sorry`).
  const references = rows.filter((t) => t.split === "train" && t.middle.trim() !== "sorry");
  const overall = mostCommon(references.map((t) => t.middle))!;
  const byFamily = new Map<string, string>();
  for (const f of new Set(references.map(family)))
    byFamily.set(f, mostCommon(references.filter((t) => family(t) === f).map((t) => t.middle))!);

  const started = await startVerifier(workspace, { kind: "simulator", slots: 4 });
  if (started.kind === "error") throw new Error(started.message);
  const pool = started.pool;
  try {
    const heldOut = rows.filter((t) => t.split !== "train");
    const baselines: [string, (t: Row) => string][] = [
      ...FIXED.map((tactic) => [tactic, () => tactic] as [string, (t: Row) => string]),
      ["majority proof per family", (t) => byFamily.get(family(t)) ?? overall],
    ];
    const proved = new Map<string, boolean[]>();
    for (const [name, candidate] of baselines) {
      const verdicts = await pool.verifyMany(
        heldOut.map((t) => ({ task: { file: t.file, hole: t.range }, candidate: candidate(t) })),
      );
      proved.set(
        name,
        verdicts.map((v) => v.kind === "proved"),
      );
    }
    process.stdout.write(
      `${exported.report.workspaceName}, split ${exported.report.split.mode}, seed ${values.seed}; verifier: ${pool.identity.label}\n` +
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
      const cells = baselines.map(([name]) => {
        const p = proved.get(name)!;
        const all = members.filter(([, k]) => p[k]).length;
        const proofs = proofOnly.filter(([, k]) => p[k]).length;
        return `${name} ${pct(all, members.length)} (${all}/${members.length}; proof holes ${proofs}/${proofOnly.length})`;
      });
      process.stdout.write(`  ${setName}:\n${cells.map((c) => `    ${c}\n`).join("")}`);
    }
  } finally {
    await pool.stop();
  }
}

function pct(n: number, d: number): string {
  return d ? `${((100 * n) / d).toFixed(1)}%` : "–";
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
