/**
 * Answers the trainer's `verify/batch`: each item's task is looked up by id in the dataset, the candidates go
 * through the verifier pool together (so a GRPO group shares one slot and duplicates share one check), and
 * each verdict becomes a reward. A failure of the verifier itself never fails the batch: those items get a
 * `crashed` verdict, which the trainer masks out.
 */
import type { TaskRecord } from "../dataset/records";
import type {
  BatchVerdict,
  VerdictKind,
  VerifierIdentity,
  VerifyBatchParams,
  VerifyBatchResult,
} from "../protocol/trainer";
import { batchVerdict, bareVerdict } from "../serve/wire";
import type { RewardMode } from "../verify/rewards";
import type { Verdict } from "../verify/verdict";
import type { VerifyTask } from "../verify/pool";

/** What the relay needs of a verifier (the pool, or a stand-in in benchmarks). */
export interface BatchVerifier {
  readonly identity: VerifierIdentity;
  readonly stats: { checks: number; cacheHits: number };
  verifyMany(
    items: readonly { task: VerifyTask; candidate: string }[],
    onProgress?: (done: number, total: number, verdict: Verdict) => void,
    signal?: AbortSignal,
  ): Promise<Verdict[]>;
}

export interface RelayStats {
  batches: number;
  items: number;
  /** Milliseconds spent answering batches (wall time, overlapping batches counted once each). */
  busyMs: number;
}

export class VerifyRelay {
  readonly stats: RelayStats = { batches: 0, items: 0, busyMs: 0 };

  constructor(
    private readonly verifier: BatchVerifier,
    /** The run's tasks by id (its dataset's index: each read from disk when a batch names it). */
    private readonly tasks: { get(id: string): TaskRecord | undefined },
    private readonly files: ReadonlyMap<string, string>,
    private readonly reward: RewardMode,
  ) {}

  async verifyBatch(params: VerifyBatchParams, signal?: AbortSignal): Promise<VerifyBatchResult> {
    const started = performance.now();
    const verdicts: (BatchVerdict | undefined)[] = new Array(params.items.length);
    const work: { task: VerifyTask; candidate: string }[] = [];
    const workIndex: number[] = [];
    params.items.forEach((item, k) => {
      const task = this.tasks.get(item.taskId);
      if (!task) {
        verdicts[k] = this.bare(
          item.taskId,
          "rejected",
          `unknown task id ${item.taskId}: not in this run's dataset`,
        );
        return;
      }
      const text = this.files.get(task.file);
      work.push({
        task: { file: task.file, hole: task.range, ...(text !== undefined ? { text } : {}) },
        candidate: item.candidate,
      });
      workIndex.push(k);
    });
    let results: Verdict[] = [];
    let failure: string | undefined;
    try {
      results = await this.verifier.verifyMany(work, undefined, signal);
    } catch (error) {
      failure = `the verifier failed: ${error instanceof Error ? error.message : String(error)}`;
    }
    workIndex.forEach((k, j) => {
      const verdict = results[j];
      const item = params.items[k]!;
      verdicts[k] = verdict
        ? batchVerdict(item.taskId, verdict, this.reward)
        : this.bare(
            item.taskId,
            "crashed",
            failure ?? "verification was stopped before this candidate was checked",
          );
    });
    this.stats.batches++;
    this.stats.items += params.items.length;
    this.stats.busyMs += performance.now() - started;
    return { verdicts: verdicts as BatchVerdict[] };
  }

  private bare(taskId: string, kind: VerdictKind, message: string): BatchVerdict {
    return bareVerdict(taskId, kind, message, this.verifier.identity);
  }
}
