/**
 * npm run bench:start — how long a training run takes to open a dataset of a million tasks, and what it holds
 * in memory: the host's `loadDataset` (the task index behind the run's verifier service) and the trainer's
 * `load_tasks` with the selection `train` makes (trainer/.venv's Python). The dataset is generated in the
 * exporter's layout (rows of the sizes a Mathlib-shaped export gives) in a temporary folder, removed after.
 * Usage: node --expose-gc dist/bench/mineStart.js [TASKS=1000000] [--keep]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { JsonlWriter } from "../lean-bridge/dataset/jsonl";
import type { ContextRecord, TaskRecord } from "../lean-bridge/dataset/records";
import { loadDataset } from "../lean-bridge/train/dataset";
import { packageRoot } from "../lean-bridge/server/launch";
import { mulberry32 } from "./corpus";

const count = Number(process.argv.slice(2).find((a) => !a.startsWith("--")) ?? 1_000_000);
const keep = process.argv.includes("--keep");
const root = mkdtempSync(join(tmpdir(), "fim-bench-start-"));
const line = (label: string, value: string) => process.stdout.write(`  ${label.padEnd(22)} ${value}\n`);
const mb = (bytes: number) => bytes / 1024 / 1024;

const KINDS = ["tactic", "steps", "block", "proof"] as const;
const TACTICS = [
  "simp [mul_comm, add_assoc]",
  "rw [Nat.succ_le_iff] at h",
  "exact le_of_lt (lt_of_le_of_lt h₁ h₂)",
  "omega",
];

/** A dataset of `count` tasks, ten per declaration, a hundred declarations per file. */
function generate(dir: string): void {
  const rand = mulberry32(3);
  const tasks = new JsonlWriter(join(dir, "tasks.jsonl"));
  const contexts = new JsonlWriter(join(dir, "contexts.jsonl"));
  const files = new JsonlWriter(join(dir, "files.jsonl"));
  const declarations = Math.ceil(count / 10);
  for (let d = 0; d < declarations; d++) {
    const file = `Gen/Part${Math.floor(d / 100)}.lean`;
    if (d % 100 === 0) files.write({ file, sha256: "0".repeat(64), text: "-- generated\n" });
    const statement = `theorem t${d} {a b : ℕ} (h₁ : a < b) (h₂ : b ≤ a + ${d}) : a + ${d % 7} ≤ b + ${d}`;
    const body = Array.from({ length: 10 }, (_, k) => `  ${TACTICS[(d + k) % TACTICS.length]!}`).join("\n");
    const text = `${statement} := by\n${body}`;
    const declStart = { line: (d % 100) * 12, character: 0 };
    const context: ContextRecord = {
      context: d,
      file,
      decl: `Gen.t${d}`,
      declKind: "theorem",
      declStart,
      offsets: { start: 0, end: text.length },
      offsetsCodePoints: { start: 0, end: text.length },
      imports: ["Mathlib.Order.Basic", "Mathlib.Algebra.Order.Ring.Lemmas", "Mathlib.Data.Nat.Defs"],
      scope: [`namespace Gen`, "open Nat"],
      variables: ["variable {R : Type*} [CommRing R]"],
      statement,
      text,
    };
    contexts.write(context);
    let at = statement.length + 6;
    for (let k = 0; k < 10 && d * 10 + k < count; k++) {
      const middle = TACTICS[(d + k) % TACTICS.length]!;
      const split = rand() < 0.8 ? "train" : rand() < 0.5 ? "validation" : "test";
      const task: TaskRecord = {
        id: (d * 10 + k).toString(16).padStart(16, "0"),
        file,
        kind: KINDS[k % 4]!,
        split,
        novel: split === "train" ? null : rand() < 0.5,
        heldOut: split === "train" ? null : "instance",
        decl: `Gen.t${d}`,
        context: d,
        range: {
          start: { line: declStart.line + 1 + k, character: 2 },
          end: { line: declStart.line + 1 + k, character: 2 + middle.length },
        },
        middle,
        indent: 2,
        prefix: text.slice(Math.max(0, at + 2 - 96), at + 2),
        suffix: text.slice(at + 2 + middle.length, at + 2 + middle.length + 24),
        offsets: { start: at + 2, end: at + 2 + middle.length },
        offsetsCodePoints: { start: at + 2, end: at + 2 + middle.length },
        goal: null,
        reference: null,
      };
      tasks.write(task);
      at += middle.length + 3;
    }
  }
  tasks.close();
  contexts.close();
  files.close();
}

function main(): void {
  process.stdout.write(`bench:start — generating a dataset of ${count} tasks in ${root}\n`);
  generate(root);
  process.stdout.write(
    `bench:start — tasks.jsonl ${mb(statSync(join(root, "tasks.jsonl")).size).toFixed(0)} MB, contexts.jsonl ${mb(statSync(join(root, "contexts.jsonl")).size).toFixed(0)} MB\n`,
  );
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  const loaded = loadDataset(root);
  const hostSeconds = (performance.now() - t0) / 1000;
  const c1 = process.cpuUsage(c0);
  gc?.();
  if (loaded.kind !== "ok") throw new Error(loaded.message);
  const probe = loaded.dataset.tasks.get((count - 1).toString(16).padStart(16, "0"));
  line(
    "host loadDataset",
    `${hostSeconds.toFixed(1)} s wall, ${((c1.user + c1.system) / 1e6).toFixed(1)} s CPU; ${loaded.dataset.tasks.size} tasks indexed in ${gc ? `${mb(process.memoryUsage().heapUsed - heap0).toFixed(0)} MB of heap` : "(run with --expose-gc for the heap it holds)"} (last task read back: ${probe ? "yes" : "NO"})`,
  );
  const python = join(packageRoot(__filename), "trainer", ".venv", "bin", "python");
  if (!existsSync(python)) {
    line("trainer load_tasks", `skipped: ${python} does not exist (npm run test:setup makes it)`);
    return;
  }
  const script = [
    "import resource, sys, time",
    "t = time.perf_counter()",
    "c = time.process_time()",
    "from fim_rlvr.tasks.data import by_kind, load_tasks, select",
    "tasks = load_tasks(sys.argv[1])",
    "train = by_kind(select(tasks, 'train', ['tactic', 'steps', 'block', 'proof']))",
    "tail = tasks[-1].prefix",
    "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024",
    "print(f'{time.perf_counter() - t:.1f} s wall, {time.process_time() - c:.1f} s CPU; {len(tasks)} tasks, {sum(map(len, train.values()))} in train, peak {peak:.0f} MB resident')",
  ].join("\n");
  const r = spawnSync(python, ["-c", script, root], {
    cwd: join(packageRoot(__filename), "trainer"),
    encoding: "utf8",
    timeout: 600_000,
  });
  line("trainer load_tasks", r.status === 0 ? r.stdout.trim() : `failed: ${r.stderr.slice(-500)}`);
}

try {
  main();
} catch (error) {
  process.stderr.write(`bench:start failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exitCode = 1;
} finally {
  if (!keep) rmSync(root, { recursive: true, force: true });
}
