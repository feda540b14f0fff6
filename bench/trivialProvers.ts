/**
 * Trivial provers on a dataset's held-out tasks: the floor a trained arm must clear for its figure to mean something
 * (bench/baselines.ts prints them for a workspace; bench:seeds beside its arms).
 *
 * - one fixed tactic for every hole: `omega`, `simp`, `decide`, `rfl`, `assumption`;
 * - the majority proof per family: for each hole, the proof the training split's reference proofs of its family
 *   use most (what SFT can imitate), else the most common training proof overall (for a family without any).
 *
 * Candidates are checked by the simulator, which on lean-env judges with its oracle (fim-oracle.json): its model
 * of the families, not Lean (Lean may prove a few candidates the menus leave out, never fewer).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { TaskRecord } from "../lean-bridge/dataset/records";
import { startVerifier } from "../lean-bridge/verifiers/startVerifier";

export type Row = TaskRecord;

const FIXED = ["omega", "simp", "decide", "rfl", "assumption"];

export function readRows<T>(path: string): T[] {
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

export interface TrivialProofs {
  /** The dataset's held-out tasks (validation and test), in file order. */
  heldOut: Row[];
  /** Per prover, whether it proved each held-out task. */
  provers: { name: string; proved: boolean[] }[];
  verifierLabel: string;
}

/** Every trivial prover on every held-out task of the dataset in `datasetDir`, mined from `workspace`. */
export async function trivialProofs(datasetDir: string, workspace: string): Promise<TrivialProofs> {
  const rows = readRows<Row>(join(datasetDir, "tasks.jsonl"));
  const contexts = readRows<{ file: string; scope: string[] }>(join(datasetDir, "contexts.jsonl"));
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
    const candidates: [string, (t: Row) => string][] = [
      ...FIXED.map((tactic) => [tactic, () => tactic] as [string, (t: Row) => string]),
      ["majority proof per family", (t) => byFamily.get(family(t)) ?? overall],
    ];
    const provers: TrivialProofs["provers"] = [];
    for (const [name, candidate] of candidates) {
      const verdicts = await pool.verifyMany(
        heldOut.map((t) => ({ task: { file: t.file, hole: t.range }, candidate: candidate(t) })),
      );
      provers.push({ name, proved: verdicts.map((v) => v.kind === "proved") });
    }
    return { heldOut, provers, verifierLabel: pool.identity.label };
  } finally {
    await pool.stop();
  }
}

/** Each prover's pass@1 on the held-out instances and families of one split: [name, instances, families]. */
export function trivialScores(
  proofs: TrivialProofs,
  split: string,
): { name: string; instances: number; families: number }[] {
  const share = (proved: boolean[], set: string) => {
    const members = proofs.heldOut.flatMap((t, k) => (t.split === split && t.heldOut === set ? [k] : []));
    return members.length ? members.filter((k) => proved[k]).length / members.length : 0;
  };
  return proofs.provers.map((p) => ({
    name: p.name,
    instances: share(p.proved, "instance"),
    families: share(p.proved, "family"),
  }));
}
