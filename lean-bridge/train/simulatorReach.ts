/**
 * What the simulator can reward in a run's training split. The simulator is no prover: it accepts a declaration's
 * own proof in the workspace (modulo layout) and the proofs its oracle lists (`fim-oracle.json`, `--oracle`). A
 * task without a reference (`"reference": false`: a `sorry` in the workspace, an imported statement without a
 * proof) whose declaration the oracle does not list can never earn reward through it, however the model answers:
 * training on it spends samples on zeros. The run says so before it starts, before it has spent anything.
 */
import { join } from "node:path";
import { readJsonl } from "../dataset/jsonl";
import type { OracleFile } from "../simulator/reference";

export interface SimulatorReach {
  /** Training tasks. */
  training: number;
  /** Training tasks without a reference proof. */
  withoutReference: number;
  /** Of those, the ones the oracle lists a proof for (so the simulator can judge a new answer). */
  coveredByOracle: number;
  /** A few declarations the simulator cannot judge, for the message. */
  examples: string[];
}

export function simulatorReach(datasetDir: string, oracle: OracleFile): SimulatorReach {
  const reach: SimulatorReach = { training: 0, withoutReference: 0, coveredByOracle: 0, examples: [] };
  const listed = oracle.alternatives ?? {};
  for (const task of readJsonl<{ split?: string; reference?: boolean; decl?: string }>(
    join(datasetDir, "tasks.jsonl"),
  )) {
    if (task.split !== "train") continue;
    reach.training++;
    if (task.reference !== false) continue;
    reach.withoutReference++;
    if (task.decl !== undefined && (listed[task.decl]?.length ?? 0) > 0) reach.coveredByOracle++;
    else if (reach.examples.length < 3 && task.decl !== undefined) reach.examples.push(task.decl);
  }
  return reach;
}

/** What to tell the user, or nothing when the simulator can judge every training task. */
export function reachWarning(
  reach: SimulatorReach,
): { message: string; nothingToLearn: boolean } | undefined {
  const blind = reach.withoutReference - reach.coveredByOracle;
  if (blind === 0) return undefined;
  const nothingToLearn = blind === reach.training;
  return {
    nothingToLearn,
    message:
      `${blind} of ${reach.training} training tasks have no reference proof and no proof in the simulator's oracle ` +
      `(${reach.examples.join(", ")}${blind > reach.examples.length ? ", …" : ""}): the simulator cannot judge a new ` +
      `proof, so they can only earn 0${nothingToLearn ? ", and no training task can earn anything" : ""}. ` +
      "Verify with Lean (install elan so that `lake` is on PATH, and drop --simulator), or give the simulator an " +
      'oracle of accepted proofs (--oracle FILE, or fim-oracle.json in the project: README, "The simulator").',
  };
}
