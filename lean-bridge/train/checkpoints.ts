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
