/**
 * Baselines on a real-Lean workspace, judged by the embedded Lean: the best single tactic and a fixed portfolio of
 * tactics (`first | rfl | decide | simp | …`), the floor a trained prover must clear on the same held-out sets.
 *
 * The workspace is exported as training mines it (every hole kind, the default family split, the given seed). The
 * best single tactic is chosen on the validation split's held-out tasks and reported on the test split's, so the
 * choice is never made on the set it is scored on. Every candidate is checked by the verifier on the embedded Lean
 * (`lean: "embedded"`). The kernel gate is off: where no `lake` exists it cannot run, so a verdict is the
 * language server's (Lean's elaborator and kernel, which checked each declaration as it was added) and the axiom
 * check the verifier makes after it; a proof the gate would refuse on other grounds would count here.
 *
 * Tasks in the workspace's copy of the prelude library (files under `FimPrelude`) are not scored: the library is
 * the workspace's toolbox, not its benchmark.
 */
import { join } from "node:path";
import type { TaskRecord } from "../lean-bridge/dataset/records";
import type { SplitFractions } from "../lean-bridge/dataset/split";
import { familyShapeOverlap, type FamilyShapeOverlap } from "../lean-bridge/dataset/statementShape";
import { viewWorkspace } from "../lean-bridge/embedded/workspace";
import trainerSchema from "../lean-bridge/protocol/trainer.schema.json";
import { startVerifier, type VerifierSpec } from "../lean-bridge/verifiers/startVerifier";
import { readRows } from "./trivialProvers";

/** The single tactics tried: what a fixed prover can say without reading the goal. */
export const SINGLE_TACTICS = [
  "rfl",
  "decide",
  "simp",
  "assumption",
  "trivial",
  "contradiction",
  "constructor",
  "intro h",
  "simp [*]",
  "omega",
] as const;

/**
 * The fixed portfolio's tactics, in order: the protocol schema's TrainConfig `portfolio` default, the one list the
 * trainer's data-matched SFT arm tries too (trainer/fim_rlvr/step/portfolio.py). `omega` is left out: the prelude
 * does not declare it.
 */
export const PORTFOLIO_TACTICS: readonly string[] =
  trainerSchema.$defs.TrainConfig.properties.portfolio.default;

/**
 * A fixed portfolio over the prelude's tactics: each alternative in turn, the first that closes the goal wins
 * (`first` backtracks a failing alternative).
 */
export const PORTFOLIO = `first | ${PORTFOLIO_TACTICS.join(" | ")}`;

/** Files of the library the workspace carries, whose tasks are not scored. */
export const LIBRARY_PREFIX = "FimPrelude";

/**
 * The split the real-Lean workspace is measured on: a quarter of the tasks in test (at least 150 held-out test
 * tasks on lean-env-prelude/) and 15% in validation, where settings and the best single tactic are chosen.
 */
export const REAL_LEAN_SPLIT_FRACTIONS: SplitFractions = { train: 0.6, validation: 0.15, test: 0.25 };

export type Row = TaskRecord;

export interface SetScore {
  /** Tasks proved / tasks. */
  proved: number;
  tasks: number;
  /** The same per family (`file#scope`). */
  families: Record<string, { proved: number; tasks: number }>;
}

export interface ProverScores {
  name: string;
  candidate: string;
  /** The scored split: held-out instances and held-out families. */
  instances: SetScore;
  families: SetScore;
  /** Ids of the scored tasks proved, for per-task pairing with the trained arms (bench:seeds). */
  proved: string[];
}

export interface PortfolioReport {
  verifierLabel: string;
  /** Each single tactic's pass@1 on validation's held-out tasks (instances and families together). */
  validation: { tactic: string; proved: number; tasks: number }[];
  bestTactic: ProverScores;
  portfolio: ProverScores;
  /** Held-out test tasks scored (instances + families). */
  testTasks: number;
}

