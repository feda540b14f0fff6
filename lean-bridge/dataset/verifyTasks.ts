/**
 * Export pass 2 (with --verify): checks each pending hole's own middle through the verifier pool and keeps
 * only those Lean proves. Tasks stream from the pending file in batches; a batch holds the texts of its
 * own files only.
 */
import type { Verifier as VerifierPool } from "../verify/verifier";
import { FileTextCursor, readJsonl, type JsonlWriter } from "./jsonl";
import { declKeyOf, type TaskRecord } from "./records";
import { declarationKey } from "./split";

/** Enough checks in flight to keep every slot busy, few enough to keep their file texts small. */
const BATCH = 256;

export interface VerificationReport {
  verifier: string;
  checked: number;
  kept: number;
  dropped: number;
  droppedByReason: Record<string, number>;
  examples: { id: string; kind: string; reason: string }[];
}

export async function verifyPending(
  pool: VerifierPool,
  pendingPath: string,
  filesPath: string,
  total: number,
  keptOut: JsonlWriter,
  options: { signal?: AbortSignal; onProgress?: (done: number, total: number) => void },
): Promise<
  { kind: "ok"; report: VerificationReport; tasksPerDecl: Map<string, number> } | { kind: "cancelled" }
> {
  const texts = new FileTextCursor(filesPath);
  const report: VerificationReport = {
    verifier: pool.identity.label,
    checked: 0,
    kept: 0,
    dropped: 0,
    droppedByReason: {},
    examples: [],
  };
  const tasksPerDecl = new Map<string, number>();
  let batch: { task: TaskRecord; text: string }[] = [];
  const flush = async () => {
    const done = report.checked;
    const verdicts = await pool.verifyMany(
      batch.map(({ task, text }) => ({
        task: { file: task.file, hole: task.range, text },
        candidate: task.middle,
      })),
      (d) => options.onProgress?.(done + d, total),
      options.signal,
    );
    if (options.signal?.aborted) return;
    batch.forEach(({ task }, k) => {
      const v = verdicts[k]!;
      report.checked++;
      if (v.kind === "proved") {
        keptOut.write(task);
        report.kept++;
        const key = declarationKey(task.file, declKeyOf(task));
        tasksPerDecl.set(key, (tasksPerDecl.get(key) ?? 0) + 1);
        return;
      }
      report.dropped++;
      report.droppedByReason[v.kind] = (report.droppedByReason[v.kind] ?? 0) + 1;
      const reason = "reason" in v ? `${v.kind}: ${String(v.reason).split("\n")[0]}` : v.kind;
      if (report.examples.length < 20) report.examples.push({ id: task.id, kind: v.kind, reason });
    });
    batch = [];
  };
  try {
    for (const task of readJsonl<TaskRecord>(pendingPath)) {
      batch.push({ task, text: texts.textOf(task.file) });
      if (batch.length >= BATCH) await flush();
      if (options.signal?.aborted) return { kind: "cancelled" };
    }
    if (batch.length) await flush();
    if (options.signal?.aborted) return { kind: "cancelled" };
    return { kind: "ok", report, tasksPerDecl };
  } finally {
    texts.close();
  }
}
