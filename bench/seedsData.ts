/**
 * What bench:seeds reads from each seed's mined dataset (RUN_DIR/dataset): the held-out tasks the run evaluated
 * (the evaluated split, the run's hole kinds; the library's copy included, as the trainer evaluates every task of
 * the split), the split's figures (held-out tasks, holes per theorem, held-out families' statement shapes in
 * training), and the fixed portfolio's and the best single tactic's scores on exactly those tasks (bench/portfolio.ts).
 */
import { join } from "node:path";
import type { TaskRecord } from "../lean-bridge/dataset/records";
import { familyShapeOverlap } from "../lean-bridge/dataset/statementShape";
import type { VerifierSpec } from "../lean-bridge/verifiers/startVerifier";
import { portfolioBaselines, type ProverScores, type SetScore as ProverSet } from "./portfolio";
import type { BaselineEntry, SeedBaselines } from "./seedsReport";
import { readRows } from "./trivialProvers";

/** Which held-out tasks a run evaluated: its eval split and hole kinds (config.json). */
export interface Evaluated {
  split: "test" | "validation";
  kinds?: readonly string[];
}

function heldOut(datasetDir: string, evaluated: Evaluated): TaskRecord[] {
  return readRows<TaskRecord>(join(datasetDir, "tasks.jsonl")).filter(
    (t) =>
      t.split === evaluated.split &&
      (t.heldOut === "instance" || t.heldOut === "family") &&
      (!evaluated.kinds || evaluated.kinds.includes(t.kind)),
  );
}

/** Ids of the evaluated split's held-out instances, the tasks the per-task pairing counts. */
export function instanceTaskIds(datasetDir: string, evaluated: Evaluated): string[] {
  return heldOut(datasetDir, evaluated)
    .filter((t) => t.heldOut === "instance")
    .map((t) => t.id);
}

/** One seed's split: its held-out tasks, the most holes of one theorem among them, held-out family shapes in training. */
export interface SeedSplit {
  heldoutTasks: number;
  maxHolesPerTheorem: number;
  familyShapesInTraining: number;
  heldOutFamilyDeclarations: number;
}

export function seedSplit(datasetDir: string, evaluated: Evaluated): SeedSplit {
  const held = heldOut(datasetDir, evaluated);
  const perTheorem = new Map<number, number>();
  for (const t of held) perTheorem.set(t.context, (perTheorem.get(t.context) ?? 0) + 1);
  const rows = readRows<TaskRecord>(join(datasetDir, "tasks.jsonl"));
  const statements = readRows<{ statement: string }>(join(datasetDir, "contexts.jsonl")).map(
    (c) => c.statement,
  );
  const shapes = familyShapeOverlap(rows, statements);
  return {
    heldoutTasks: held.length,
    maxHolesPerTheorem: Math.max(0, ...perTheorem.values()),
    familyShapesInTraining: shapes.familyShapesInTraining,
    heldOutFamilyDeclarations: shapes.heldOutFamilyDeclarations,
  };
}

/** A prover's scores as bench:seeds' per-seed baseline entry, with the ids it proved (for the per-task pairing). */
export function baselineEntry(seed: number, scores: ProverScores): BaselineEntry & { proved: string[] } {
  const set = (s: ProverSet) => ({ "pass@1": s.tasks ? s.proved / s.tasks : 0, tasks: s.tasks });
  const families: Record<string, { proved: number; tasks: number }> = {};
  for (const s of [scores.instances, scores.families])
    for (const [name, f] of Object.entries(s.families)) {
      const into = (families[name] ??= { proved: 0, tasks: 0 });
      into.proved += f.proved;
      into.tasks += f.tasks;
    }
  return {
    seed,
    candidate: scores.candidate,
    instances: set(scores.instances),
    families: set(scores.families),
    by_family: Object.fromEntries(
      Object.entries(families)
        .sort((a, b) => a[0].localeCompare(b[0]))
        .map(([name, f]) => [name, { "pass@1": f.tasks ? f.proved / f.tasks : 0, tasks: f.tasks }]),
    ),
    proved: scores.proved,
  };
}

/** The portfolio and the best single tactic on the seed's evaluated held-out tasks, checked by `verifier`. */
export async function seedBaselines(
  seed: number,
  datasetDir: string,
  workspace: string,
  evaluated: Evaluated,
  verifier: VerifierSpec,
): Promise<{ baselines: SeedBaselines; verifierLabel: string }> {
  const report = await portfolioBaselines(datasetDir, workspace, {
    split: evaluated.split,
    library: "scored",
    ...(evaluated.kinds ? { kinds: evaluated.kinds } : {}),
    verifier,
  });
  return {
    baselines: {
      portfolio: baselineEntry(seed, report.portfolio),
      best_tactic: baselineEntry(seed, report.bestTactic),
    },
    verifierLabel: report.verifierLabel,
  };
}
