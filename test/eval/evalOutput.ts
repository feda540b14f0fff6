/** Reading what `fim-rlvr eval` wrote to its output folder, and comparing its pass@k figures. */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { EvalSummary, ResultLine } from "../../lean-bridge/eval/records";

export function summaryOf(outDir: string): EvalSummary {
  return JSON.parse(readFileSync(join(outDir, "summary.json"), "utf8")) as EvalSummary;
}

export function resultsOf(outDir: string): ResultLine[] {
  return readFileSync(join(outDir, "results.jsonl"), "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as ResultLine);
}

/** A pass@k figure equals the hand-computed one (up to floating point); null or absent fails. */
export function near(actual: number | null | undefined, expected: number): void {
  assert.ok(typeof actual === "number" && Math.abs(actual - expected) < 1e-9, `${actual} ≈ ${expected}`);
}
