/**
 * Which checkpoint of a run folder is the latest: the one rule the host, the editor and the trainer share
 * (trainer/fim_rlvr/model/checkpoint.py `latest` follows it too; both are run against test/fixtures/latest-checkpoint.json).
 * A checkpoint is complete once its `state.json` is in place (it is written last, and the folder renamed into place).
 */
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** What the rule reads; node's file system by default (the editor passes its own for tests). */
export interface CheckpointFs {
  exists(path: string): boolean;
  /** Names of the sub-folders of `dir` (empty when unreadable). */
  subfolders(dir: string): string[];
  /** The file's text, or undefined when it cannot be read. */
  readText(path: string): string | undefined;
}

const nodeFs: CheckpointFs = {
  exists: existsSync,
  subfolders(dir) {
    try {
      return readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory());
    } catch {
      return [];
    }
  },
  readText(path) {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  },
};

/** The newest complete checkpoints a run keeps, besides step-0 (trainer/fim_rlvr/model/checkpoint.py `KEEP`). */
export const CHECKPOINTS_KEPT = 3;

/**
 * The retention rule the trainer follows when it writes a checkpoint: the CHECKPOINTS_KEPT newest steps and step-0
 * (the policy after the SFT warm start, before any RL step), sorted. Shared with trainer/fim_rlvr/model/checkpoint.py
 * `kept_steps`; both run against test/fixtures/checkpoint-retention.json.
 */
export function keptCheckpointSteps(steps: readonly number[]): number[] {
  const ordered = [...new Set(steps)].sort((a, b) => a - b);
  const kept = new Set(ordered.slice(-CHECKPOINTS_KEPT));
  if (ordered.includes(0)) kept.add(0);
  return [...kept].sort((a, b) => a - b);
}

/** The step of a checkpoint folder's name (`step-N`), or undefined for anything else (temporaries, strays). */
function stepOf(name: string): number | undefined {
  const m = /^step-(\d+)$/.exec(name);
  return m ? Number(m[1]) : undefined;
}

/**
 * The newest complete checkpoint of a run folder: the `step-N` folder that `checkpoints/latest` names when it is
 * complete, else the complete `step-N` folder with the highest N; null when there is none.
 */
export function latestCheckpoint(runDir: string, fs: CheckpointFs = nodeFs): string | null {
  const root = join(runDir, "checkpoints");
  const complete = (name: string) => stepOf(name) !== undefined && fs.exists(join(root, name, "state.json"));
  const named = fs.readText(join(root, "latest"))?.trim();
  if (named && complete(named)) return join(root, named);
  const steps = fs
    .subfolders(root)
    .filter(complete)
    .sort((a, b) => stepOf(a)! - stepOf(b)!);
  const last = steps[steps.length - 1];
  return last !== undefined ? join(root, last) : null;
}
