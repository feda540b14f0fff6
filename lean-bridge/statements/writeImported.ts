/**
 * Import pass 3: splits by declaration (the export's seeded, balanced assignment), then tasks.jsonl streamed
 * from the pending tasks. Held-out tasks say whether their middle is `novel` (no training task has it);
 * statement-only tasks have no middle to compare (their statements are unique: duplicates were dropped).
 */
import { createHash } from "node:crypto";
import type { StagingDir } from "../dataset/atomicDir";
import { JsonlWriter, readJsonl } from "../dataset/jsonl";
import { declKeyOf } from "../dataset/records";
import { assignSplits, declarationKey } from "../dataset/split";
import { normalisedCode } from "../lean/sameCode";
import type { ImportedTask } from "./importedTasks";
import type { ImportReport } from "./report";

function middleDigest(middle: string): string {
  return createHash("sha1").update(normalisedCode(middle)).digest("base64");
}

export function writeImportedTasks(
  staging: StagingDir,
  pendingPath: string,
  tasksPerDecl: ReadonlyMap<string, number>,
  seed: number,
): ImportReport["tasks"] {
  const splits = assignSplits(seed, tasksPerDecl);
  const splitOf = (t: ImportedTask) => splits.get(declarationKey(t.file, declKeyOf(t))) ?? "train";
  const training = new Set<string>();
  for (const t of readJsonl<ImportedTask>(pendingPath))
    if (t.reference !== false && splitOf(t) === "train") training.add(middleDigest(t.middle));
  const written: ImportReport["tasks"] = {
    total: 0,
    byKind: {},
    bySplit: { train: 0, validation: 0, test: 0 },
    statementOnly: 0,
    heldOutSeenInTraining: 0,
  };
  const out = new JsonlWriter(staging.file("tasks.jsonl"));
  try {
    for (const pending of readJsonl<ImportedTask>(pendingPath)) {
      const split = splitOf(pending);
      const task: ImportedTask = { ...pending, split };
      if (split !== "train") {
        task.novel = pending.reference === false || !training.has(middleDigest(pending.middle));
        if (!task.novel) written.heldOutSeenInTraining++;
      }
      out.write(task);
      written.total++;
      written.byKind[task.kind] = (written.byKind[task.kind] ?? 0) + 1;
      written.bySplit[split] = (written.bySplit[split] ?? 0) + 1;
      if (task.reference === false) written.statementOnly++;
    }
  } finally {
    out.close();
  }
  return written;
}
