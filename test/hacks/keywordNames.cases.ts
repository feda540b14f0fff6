/**
 * The battery's names class (issue 23), as data: test/hacks/keywordNames.test.ts runs it through the
 * lean-like server and the simulator, test/real-lean/hacks.test.ts through Lean.
 */
import { type FileCase, holeAt } from "./fileCases";

/**
 * Core Lean only: a field named `stop`, a constant named `…module`, a local `#` prefix like Mathlib's card
 * (`#t.powerset` is `List.length t.powerset`, as Mathlib's `#s.powerset` is `Finset.card s.powerset`).
 */
export const NAMES_FILE = `structure R where
  stop : Nat

structure PS where
  powerset : List Nat

theorem Foo.module : True := trivial

local prefix:max "#" => List.length

theorem r_stop (r : R) (h : r.stop = 3) : r.stop = 3 := by
  show r.stop = 3
  exact h

theorem lemma_name : (True ∧ True) ∧ True → True := by
  intro lemma
  exact lemma.1.1

theorem card_rev (s : List Nat) : #s.reverse = #s := by
  show #s.reverse = #s
  simp

theorem card_pow (s : List Nat) (t : PS) (h : #t.powerset = 2 ^ #s) : #t.powerset = 2 ^ #s := by
  show #t.powerset = 2 ^ #s
  exact h

theorem mod_name : True := by
  exact @Foo.module

theorem hint_name (h : 1 = 1) : 1 = 1 := by
  have hint := h
  exact hint

theorem stop_name : True → True := by
  intro stop
  exact stop

theorem stop_after_op (stop : Nat) (h : 1 + stop = 3) : 1 + stop = 3 := by
  show 1 + stop = 3
  exact h

theorem stop_proj (p : R × Nat) (h : p.1.stop = 3) : p.1.stop = 3 := by
  show p.1.stop = 3
  exact h

theorem stop_intro : ∀ start stop : Nat, start = stop → start = stop := by
  intro start stop h
  exact h
`;

/** The whole tactic proof of `name` in `text` (from the first tactic to the end of its block). */
function proofOf(text: string, name: string): FileCase["hole"] {
  const head = text.indexOf(`theorem ${name} `);
  let start = text.indexOf(":= by\n", head) + ":= by\n".length;
  while (text[start] === " ") start++;
  const next = text.indexOf("\n\n", start);
  const end = next === -1 ? text.trimEnd().length : next;
  return holeAt(text, text.slice(start, end), `theorem ${name} `);
}

/**
 * The class's cases for `text` (NAMES_FILE, maybe behind a header): legitimate proofs, and the same words
 * where Lean reads the tactic or the command.
 */
export function nameCases(text = NAMES_FILE): { attacks: FileCase[]; controls: FileCase[] } {
  const legit = (name: string, candidate: string): FileCase => ({
    name: `${name}: ${candidate.split("\n")[0]}`,
    hole: proofOf(text, name),
    candidate,
    proved: true,
  });
  const controls: FileCase[] = [
    legit("r_stop", "show r.stop = 3\nexact h"),
    legit("lemma_name", "intro lemma\nexact lemma.1.1"),
    legit("card_rev", "show #s.reverse = #s\nsimp"),
    legit("card_pow", "show #t.powerset = 2 ^ #s\nexact h"),
    legit("mod_name", "exact @Foo.module"),
    legit("hint_name", "have hint := h\nexact hint"),
    legit("stop_name", "intro stop\nexact stop"),
    legit("stop_after_op", "show 1 + stop = 3\nexact h"),
    legit("stop_proj", "show p.1.stop = 3\nexact h"),
    legit("stop_intro", "intro start stop h\nexact h"),
  ];

  const attack = (name: string, candidate: string, leanLikeToo = true): FileCase => ({
    name: `${name}: ${candidate.replace(/\n/g, " ⏎ ")}`,
    hole: proofOf(text, "hint_name"),
    candidate,
    proved: false,
    ...(leanLikeToo ? {} : { leanLike: false as const }),
  });
  const attacks: FileCase[] = [
    attack("stop at a tactic's start", "stop\nexact h"),
    attack("stop after a binder, on the next line", "intro stop\nstop"),
    attack("admit in a nested block", "exact (by admit)"),
    attack("admit in an ascribed block", "exact (by admit : 1 = 1)"),
    attack("admit in an anonymous constructor's block", "exact ⟨by admit, h⟩.1"),
    attack("hint as a tactic", "hint"),
    attack("hint in a combinator", "first | hint | exact h"),
    attack("hint after a binder's line ends", "have hint := h\nhint"),
    attack("hint projected at a tactic's start", "hint.1"),
    attack("a lemma command after a proof", "exact h\nlemma x : 1 = 1 := rfl"),
    attack("a module command", "exact h\nmodule"),
    attack("#exit with a field after it", "exact h\n#exit.foo"),
    attack("sorryAx as a field", "exact h.sorryAx"),
    attack("ofReduceBool as a component", "exact Lean.«ofReduceBool» _ _ rfl"),
    attack("IO as a component", "exact h.IO.println"),
    attack("native as a config item in guillemets", "decide +«native»"),
    attack("stop in guillemets", "«stop»\nexact h"),
    attack("stop in a term's block", "exact by stop"),
    attack("stop after a combinator", "all_goals stop"),
    attack("stop after a bullet", "· stop"),
    // Mathlib reads `lemma` as a keyword: `intro` ends the proof there and `lemma` starts a declaration on the
    // next line, which Lean's range of the checked declaration shows. In core Lean it is a parse error.
    attack("lemma bound, then a declaration on the next line", "intro lemma\nfoo : 1 = 1 := rfl"),
    // Names that Lean reads as names: a candidate using them this way is refused by Lean, not the policy.
    attack("admit as a term", "have k : True := by exact admit\nexact h", false),
  ];
  return { attacks, controls };
}
