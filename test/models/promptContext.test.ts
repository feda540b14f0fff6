/**
 * The prompt's prefix within its budget (promptContext.ts, the trainer's prompt_context.py): the file's header
 * first, the goal comment whole or not at all (never a bare `⊢` line), the statement always, the hole's line kept.
 * The Python side has the same checks (trainer/tests/test_prompts_clean.py); promptParity.test.ts compares both.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { fitPrefix, promptHeader } from "../../lean-bridge/models/promptContext";
import { goalComment } from "../../lean-bridge/models/prompts";

// One token per UTF-16 unit: budgets are lengths.
const count = (text: string) => text.length;
const offsets = (text: string): [number, number][] => [...text].map((_, i) => [i, i + 1]);

const STATEMENT = "theorem y (a b : Nat) (hab : a < b) : a ≤ b";
const PREFIX =
  promptHeader(["Mathlib"], ["namespace Ns", "section Fam", "open Nat"], ["variable (n : Nat)"]) +
  `${STATEMENT} := by\n  have h : a < b := hab\n  `;
const GOAL = goalComment("a b : Nat\nhab : a < b\nh : a < b\n⊢ a ≤ b", 2);

test("the header is the file's imports, scope and variables, then a blank line", () => {
  assert.equal(
    promptHeader(["Mathlib"], ["namespace Ns", "open Nat"], ["variable (n : Nat)"]),
    "import Mathlib\nnamespace Ns\nopen Nat\nvariable (n : Nat)\n\n",
  );
  assert.equal(promptHeader([], [], []), "");
});

test("the goal is kept whole or left out, above the hole's line; the statement and the hole's line stay", () => {
  const goalLines = GOAL.trimEnd().split("\n");
  let whole = 0;
  let none = 0;
  for (let budget = 20; budget < 400; budget += 3) {
    const fitted = fitPrefix(PREFIX, STATEMENT, count, offsets, budget, GOAL);
    assert.ok(fitted.length <= budget, `budget ${budget}`);
    const lines = fitted.split("\n");
    const present = goalLines.map((l) => lines.includes(l));
    assert.ok(
      present.every(Boolean) || !present.some(Boolean),
      `budget ${budget}: ${JSON.stringify(fitted)}`,
    );
    if (present.every(Boolean)) {
      whole++;
      assert.ok(fitted.endsWith(`${GOAL}  `), "the goal sits just above the hole's line");
    } else none++;
    if (budget > `${STATEMENT} := by\n  `.length)
      assert.ok(fitted.includes(`${STATEMENT} := by\n`), `${budget}`);
  }
  assert.ok(whole > 0 && none > 0);
  // With room for the statement, the goal and the hole's line only: the goal is in, the header is not.
  const tight = fitPrefix(
    PREFIX,
    STATEMENT,
    count,
    offsets,
    `${STATEMENT} := by\n`.length + GOAL.length + 2,
    GOAL,
  );
  assert.equal(tight, `${STATEMENT} := by\n${GOAL}  `);
});