function familyOf(contexts: { file: string; scope: string[] }[], t: Row): string {
  const c = contexts[t.context]!;
  return `${c.file}#${c.scope.flatMap((s) => /^(?:namespace|section) (\S+)/.exec(s)?.[1] ?? []).join(".")}`;
}

function score(rows: readonly Row[], proved: readonly boolean[], family: (t: Row) => string): SetScore {
  const out: SetScore = { proved: 0, tasks: rows.length, families: {} };
  rows.forEach((t, k) => {
    const f = (out.families[family(t)] ??= { proved: 0, tasks: 0 });
    f.tasks++;
    if (proved[k]) {
      f.proved++;
      out.proved++;
    }
  });
  return out;
}

/** Whether the embedded Lean can judge every file of `workspace` (then it, not the simulator, is the judge). */
export function embeddedCanJudge(workspace: string): boolean {
  const view = viewWorkspace(workspace);
  return view.workspaceRefusal === undefined && view.refused.size === 0;
}

/** Which tasks the baselines score, and with which verifier. */
export interface BaselineOptions {
  /** The single tactics the best one is chosen among, on validation (the bench tries them all; a test, fewer). */
  singleTactics?: readonly string[];
  /** The held-out split scored (default test); the best single tactic is always chosen on validation. */
  split?: "test" | "validation";
  /**
   * Whether tasks in the workspace's copy of the library count (default not: the library is the workspace's
   * toolbox). bench:seeds counts them, as the trainer evaluates every task of the split.
   */
  library?: "skipped" | "scored";
  /** Only tasks of these hole kinds (the run's `kinds`); default every kind. */
  kinds?: readonly string[];
  /** The verifier (default the embedded Lean, kernel gate off); lean-env's bench passes the simulator. */
  verifier?: VerifierSpec;
}

/**
 * Baselines on the dataset in `datasetDir` (exported from `workspace`), checked by the embedded Lean unless
 * `options.verifier` says otherwise.
 */
export async function portfolioBaselines(
  datasetDir: string,
  workspace: string,
  options: BaselineOptions = {},
): Promise<PortfolioReport> {
  const scored = options.split ?? "test";
  const rows = readRows<Row>(join(datasetDir, "tasks.jsonl")).filter(
    (t) =>
      (options.library === "scored" || !t.file.startsWith(LIBRARY_PREFIX)) &&
      (!options.kinds || options.kinds.includes(t.kind)),
  );
  const contexts = readRows<{ file: string; scope: string[] }>(join(datasetDir, "contexts.jsonl"));
  const family = (t: Row) => familyOf(contexts, t);
  const validation = rows.filter((t) => t.split === "validation");
  const testInstances = rows.filter((t) => t.split === scored && t.heldOut === "instance");
  const testFamilies = rows.filter((t) => t.split === scored && t.heldOut === "family");

  const started = await startVerifier(
    workspace,
    options.verifier ?? { kind: "lean", lean: "embedded", kernelGate: { kind: "off" } },
  );
  if (started.kind === "error") throw new Error(`${started.message} (${started.hint})`);
  const pool = started.pool;
  const check = async (tasks: readonly Row[], candidate: string) =>
    (await pool.verifyMany(tasks.map((t) => ({ task: { file: t.file, hole: t.range }, candidate })))).map(
      (v) => v.kind === "proved",
    );
  try {
    const tried: PortfolioReport["validation"] = [];
    for (const tactic of options.singleTactics ?? SINGLE_TACTICS) {
      const proved = await check(validation, tactic);
      tried.push({ tactic, proved: proved.filter(Boolean).length, tasks: validation.length });
    }
    // Ties go to the earlier tactic of the list: the choice depends on validation alone.
    const best = tried.reduce((a, b) => (b.proved > a.proved ? b : a));
    const scoreOn = async (name: string, candidate: string): Promise<ProverScores> => {
      const instances = await check(testInstances, candidate);
      const families = await check(testFamilies, candidate);
      return {
        name,
        candidate,
        instances: score(testInstances, instances, family),
        families: score(testFamilies, families, family),
        proved: [
          ...testInstances.filter((_, k) => instances[k]).map((t) => t.id),
          ...testFamilies.filter((_, k) => families[k]).map((t) => t.id),
        ],
      };
    };
    return {
      verifierLabel: pool.identity.label,
      validation: tried,
      bestTactic: await scoreOn(`best single tactic (${best.tactic})`, best.tactic),
      portfolio: await scoreOn("fixed portfolio", PORTFOLIO),
      testTasks: testInstances.length + testFamilies.length,
    };
  } finally {
    await pool.stop();
  }
}

