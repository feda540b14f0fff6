/**
 * Reading a training run's folder from the extension: its record files (for the dashboard's history), the
 * declarations of its tasks (for the FIM Holes rows), and the file access the host's checkpoint rule needs.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

/** The declaration of each task of the run's dataset (RUN_DIR/dataset/tasks.jsonl), for the FIM Holes rows. */
export function declarationsOf(runDir: string): Map<string, string> {
  const decls = new Map<string, string>();
  const text = fileFs.readText(join(runDir, "dataset", "tasks.jsonl"));
  for (const line of text?.split("\n") ?? []) {
    try {
      const task = JSON.parse(line) as { id?: unknown; decl?: unknown };
      if (typeof task.id === "string" && typeof task.decl === "string") decls.set(task.id, task.decl);
    } catch {
      // A blank or torn line: that hole's row shows its line and kind only.
    }
  }
  return decls;
}

export const fileFs = {
  exists: (path: string) => existsSync(path),
  readText: (path: string) => {
    try {
      return readFileSync(path, "utf8");
    } catch {
      return undefined;
    }
  },
  subfolders: (dir: string) => {
    try {
      return readdirSync(dir).filter((name) => statSync(join(dir, name)).isDirectory());
    } catch {
      return [];
    }
  },
};

/** A run folder's record files, as the dashboard's history reads them. */
export function runFiles(runDir: string) {
  return {
    metrics: fileFs.readText(join(runDir, "metrics.jsonl")),
    samples: fileFs.readText(join(runDir, "samples.jsonl")),
    evals: fileFs.readText(join(runDir, "eval.json")),
    config: fileFs.readText(join(runDir, "config.json")),
  };
}
