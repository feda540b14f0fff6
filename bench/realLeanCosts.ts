/**
 * The one source of the costs the benchmarks' models charge: bench/realLeanCosts.json, measured on the embedded
 * Lean by `npm run bench:verify -- calibrate` (bench/calibrateRealLean.ts). The simulator sections of bench:verify,
 * bench:gate and the LeanInteract and Kimina models (bench/replModel.ts) take their costs from `modelCosts()` here,
 * never from constants of their own, and print `provenance()` beside their figures.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "../test/helpers";

export const CALIBRATION_PATH = join(REPO, "bench", "realLeanCosts.json");
export const CALIBRATION_COMMAND = "npm run bench:verify -- calibrate";

/** One fitted figure and how it was measured. */
export interface Figure {
  ms: number;
  measured: string;
}

/** A figure the embedded Lean cannot give, with where it comes from instead. */
export interface SourcedFigure {
  ms: number;
  source: string;
}

export const COST_NAMES = [
  "processStartMs",
  "freshHeaderMs",
  "freshDeclarationMs",
  "serverHeaderMs",
  "serverDeclarationMs",
  "editMs",
  "editPerDeclarationAboveMs",
  "prefixCheckMs",
  "kernelGateMs",
  "kernelGatePerDeclarationAboveMs",
] as const;
export type CostName = (typeof COST_NAMES)[number];

export interface Calibration {
  schema: 1;
  /** `lean --version`'s first line. */
  lean: string;
  leanRelease: string;
  runtime: "embedded";
  workspace: string;
  /** How each figure was taken from its runs. */
  method: string;
  /** ISO 8601, when the calibration finished. */
  measuredAt: string;
  command: string;
  machine: {
    cpus: number;
    cpuModel: string;
    memoryGiB: number;
    platform: string;
    loadAverageBefore: number[];
    loadAverageAfter: number[];
  };
  costs: Record<CostName, Figure>;
  notMeasured: { mathlibHeaderMs: SourcedFigure };
}

export type CalibrationRead =
  { kind: "ok"; calibration: Calibration } | { kind: "invalid"; problems: string[] };

const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === "object" && x !== null && !Array.isArray(x);
const isMs = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0;
const isText = (x: unknown): x is string => typeof x === "string" && x.length > 0;

/** Checks a parsed calibration file; every problem is named, none is thrown. */
export function validateCalibration(raw: unknown): CalibrationRead {
  const problems: string[] = [];
  if (!isRecord(raw)) return { kind: "invalid", problems: ["the file is not a JSON object"] };
  if (raw.schema !== 1) problems.push(`schema is ${JSON.stringify(raw.schema)}, expected 1`);
  for (const key of ["lean", "leanRelease", "workspace", "method", "measuredAt", "command"])
    if (!isText(raw[key])) problems.push(`${key} is missing or empty`);
  if (raw.runtime !== "embedded")
    problems.push(`runtime is ${JSON.stringify(raw.runtime)}, expected "embedded"`);
  if (isText(raw.measuredAt) && Number.isNaN(Date.parse(raw.measuredAt)))
    problems.push(`measuredAt "${raw.measuredAt}" is not a date`);
  const machine = raw.machine;
  if (!isRecord(machine)) problems.push("machine is missing");
  else {
    if (!isMs(machine.cpus) || machine.cpus < 1) problems.push("machine.cpus is not a count");
    for (const key of ["loadAverageBefore", "loadAverageAfter"]) {
      const load = machine[key];
      if (!Array.isArray(load) || load.length !== 3 || !load.every(isMs))
        problems.push(`machine.${key} is not three load averages`);
    }
  }
  const costs = raw.costs;
  if (!isRecord(costs)) problems.push("costs is missing");
  else {
    for (const name of COST_NAMES) {
      const f = costs[name];
      if (!isRecord(f) || !isMs(f.ms) || !isText(f.measured))
        problems.push(`costs.${name} is not {ms >= 0, measured}`);
    }
    for (const name of Object.keys(costs))
      if (!(COST_NAMES as readonly string[]).includes(name))
        problems.push(`costs.${name} is not a known cost`);
  }
  const mathlib = isRecord(raw.notMeasured) ? raw.notMeasured.mathlibHeaderMs : undefined;
  if (!isRecord(mathlib) || !isMs(mathlib.ms) || !isText(mathlib.source))
    problems.push("notMeasured.mathlibHeaderMs is not {ms >= 0, source}");
  return problems.length > 0
    ? { kind: "invalid", problems }
    : { kind: "ok", calibration: raw as unknown as Calibration };
}

let loaded: Calibration | undefined;

/**
 * The committed calibration. A missing or malformed file is a broken checkout, not an input: it throws, saying
 * what is wrong and the command that writes the file again.
 */
export function calibration(path = CALIBRATION_PATH): Calibration {
  if (loaded && path === CALIBRATION_PATH) return loaded;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new Error(
      `${path} cannot be read (${error instanceof Error ? error.message : String(error)}); write it with ${CALIBRATION_COMMAND}`,
      { cause: error },
    );
  }
  const read = validateCalibration(raw);
  if (read.kind === "invalid")
    throw new Error(
      `${path} is malformed: ${read.problems.join("; ")}; write it again with ${CALIBRATION_COMMAND}`,
    );
  if (path === CALIBRATION_PATH) loaded = read.calibration;
  return read.calibration;
}

/** "calibrated on Lean 4.35.0 embedded, 2026-12-02 (npm run bench:verify -- calibrate)". */
export function provenance(c: Calibration = calibration()): string {
  return `calibrated on Lean ${c.leanRelease} ${c.runtime}, ${c.measuredAt.slice(0, 10)} (${c.command})`;
}

/** The costs of a Lean server the simulator plays: its `--header-ms`, `--decl-ms` and `--edit-ms`. */
export interface ServerCosts {
  /** A document's worker started and its header loaded, ms. */
  headerMs: number;
  /** One declaration elaborated, ms. */
  declMs: number;
  /** A document change's fixed cost, besides the declarations it elaborates, ms. */
  editMs: number;
}

/** What each model charges, all from the calibration. */
export interface ModelCosts {
  /** Lean's language server (the simulator's settings; the REPL models charge the same). */
  server: ServerCosts;
  /** A fresh `lean` process (the kernel gate's compile and replay processes): start and header, per declaration. */
  fresh: { headerMs: number; declMs: number };
  /** Lean's server with Mathlib's header in place of the prelude's (a figure not measured here). */
  mathlibHeaderMs: number;
}

/**
 * The models' costs, in whole milliseconds: the simulator's settings take whole numbers (and its timers are no
 * finer), and every side of a comparison is charged the same rounded figures.
 */
export function modelCosts(c: Calibration = calibration()): ModelCosts {
  const k = c.costs;
  const ms = Math.round;
  return {
    server: {
      headerMs: ms(k.serverHeaderMs.ms),
      declMs: ms(k.serverDeclarationMs.ms),
      editMs: ms(k.editMs.ms),
    },
    fresh: { headerMs: ms(k.processStartMs.ms + k.freshHeaderMs.ms), declMs: ms(k.freshDeclarationMs.ms) },
    mathlibHeaderMs: ms(c.notMeasured.mathlibHeaderMs.ms),
  };
}

/** The simulator's command-line settings for these server costs. */
export function simulatorArgs(costs: ServerCosts): string[] {
  return [
    "--header-ms",
    String(costs.headerMs),
    "--decl-ms",
    String(costs.declMs),
    "--edit-ms",
    String(costs.editMs),
  ];
}
