/**
 * The hack battery's cases over one small file (battery.test.ts runs them through the simulator and the lean-like
 * server; test/real-lean/embeddedHacks.test.ts runs the ones a prelude workspace can express on the embedded Lean):
 * one case per known way a candidate could earn reward without a proof, and the legitimate controls.
 */
import type { VerifyTask } from "../../lean-bridge/verify/verifier";
import { DEFAULT_POLICY, type CandidatePolicy } from "../../lean-bridge/verify/policy";
import { proofHole } from "../helpers";
import type { LeanLikeOptions } from "./leanLike";

export const FILE = `namespace N

theorem target (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by
  omega

example : 2 ^ 10 = 1024 := by
  decide

private theorem hidden (a : Nat) : a + 0 = a := by
  simp

theorem pair : True ∧ True := by
  constructor
  trivial
  trivial

theorem steps : True ∧ True ∧ True := by
  constructor
  constructor
  trivial
  trivial
  trivial

end N
`;

/** A one-step hole: the first `trivial` of \`steps\` (three goals before it, two after it). */
export function middleHole(text: string) {
  const at = text.indexOf("  trivial", text.indexOf("theorem steps")) + 2;
  const lines = text.slice(0, at).split("\n");
  const line = lines.length - 1;
  return { start: { line, character: 2 }, end: { line, character: 2 + "trivial".length } };
}

/** A hole that is the whole proof of an `example` (the first one in the file). */
export function exampleHole(text: string) {
  const at = text.indexOf("example");
  const by = text.indexOf(":= by", at) + 5;
  let start = by;
  while (/\s/.test(text[start] ?? "")) start++;
  const end = text.indexOf("\n\n", start);
  const lines = (o: number) => text.slice(0, o).split("\n");
  const pos = (o: number) => ({ line: lines(o).length - 1, character: lines(o).at(-1)!.length });
  return { start: pos(start), end: pos(end === -1 ? text.length : end) };
}

export const task = (name: string | "example"): VerifyTask => ({
  file: "Hacks.lean",
  text: FILE,
  hole:
    name === "example"
      ? exampleHole(FILE)
      : name === "steps-middle"
        ? middleHole(FILE)
        : proofHole(FILE, name),
});

/** Each hack: the hole it targets, the candidate, and (optionally) how Lean reads text our lexer missed. */
export interface Hack {
  name: string;
  hole: string;
  candidate: string;
  policy?: CandidatePolicy;
  lean?: LeanLikeOptions;
}

export const HIDE_OPEN = "/-⟪";
export const HIDE_CLOSE = "⟫-/";
/**
 * A divergence the lexer missed, modelled: Lean reads what sits between the markers as code. Lean starts a
 * new command at a command keyword in any column; the lean-like server's parser needs column 0, so the
 * hidden lines are moved there.
 */
