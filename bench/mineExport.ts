/**
 * npm run bench:export — `fim-rlvr export` on a generated Mathlib-sized workspace (bench/mineCorpus.ts: long
 * files, Mathlib's header, proof lengths and lemma vocabulary), in this process, on one core (the exporter is
 * single-threaded). Prints the dataset's size against the workspace's, export speed and peak memory. The
 * workspace and the dataset are written to a temporary folder and removed afterwards.
 * Usage: node dist/bench/mineExport.js [MEGABYTES=100] [--context-chars N] [--keep]
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DEFAULT_CONTEXT_CHARS } from "../lean-bridge/dataset/context";
import { exportDataset } from "../lean-bridge/dataset/exporter";
import { readLineBytes } from "../lean-bridge/dataset/jsonl";
import { HOLE_KINDS } from "../lean-bridge/holes/mine";
import { generateMathlibLike } from "./mineCorpus";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const at = args.indexOf(name);
  return at < 0 ? undefined : args.splice(at, 2)[1];
};
const contextChars = Number(flag("--context-chars") ?? DEFAULT_CONTEXT_CHARS);
const keep = args.includes("--keep");
const megabytes = Number(args.find((a) => !a.startsWith("--")) ?? 100);

const root = mkdtempSync(join(tmpdir(), "fim-bench-export-"));
const workspace = join(root, "workspace");
const out = join(root, "dataset");
const mb = (bytes: number) => bytes / 1024 / 1024;
const line = (label: string, value: string) => process.stdout.write(`  ${label.padEnd(22)} ${value}\n`);

async function main(): Promise<void> {
  process.stdout.write(
    `bench:export — generating a Mathlib-shaped workspace of ${megabytes} MB in ${root}\n`,
  );
  const generated = generateMathlibLike(workspace, megabytes);
  const rssBefore = process.memoryUsage().rss;
  const wall0 = performance.now();
  const cpu0 = process.cpuUsage();
  const result = await exportDataset({
    workspace,
    out,
    kinds: [...HOLE_KINDS],
    seed: 0,
    maxFileBytes: 64 * 1024 * 1024,
    contextChars,
    formats: ["native"],
  });
  const cpu = process.cpuUsage(cpu0);
  const seconds = (performance.now() - wall0) / 1000;
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  if (result.kind !== "ok") throw new Error(`export failed: ${JSON.stringify(result)}`);
  const size = (name: string) => statSync(join(out, name)).size;
  const tasks = result.report.holes.kept.total;
  let longest = 0;
  for (const [, start, end] of readLineBytes(join(out, "tasks.jsonl")))
    longest = Math.max(longest, end - start);
  const workspaceMb = mb(generated.bytes);
  process.stdout.write(
    `bench:export — ${generated.files} files, ${workspaceMb.toFixed(1)} MB of Lean, ${tasks} tasks (${(tasks / workspaceMb).toFixed(0)} per MB), --context-chars ${contextChars}, one core\n`,
  );
  const ratio = size("tasks.jsonl") / generated.bytes;
  line(
    "tasks.jsonl",
    `${mb(size("tasks.jsonl")).toFixed(1)} MB = ${ratio.toFixed(2)}× the workspace (target <= 10×: ${ratio <= 10 ? "met" : "NOT met"})`,
  );
  line("per task", `${(size("tasks.jsonl") / tasks).toFixed(0)} bytes average, ${longest} longest line`);
  line(
    "contexts.jsonl",
    `${mb(size("contexts.jsonl")).toFixed(1)} MB = ${(size("contexts.jsonl") / generated.bytes).toFixed(2)}× (one row per declaration)`,
  );
  line(
    "files.jsonl",
    `${mb(size("files.jsonl")).toFixed(1)} MB = ${(size("files.jsonl") / generated.bytes).toFixed(2)}×`,
  );
  const speed = workspaceMb / seconds;
  const cpuSpeed = workspaceMb / cpuSeconds;
  line(
    "export",
    `${seconds.toFixed(1)} s wall = ${speed.toFixed(2)} MB/s; CPU time ${cpuSeconds.toFixed(1)} s (user ${(cpu.user / 1e6).toFixed(1)}, system ${(cpu.system / 1e6).toFixed(1)}) = ${cpuSpeed.toFixed(2)} MB/CPU-s (target >= 5: ${cpuSpeed >= 5 ? "met" : "NOT met"})`,
  );
  const peak = process.resourceUsage().maxRSS * 1024;
  line(
    "peak memory",
    `${mb(peak).toFixed(0)} MB resident (${mb(rssBefore).toFixed(0)} MB before the export)`,
  );
  const o = result.report.overlap;
  line(
    "split",
    `${o.splitMode}: ${o.trainingDropped} training tasks dropped; test ${o.test.tasks}, validation ${o.validation.tasks}`,
  );
}

main()
  .catch((error: unknown) => {
    process.stderr.write(`bench:export failed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  })
  .finally(() => {
    if (!keep) rmSync(root, { recursive: true, force: true });
  });
