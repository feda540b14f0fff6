/**
 * The benchmarks' one source of costs: the committed bench/realLeanCosts.json (written by `npm run bench:verify --
 * calibrate` on the embedded Lean) is well-formed, the models read it, and the benchmarks hold no cost constants
 * of their own. No Lean is run here.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { EMBEDDED_LEAN_RELEASE } from "../../lean-bridge/embedded/install";
import { ReplPoolModel } from "../../bench/replModel";
import { fitLine } from "../../bench/calibrateRealLean";
import {
  CALIBRATION_COMMAND,
  CALIBRATION_PATH,
  COST_NAMES,
  calibration,
  modelCosts,
  provenance,
  simulatorArgs,
  validateCalibration,
} from "../../bench/realLeanCosts";
import { REPO } from "../helpers";

const committed = () => JSON.parse(readFileSync(CALIBRATION_PATH, "utf8")) as Record<string, unknown>;

test("the committed calibration is well-formed and names the embedded Lean, the command, the date and the machine", () => {
  const read = validateCalibration(committed());
  assert.equal(read.kind, "ok", read.kind === "invalid" ? read.problems.join("; ") : "");
  const c = calibration();
  assert.equal(c.leanRelease, EMBEDDED_LEAN_RELEASE);
  assert.match(c.lean, new RegExp(`^Lean \\(version ${EMBEDDED_LEAN_RELEASE.replace(/\./g, "\\.")}`));
  assert.equal(c.command, CALIBRATION_COMMAND);
  assert.ok(c.machine.cpus >= 1);
  assert.match(
    provenance(c),
    new RegExp(`^calibrated on Lean ${EMBEDDED_LEAN_RELEASE} embedded, \\d{4}-\\d\\d-\\d\\d `),
  );
  // Mathlib's header is not the embedded Lean's to measure: it says where it comes from instead.
  assert.match(c.notMeasured.mathlibHeaderMs.source, /LEAN_PROTOCOL\.md/);
});

test("a malformed calibration is refused with every problem named", () => {
  const bad = committed();
  const costs = { ...(bad.costs as Record<string, unknown>) };
  delete costs.editMs;
  costs.serverDeclarationMs = { ms: -1, measured: "x" };
  costs.guessedMs = { ms: 1, measured: "x" };
  const read = validateCalibration({ ...bad, costs, schema: 2, machine: { cpus: 2 } });
  assert.equal(read.kind, "invalid");
  const problems = read.kind === "invalid" ? read.problems.join("\n") : "";
  for (const expected of [
    /schema is 2/,
    /costs\.editMs/,
    /costs\.serverDeclarationMs/,
    /costs\.guessedMs is not a known cost/,
    /machine\.loadAverageBefore/,
  ])
    assert.match(problems, expected);
  assert.equal(validateCalibration([]).kind, "invalid");
  assert.throws(() => calibration(join(REPO, "no-such-calibration.json")), /bench:verify -- calibrate/);
});

test("the models' costs come from the file: the simulator's settings, the REPL models' defaults, the gate's", () => {
  const c = calibration();
  const k = c.costs;
  const costs = modelCosts(c);
  assert.deepEqual(costs.server, {
    headerMs: Math.round(k.serverHeaderMs.ms),
    declMs: Math.round(k.serverDeclarationMs.ms),
    editMs: Math.round(k.editMs.ms),
  });
  assert.deepEqual(costs.fresh, {
    headerMs: Math.round(k.processStartMs.ms + k.freshHeaderMs.ms),
    declMs: Math.round(k.freshDeclarationMs.ms),
  });
  assert.equal(costs.mathlibHeaderMs, Math.round(c.notMeasured.mathlibHeaderMs.ms));
  assert.deepEqual(simulatorArgs(costs.server), [
    "--header-ms",
    String(costs.server.headerMs),
    "--decl-ms",
    String(costs.server.declMs),
    "--edit-ms",
    String(costs.server.editMs),
  ]);
  assert.deepEqual(
    new ReplPoolModel(1).costs,
    costs.server,
    "LeanInteract's model defaults to the calibration",
  );
  assert.equal(COST_NAMES.length, Object.keys(k).length);
});

test("the benchmarks that model Lean's costs hold no cost constants of their own", () => {
  // A zero is a design, not a cost (Kimina's cached imports load for nothing), so only other literals count.
  for (const file of ["bench/verify.ts", "bench/kernelGate.ts", "bench/replModel.ts"]) {
    const text = readFileSync(join(REPO, file), "utf8");
    assert.doesNotMatch(text, /"--(header|decl|edit)-ms",\s*"?\d/, `${file} passes a literal simulator cost`);
    assert.doesNotMatch(
      text,
      /\b(headerMs|declMs|editMs|perCheckMs):\s*[1-9]/,
      `${file} holds a literal cost`,
    );
    assert.doesNotMatch(text, /\b(headerMs|declMs|perCheckMs)\s*=\s*"?\d/, `${file} holds a literal cost`);
  }
  const verify = readFileSync(join(REPO, "bench/verify.ts"), "utf8");
  assert.match(verify, /provenance\(/, "bench:verify says where its costs come from");
  assert.match(readFileSync(join(REPO, "bench/kernelGate.ts"), "utf8"), /provenance\(/);
});

test("the calibration's line fit: least squares, and no slope where every run had the same size", () => {
  assert.deepEqual(
    fitLine([
      [0, 1],
      [1, 3],
      [2, 5],
    ]),
    { intercept: 1, slope: 2 },
  );
  const noisy = fitLine([
    [0, 52],
    [100, 233],
    [400, 719],
  ]);
  assert.ok(Math.abs(noisy.slope - 1.66) < 0.01, String(noisy.slope));
  assert.deepEqual(
    fitLine([
      [5, 10],
      [5, 14],
    ]),
    { intercept: 12, slope: 0 },
  );
});