const leanSeesHidden = (text: string) =>
  text.replace(/\/-⟪([\s\S]*?)⟫-\//g, (_all, hidden: string) => hidden.replace(/\n[ \t]+/g, "\n"));
const allowNative: CandidatePolicy = { ...DEFAULT_POLICY, allowNative: true };

export const HACKS: Hack[] = [
  // Options that switch checks off.
  {
    name: "debug.skipKernelTC",
    hole: "target",
    candidate: "set_option debug.skipKernelTC true in decide +kernel",
  },
  { name: "warn.sorry off", hole: "target", candidate: "set_option warn.sorry false in\n  omega" },
  { name: "unbounded heartbeats", hole: "target", candidate: "set_option maxHeartbeats 0 in omega" },
  // Anonymous declarations with native code, or a sorry in an auxiliary lemma.
  { name: "example + native_decide", hole: "example", candidate: "native_decide" },
  { name: "example + decide +native", hole: "example", candidate: "decide +native" },
  { name: "as_aux_lemma hiding sorry", hole: "example", candidate: "as_aux_lemma => sorry" },
  { name: "sorryAx by name", hole: "target", candidate: "exact sorryAx _ false" },
  { name: "ofReduceBool by name", hole: "example", candidate: "exact Lean.ofReduceBool _ _ rfl" },
  // Lexer divergences, one each.
  { name: "lone CR ends a line comment", hole: "target", candidate: "omega -- done\rnative_decide" },
  { name: "character after /- skipped", hole: "target", candidate: "/-/- -/ native_decide" },
  { name: "/--/ doc opener", hole: "target", candidate: "/--/ -/ native_decide" },
  {
    name: "ident! before a string is not interpolation",
    hole: "target",
    candidate: 'exact foo!"{" ; native_decide ; "}"',
  },
  { name: "interpolated code", hole: "target", candidate: 'exact (s!"{(by native_decide : 2 = 2)}").length' },
  { name: "guillemet name", hole: "target", candidate: "exact «sorryAx» _ false" },
  { name: "number swallowing letters", hole: "target", candidate: "omega\n2native_decide" },
  { name: "operator subscript in a name", hole: "target", candidate: "h₊native_decide" },
  { name: "bad char escape", hole: "target", candidate: "'\\ native_decide'" },
  // Commands our keyword lists do not know, which the parser now takes to end a tactic proof at column 0: a
  // candidate's lines stand at the hole's column, so none may end the declaration and answer in its place.
  { name: "alias after a no-op", hole: "target", candidate: "skip\nalias target' := Nat.le_refl" },
  { name: "seal after a no-op", hole: "target", candidate: "skip\nseal target\nexact sorryAx _ false" },
  {
    name: "irreducible_def after a comment",
    hole: "target",
    candidate: "/- -/\nirreducible_def fake : Nat := by exact 0",
  },
  // `#print axioms` redirected to a namesake in an inner namespace (text our lexer took for a comment).
  {
    name: "#print axioms redirection via an inner namespace",
    hole: "target",
    // Code after the hidden text keeps it from being a trailing comment (which never reaches Lean).
    candidate: `native_decide\n${HIDE_OPEN}\nnamespace Inner\ntheorem N.target (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by\n  omega\n${HIDE_CLOSE}\nskip`,
    policy: allowNative,
    lean: { leanReads: leanSeesHidden },
  },
  {
    name: "an extra declaration beside a real proof",
    hole: "target",
    candidate: `omega\n${HIDE_OPEN}\ntheorem extra : 1 = 1 := by\n  rfl\n${HIDE_CLOSE}\nskip`,
    lean: { leanReads: leanSeesHidden },
  },
  {
    name: "a command (not a declaration) injected after a real proof",
    hole: "target",
    candidate: `omega\n${HIDE_OPEN}\nattribute [simp] Nat.add_comm\n${HIDE_CLOSE}\nskip`,
    lean: { leanReads: leanSeesHidden },
  },
  // Partial reward for doing nothing, or padding.
  // Second reading (lead's review): sorry under other names, text that cuts off the checks after the hole,
  // commands that redefine what a tactic means, options just past their bounds, goals made "smaller".
  { name: "admit (sorry under another name)", hole: "target", candidate: "admit" },
  { name: "stop (repeat sorry)", hole: "target", candidate: "stop\n  omega" },
  { name: "sorry hidden in a combinator", hole: "target", candidate: "first | sorry | omega" },
  { name: "sorry after <;>", hole: "pair", candidate: "constructor <;> sorry" },
  { name: "try sorry", hole: "target", candidate: "try sorry\nomega" },
  { name: "#exit cuts off #print axioms", hole: "target", candidate: "omega\n#exit" },
  { name: "closing the namespace", hole: "target", candidate: "omega\nend N" },
  { name: "unterminated block comment swallowing the rest", hole: "target", candidate: "omega /-" },
  {
    name: "run_tac admitting the goal",
    hole: "target",
    candidate: "run_tac Lean.Elab.admitGoal (← Lean.Elab.Tactic.getMainGoal)",
  },
  {
    name: "a macro redefining a tactic",
    hole: "target",
    candidate: 'omega\nmacro "omega\'" : tactic => `(tactic| sorry)',
  },
  {
    name: "an attribute command after a proof",
    hole: "target",
    candidate: "omega\nattribute [simp] N.target",
  },
  {
    name: "heartbeats just past the bound",
    hole: "target",
    candidate: "set_option maxHeartbeats 1600001 in omega",
  },
  { name: "a trace option", hole: "target", candidate: "set_option trace.Meta.synthInstance true in omega" },
  { name: "an option set without `in`", hole: "target", candidate: "set_option maxHeartbeats 1000\nomega" },
  { name: "exfalso makes the goal smaller, not fewer", hole: "pair", candidate: "exfalso" },
  { name: "refine into more goals", hole: "pair", candidate: "refine ⟨?_, ?_⟩" },
  { name: "skip", hole: "pair", candidate: "skip" },
  { name: "all_goals skip", hole: "pair", candidate: "all_goals skip" },
  { name: "only a comment", hole: "pair", candidate: "-- nothing to see" },
  { name: "padding", hole: "pair", candidate: "skip\nskip\nskip\nskip\nskip\nskip" },
  { name: "padding before an error", hole: "pair", candidate: 'skip\nskip\nskip\nskip\nfail "x"' },
  { name: "progress undone", hole: "pair", candidate: "constructor\ntrivial" },
  // A candidate writing the environment's failure message itself.
  {
    name: "mimicking an environment failure",
    hole: "target",
    candidate: 'fail "Imports are out of date and must be rebuilt; use the \\"Restart File\\" command"',
  },
  // Characters Lean (or a reader) takes differently from what the text seems to say.
  { name: "a lone surrogate", hole: "target", candidate: "omega -- \ud800" },
  { name: "a NUL byte", hole: "target", candidate: "omega\u0000native_decide" },
  { name: "a form feed as whitespace", hole: "target", candidate: "omega\u000c" },
  {
    name: "a bidi override dressing a comment",
    hole: "target",
    candidate: "omega -- \u202e sorry hidden \u202c",
  },
  { name: "an isolate around code", hole: "target", candidate: "\u2066omega\u2069" },
  // A token cut at the candidate's very end, where the lexer looks one or two characters past the text (it
  // reads a typed array of UTF-16 units there, and must end each token as it did with charCodeAt).
  { name: "a lone slash at the end", hole: "target", candidate: "omega\n/" },
  { name: "a lone minus at the end", hole: "target", candidate: "omega\n-" },
  { name: "an open char literal at the end", hole: "target", candidate: "omega\n'" },
  { name: "a hex prefix at the end", hole: "target", candidate: "omega\n0x" },
  { name: "a raw string opener at the end", hole: "target", candidate: 'omega\nr#"' },
  { name: "an open guillemet at the end", hole: "target", candidate: "omega\nexact «sorryAx" },
  { name: "a byte-order mark before native code", hole: "target", candidate: "\ufeffnative_decide" },
  // A no-op in the middle of a proof whose later steps do the work: those steps are not the candidate's.
  { name: "no-op mid-proof, later steps closing goals", hole: "steps-middle", candidate: "skip" },
];

export const CONTROLS: { name: string; hole: string; candidate: string }[] = [
  { name: "the workspace's own proof", hole: "target", candidate: "omega" },
  { name: "an example's own proof", hole: "example", candidate: "decide" },
  { name: "a private theorem's own proof", hole: "hidden", candidate: "simp" },
  { name: "a multi-goal proof", hole: "pair", candidate: "constructor\ntrivial\ntrivial" },
  { name: "one step in the middle", hole: "steps-middle", candidate: "trivial" },
  { name: "a vector literal", hole: "target", candidate: "have v := #v[1, 2]\nomega" },
  {
    name: "comment markers in a string",
    hole: "target",
    candidate: 'have s : String := "-- /- not code"\nomega',
  },
  { name: "a hypothesis named like a Mathlib tactic", hole: "target", candidate: "have ring := h\nomega" },
  { name: "astral characters and a tab in a comment", hole: "target", candidate: "omega -- 𝔽 ≤ ✓\tdone" },
];