function pct(n: number, d: number): string {
  return d ? `${((100 * n) / d).toFixed(1)}%` : "–";
}

/** The report as the terminal shows it: pass@1 per prover, held-out set and family. */
export function formatPortfolioReport(report: PortfolioReport): string {
  const lines = [`verifier: ${report.verifierLabel} (kernel gate off: the server's verdict)`];
  lines.push(
    "single tactics on validation's held-out tasks: " +
      report.validation.map((v) => `${v.tactic} ${v.proved}/${v.tasks}`).join(", "),
  );
  for (const p of [report.bestTactic, report.portfolio]) {
    const all = p.instances.proved + p.families.proved;
    const tasks = p.instances.tasks + p.families.tasks;
    lines.push(`${p.name}: test held-out pass@1 ${pct(all, tasks)} (${all}/${tasks})`);
    for (const [setName, s] of [
      ["instances", p.instances],
      ["families", p.families],
    ] as const) {
      lines.push(`  held-out ${setName}: ${pct(s.proved, s.tasks)} (${s.proved}/${s.tasks})`);
      for (const [f, c] of Object.entries(s.families).sort((a, b) => a[0].localeCompare(b[0])))
        lines.push(`    ${f}: ${pct(c.proved, c.tasks)} (${c.proved}/${c.tasks})`);
    }
  }
  return `${lines.join("\n")}\n`;
}

export interface SplitSummary {
  /** Held-out tasks of the test split (instances and families), outside the library. */
  heldoutTasks: number;
  /** The most tasks one declaration has, outside the library. */
  maxHolesPerTheorem: number;
  /** Held-out families, by name. */
  heldOutFamilies: string[];
  shapes: FamilyShapeOverlap;
}

/** What bench:seeds' `split` reports: the test set's size, holes per theorem, and held-out families' novelty. */
export function splitSummary(datasetDir: string): SplitSummary {
  const rows = readRows<Row>(join(datasetDir, "tasks.jsonl"));
  const contexts = readRows<{ file: string; scope: string[]; statement: string }>(
    join(datasetDir, "contexts.jsonl"),
  );
  const scored = (file: string) => !file.startsWith(LIBRARY_PREFIX);
  const ours = rows.filter((t) => scored(t.file));
  const perDecl = new Map<number, number>();
  for (const t of ours) perDecl.set(t.context, (perDecl.get(t.context) ?? 0) + 1);
  return {
    heldoutTasks: ours.filter((t) => t.split === "test").length,
    maxHolesPerTheorem: Math.max(0, ...perDecl.values()),
    heldOutFamilies: [
      ...new Set(ours.filter((t) => t.heldOut === "family").map((t) => familyOf(contexts, t))),
    ].sort(),
    shapes: familyShapeOverlap(
      ours,
      contexts.map((c) => c.statement),
      scored,
    ),
  };
}

/** The split summary as the terminal shows it. */
export function formatSplitSummary(s: SplitSummary): string {
  return (
    `split: ${s.heldoutTasks} held-out test tasks, at most ${s.maxHolesPerTheorem} holes per theorem; ` +
    `held-out families ${s.heldOutFamilies.join(", ") || "none"}\n` +
    `statement shapes: ${s.shapes.familyShapesInTraining} of ${s.shapes.heldOutFamilyDeclarations} held-out-family ` +
    `declarations have a shape training has (held-out instances: ${s.shapes.instanceShapesInTraining} of ` +
    `${s.shapes.heldOutInstanceDeclarations})\n`
  );
}
