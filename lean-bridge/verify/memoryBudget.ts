/** How many Lean workers fit in memory: each may use its -M, and all of them together the budget. */
import { totalmem } from "node:os";

/** Three quarters of this machine's memory (MB): what all workers together may use by default. */
export function defaultMemoryBudgetMb(): number {
  return Math.floor((totalmem() / 1024 / 1024) * 0.75);
}

/** The slots the budget allows: at least one, at most the number wanted. */
export function effectiveSlots(wanted: number, perWorkerMb: number, budgetMb: number): number {
  return Math.max(1, Math.min(wanted, Math.floor(budgetMb / Math.max(1, perWorkerMb))));
}
