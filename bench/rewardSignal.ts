/**
 * How much learning signal an RL run had: the share of its groups (one task's completions at one step) whose
 * rewards were all equal. Group-relative objectives (GRPO, Dr. GRPO, DAPO, GSPO, DGPO) give such a group zero
 * advantage, so it trains nothing; expert iteration, by contrast, trains on every verified proof it has found so
 * far. Read from a run's samples.jsonl (one line per completion: step, task_id, reward); bench:seeds prints it per
 * seed beside the arms, the measurement behind "signal" as a reason RL trails another arm. How many different
 * completions a group held measures exploration: a sharpened policy samples one text eight times.
 */
import { readFileSync } from "node:fs";

export interface RewardSignal {
  /** Groups seen (distinct step and task pairs). */
  groups: number;
  /** Groups whose completions all got the same reward: no group-relative advantage. */
  flat: number;
  /** Of the flat groups, those where every completion failed (reward 0). */
  allFailed: number;
  /** Distinct completion texts summed over the groups (divided by `groups`: the mean per group). */
  distinct: number;
}

/**
 * The signal of the samples in `text` (samples.jsonl's lines, each group's completions on consecutive lines, as the
 * trainer writes them: a task drawn twice in one step is two groups); lines that do not parse are left out.
 */
export function rewardSignal(text: string): RewardSignal {
  const signal: RewardSignal = { groups: 0, flat: 0, allFailed: 0, distinct: 0 };
  let current: { key: string; min: number; max: number; texts: Set<string> } | undefined;
  const close = () => {
    if (!current) return;
    signal.groups++;
    signal.distinct += current.texts.size;
    if (current.min === current.max) {
      signal.flat++;
      if (current.max <= 0) signal.allFailed++;
    }
  };
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let row: { step?: unknown; task_id?: unknown; reward?: unknown; candidate?: unknown };
    try {
      row = JSON.parse(line) as typeof row;
    } catch {
      continue;
    }
    if (typeof row.reward !== "number" || typeof row.task_id !== "string") continue;
    const key = `${String(row.step)}\u0000${row.task_id}`;
    const text = typeof row.candidate === "string" ? row.candidate : "";
    if (current?.key === key) {
      current.min = Math.min(current.min, row.reward);
      current.max = Math.max(current.max, row.reward);
      current.texts.add(text);
    } else {
      close();
      current = { key, min: row.reward, max: row.reward, texts: new Set([text]) };
    }
  }
  close();
  return signal;
}

/** A run's signal from its samples.jsonl, or undefined when the file cannot be read. */
export function runRewardSignal(samplesPath: string): RewardSignal | undefined {
  try {
    return rewardSignal(readFileSync(samplesPath, "utf8"));
  } catch {
    return undefined;
  }
}
