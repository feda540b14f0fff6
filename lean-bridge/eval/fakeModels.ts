/**
 * Scripted models for tests of `fim-rlvr eval` end to end (`--model fake:pattern:LETTERS`): a FakeBackend whose
 * sample i writes what letter i (cycling) says, so a test knows every outcome in advance and checks the figures
 * against hand-computed ones. Not a model: the CLI names it `fake:` in every record.
 *
 *   r  the task's own proof (its `middle`; the simulator accepts it)
 *   s  `sorry`
 *   x  a tactic that does not exist here (a Lean error)
 *   f  wrong at first (`exact fim_rlvr_fixable`), the task's own proof on a repair turn
 *   e  the request fails once for this hole (a server error: infrastructure, retried), then as `r`
 *   E  every request for this hole fails (connection refused: infrastructure, reported apart)
 */
import type { ModelBackend, PromptParts } from "../models/backend";
import { FakeBackend, type ScriptedAnswer } from "../models/fakeBackend";
import { REPAIR_HEADER, withoutRepairFeedback } from "./repair";

const LETTERS = "rsxfeE";
const FIXABLE = "exact fim_rlvr_fixable";

export type FakeModel = { kind: "ok"; backend: ModelBackend } | { kind: "error"; message: string };

/** The scripted model `NAME` of `fake:NAME`; `reference` finds a task's own proof by its prompt parts. */
export function openFakeModel(
  name: string,
  reference: (parts: PromptParts) => string | undefined,
): FakeModel {
  const match = /^pattern:(.+)$/.exec(name);
  if (!match || [...match[1]!].some((c) => !LETTERS.includes(c)))
    return {
      kind: "error",
      message: `unknown scripted model "fake:${name}": write fake:pattern:LETTERS with letters from ${LETTERS} (tests only)`,
    };
  const pattern = match[1]!;
  const failedOnce = new Set<string>();
  const script = (parts: PromptParts, index: number): ScriptedAnswer => {
    const task = withoutRepairFeedback(parts.prefix);
    const proof = reference({ ...parts, prefix: task }) ?? "exact fim_rlvr_unknown_task";
    if (parts.prefix.includes(REPAIR_HEADER))
      return parts.prefix.includes(FIXABLE) ? proof : "exact fim_rlvr_still_wrong";
    const letter = pattern[index % pattern.length]!;
    switch (letter) {
      case "r":
        return proof;
      case "s":
        return "sorry";
      case "x":
        return "exact fim_rlvr_no_such_lemma";
      case "f":
        return FIXABLE;
      case "e": {
        const key = `${task}\0${parts.suffix}`;
        if (failedOnce.has(key)) return proof;
        failedOnce.add(key);
        return { error: "server", message: "Scripted server error (HTTP 503)." };
      }
      default:
        return { error: "connection", message: "Scripted connection refused." };
    }
  };
  return { kind: "ok", backend: new FakeBackend(script, { name }) };
}
