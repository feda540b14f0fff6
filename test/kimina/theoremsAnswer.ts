/**
 * The Kimina stub's answers on the golden theorems (test/fixtures/import/theorems.jsonl), shared by the tests that
 * send them to `--verifier kimina:URL`: what Lean answers for the pre-check's `sorry` probe, an accepted proof,
 * and unsolved goals for anything else. Not Lean: a fixed table of answers.
 */
import type { KiminaMessage } from "../../lean-bridge/kimina/protocol";
import { printAxiomsLine, type StubAnswer } from "./stub";

/** Proofs the stub's answer function accepts; anything else gets Lean-style "unsolved goals". */
export const ACCEPTED = ["trivial", "exact ⟨hp, hp⟩"];

/**
 * A stand-in for Kimina's REPL on the golden theorems: `sorry` answers the warning and `sorryAx` among the
 * axioms (what Lean answers for the pre-check's probe), an accepted proof no axioms, anything else unsolved goals.
 */
export function answer(code: string): StubAnswer {
  const axiomsLine = printAxiomsLine(code);
  const head = code
    .split("\n")
    .slice(0, axiomsLine - 1)
    .join("\n");
  const name = /#print axioms _root_\.(\S+)/.exec(code)?.[1] ?? "?";
  const declLine = code.split("\n").findIndex((l) => /^\s*theorem\b/.test(l)) + 1;
  const axioms = (list: string[]): KiminaMessage => ({
    severity: "info",
    pos: { line: axiomsLine, column: 0 },
    endPos: { line: axiomsLine, column: 10 },
    data: list.length
      ? `'${name}' depends on axioms: [${list.join(", ")}]`
      : `'${name}' does not depend on any axioms`,
  });
  if (/\bsorry\b/.test(head))
    return {
      messages: [
        { severity: "warning", pos: { line: declLine, column: 8 }, data: "declaration uses 'sorry'" },
        axioms(["sorryAx"]),
      ],
    };
  if (ACCEPTED.some((p) => head.includes(p))) return { messages: [axioms([])] };
  return {
    messages: [
      { severity: "error", pos: { line: declLine + 1, column: 2 }, data: "unsolved goals\n⊢ False" },
      axioms(["sorryAx"]),
    ],
  };
}
