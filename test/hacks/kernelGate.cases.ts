/**
 * The battery's kernel-gate class (issue 23): proofs Lean's server accepts because something the proof depends
 * on never met the kernel, or is an axiom the document declared. Each attack closes a false goal
 * (`(2 : Nat) + 2 = 5`) by citing such a declaration: one a command above added under `debug.skipKernelTC`
 * (the pattern of Lean's own `leanchecker` negative control), a document-level `axiom`, one a metaprogram in the
 * candidate adds without the kernel, and an axiom a metaprogram in the candidate adds. The candidate's
 * metaprograms come twice: hidden where the project's lexer sees a comment and Lean code (`/-⟪ … ⟫-/`, the
 * battery's model of a divergence the lexer missed, so the default policy never sees them), and in plain
 * sight under a policy that refuses nothing (so only the gate stands between them and a reward; Lean runs
 * those too, in test/real-lean/kernelGate.test.ts). Controls beside them must be proved and confirmed by the
 * gate.
 */
import type { Range } from "vscode-languageserver-protocol";
import { DEFAULT_POLICY, type CandidatePolicy } from "../../lean-bridge/verify/policy";
import { proofHole } from "../helpers";

/** Core Lean and its metaprogramming API, which the attacks use; nothing to build. */
export const GATE_FILE = `import Lean

namespace G

axiom cheat : False

open Lean Elab Command in
elab "inject_unchecked" : command =>
  liftCoreM <| addDecl (.thmDecl { name := \`G.unchecked, levelParams := [], type := mkConst \`\`False, value := mkConst \`\`True.intro })

set_option debug.skipKernelTC true in
inject_unchecked

theorem lemma1 (a : Nat) : a + 0 = a := by
  simp

theorem target (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by
  omega

theorem uses_lemma (a : Nat) : a + 0 + 0 = a := by
  rw [lemma1, lemma1]

theorem false_goal : (2 : Nat) + 2 = 5 := by
  omega

end G
`;

/** How Lean reads a hidden block (`/-⟪ … ⟫-/`): as code where it stands. */
export const revealHidden = (text: string): string =>
  text.replace(/\/-⟪([\s\S]*?)⟫-\//g, (_all, hidden: string) => hidden);

/** A policy that refuses nothing: what reaches Lean then depends on the gate alone. */
export const NO_POLICY: CandidatePolicy = {
  ...DEFAULT_POLICY,
  forbiddenIdentifiers: [],
  forbiddenSymbols: [],
  codeNamespaces: [],
  percentElaborators: "any",
  tacticWords: "any",
};

export interface GateCase {
  name: string;
  hole: Range;
  candidate: string;
  /** Must be proved and confirmed by the gate; otherwise an attack that must earn nothing. */
  proved: boolean;
  /** The policy it runs under (default: DEFAULT_POLICY). */
  policy?: CandidatePolicy;
  /** Hidden behind the battery's divergence model, which only the test doubles read as Lean would. */
  modelledDivergence?: boolean;
}

/** A tactic that adds `G.<name>` without the kernel (the option set around the very `addDecl` that reads it). */
const ADD_UNCHECKED = (name: string) =>
  `run_tac (Lean.withOptions (fun o => o.setBool \`debug.skipKernelTC true) (Lean.addDecl (.thmDecl { name := \`G.${name}, levelParams := [], type := Lean.mkConst \`\`False, value := Lean.mkConst \`\`True.intro })) : Lean.CoreM Unit)`;

/** A tactic that adds the axiom `G.<name> : False`. */
const ADD_AXIOM = (name: string) =>
  `run_tac (Lean.addDecl (.axiomDecl { name := \`G.${name}, levelParams := [], type := Lean.mkConst \`\`False, isUnsafe := false }) : Lean.CoreM Unit)`;

export function gateCases(): GateCase[] {
  const falseGoal = proofHole(GATE_FILE, "false_goal");
  const hidden = (code: string) => `/-⟪ ${code} ⟫-/`;
  return [
    { name: "control: omega", hole: proofHole(GATE_FILE, "target"), candidate: "omega", proved: true },
    {
      name: "control: citing an earlier theorem of the document",
      hole: proofHole(GATE_FILE, "uses_lemma"),
      candidate: "exact (lemma1 (a + 0)).trans (lemma1 a)",
      proved: true,
    },
    {
      name: "a declaration a command above added under debug.skipKernelTC",
      hole: falseGoal,
      candidate: "exact unchecked.elim",
      proved: false,
    },
    { name: "a document-level axiom", hole: falseGoal, candidate: "exact cheat.elim", proved: false },
    {
      name: "a declaration the candidate's hidden metaprogram adds without the kernel",
      hole: falseGoal,
      candidate: `${hidden(ADD_UNCHECKED("cheat2"))}\nexact cheat2.elim`,
      proved: false,
      modelledDivergence: true,
    },
    {
      name: "an axiom the candidate's hidden metaprogram adds",
      hole: falseGoal,
      candidate: `${hidden(ADD_AXIOM("cheat3"))}\nexact cheat3.elim`,
      proved: false,
      modelledDivergence: true,
    },
    {
      name: "a declaration the candidate's metaprogram adds without the kernel, policy off",
      hole: falseGoal,
      candidate: `${ADD_UNCHECKED("cheat4")}\nexact cheat4.elim`,
      proved: false,
      policy: NO_POLICY,
    },
    {
      name: "an axiom the candidate's metaprogram adds, policy off",
      hole: falseGoal,
      candidate: `${ADD_AXIOM("cheat5")}\nexact cheat5.elim`,
      proved: false,
      policy: NO_POLICY,
    },
  ];
}
