/**
 * The battery's file-text class (issue 23), as data: test/hacks/fileText.test.ts runs it through the
 * lean-like server and the simulator, test/real-lean/hacks.test.ts through Lean.
 */
import { type FileCase, holeAt } from "./fileCases";

export const MIDLINE_FILE = `theorem semi : True ∧ True := by
  constructor; trivial; trivial

theorem pair (p q : Prop) (hp : p) (hq : q) : p ∧ q := by
  exact ⟨hp, hq⟩

theorem nested (p : Prop) (hp : p) : p ∧ True := by
  exact ⟨(by exact hp), trivial⟩

theorem cut (p : Prop) (ry : p) : p := by
  exact ry
`;

/**
 * The class's cases for `text` (MIDLINE_FILE, maybe behind a header): comments that would swallow the rest of
 * a hole's line, a token run into the file's text, and the same holes filled legitimately.
 */
export function fileTextCases(text = MIDLINE_FILE): { attacks: FileCase[]; controls: FileCase[] } {
  const semi = holeAt(text, "constructor", "theorem semi");
  const pair = holeAt(text, "hp", "theorem pair");
  const nested = holeAt(text, "exact hp", "theorem nested");
  /** A hole that ends right before the file's `ry` (a selection in the editor can end anywhere). */
  const cut = holeAt(text, "exact ", "theorem cut");

  const attacks: FileCase[] = [
    {
      name: "a line comment swallowing `; trivial; trivial`",
      hole: semi,
      candidate: "constructor -- and done",
    },
    { name: "a block, then a line comment", hole: semi, candidate: "constructor /- a -/ -- b" },
    { name: "a line comment swallowing `, hq⟩`", hole: pair, candidate: "hp -- left" },
    { name: "a line comment swallowing `), trivial⟩`", hole: nested, candidate: "exact hp -- inner" },
    { name: "a token run into the file's text (`sor` + `ry`)", hole: cut, candidate: "exact sor" },
    // A doc comment is a token to Lean: in the file it would end the tactic block before `; trivial; trivial`.
    { name: "a trailing doc comment ending the block", hole: semi, candidate: "constructor /-- done -/" },
    { name: "a trailing module doc ending the block", hole: semi, candidate: "constructor /-! done -/" },
    // Lean's block comments nest: one `-/` closes only the inner one, and the rest of the file is comment.
    { name: "a nested block comment left open", hole: semi, candidate: "constructor /- a /- b -/" },
  ].map((c) => ({ ...c, proved: false }));

  const controls: FileCase[] = [
    { name: "the original middle before `; trivial`", hole: semi, candidate: "constructor" },
    { name: "a block comment before `; trivial`", hole: semi, candidate: "constructor /- done -/" },
    { name: "a line comment ended by its line", hole: semi, candidate: "-- first\nconstructor" },
    // Nested, `-- c` is inside the comment: a lexer that ended it at the first `-/` would see a line comment.
    {
      name: "a nested block comment holding `--`",
      hole: semi,
      candidate: "constructor /- a /- b -/ -- c -/",
    },
    // The lean-like server has no terms: `skip` in this hole (the verifier's no-op probe) is a closing `exact` to it.
    { name: "a term before `, hq⟩`", hole: pair, candidate: "hp", leanLike: false as const },
    { name: "a nested block's tactic", hole: nested, candidate: "exact hp" },
    {
      name: "a line comment where the line ends",
      hole: holeAt(text, "exact ry", "theorem cut"),
      candidate: "exact ry -- done",
    },
  ].map((c) => ({ ...c, proved: true }));
  return { attacks, controls };
}
