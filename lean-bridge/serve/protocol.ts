/**
 * The key that keeps a hole's candidates on one service. The service's messages themselves (`verify/batch`,
 * `stats`, their error codes) are declared with everything else that crosses the language line, in
 * lean-bridge/protocol/trainer.ts (generated from trainer.schema.json, as trainer/fim_rlvr/core/wire.py is).
 */
import type { ServiceItem } from "../protocol/trainer";

/** The key that keeps a hole's GRPO group on one service (its snapshots live there). */
export function holeKey(item: ServiceItem): string {
  if ("file" in item) {
    const { start, end } = item.hole;
    return `${item.file}@${start.line}:${start.character}-${end.line}:${end.character}`;
  }
  return `task:${item.taskId}`;
}
