import { test } from "node:test";
import assert from "node:assert/strict";
import { rewardSignal } from "../../bench/rewardSignal";

const line = (step: number, task: string, reward: number, candidate = `c${reward}`) =>
  JSON.stringify({ step, task_id: task, reward, candidate });

test("groups are consecutive lines of one step and task; flat groups and all-failed ones are counted", () => {
  const text = [
    line(1, "a", 0),
    line(1, "a", 0), // flat, all failed
    line(1, "b", 1),
    line(1, "b", 0), // signal
    line(1, "c", 1, "rfl"),
    line(1, "c", 1, "decide"), // flat, all proved, two texts
    line(2, "a", 0),
    line(2, "a", 1), // signal: step 2 is another group
    "not json",
    line(2, "a", 0.0), // a repeat of task a in step 2 right after: the same group (still mixed)
    line(2, "d", 0),
    line(2, "a", 0), // task a drawn again after d: a group of its own, flat
    "",
  ].join("\n");
  // Distinct texts per group: a 1, b 2, c 2, step-2 a 2, d 1, the last a 1.
  assert.deepEqual(rewardSignal(text), { groups: 6, flat: 4, allFailed: 3, distinct: 9 });
});

test("an empty file has no groups", () => {
  assert.deepEqual(rewardSignal(""), { groups: 0, flat: 0, allFailed: 0, distinct: 0 });
});
