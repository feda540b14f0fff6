/**
 * The battery's string class (issue 23), as data: test/hacks/hiddenInStrings.test.ts runs it through the
 * lean-like server and the simulator, test/real-lean/hacks.test.ts through Lean.
 */
import { type FileCase, holeAt } from "./fileCases";

export const STRINGS_FILE = `namespace N

theorem bogus : (2 : Nat) + 2 = 5 := by
  omega

theorem target (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by
  omega

theorem shown (a : Nat) : s!"{a} := by" = s!"{a} := by" := by
  rfl

end N
`;

/** The code the audit hid: a theorem of `False` added without the kernel. */
export const CHEAT =
  "by set_option debug.skipKernelTC true in run_tac Lean.addDecl (.thmDecl { name := `cheat, levelParams := [], type := .const ``False [], value := .const ``True.intro [] })";
/** Hidden code without an option: the same through `run_tac` alone, and a plain `sorry`. */
const RUN = "by run_tac Lean.addDecl default";
const SORRY = "(sorry : Nat)";

/**
 * The class's cases for `text` (STRINGS_FILE, maybe behind a header): attacks on the false statement (the
 * hidden code, then the visible proof it makes possible) and legitimate strings.
 */
export function stringCases(text = STRINGS_FILE): { attacks: FileCase[]; controls: FileCase[] } {
  const bogus = holeAt(text, "omega", "theorem bogus");
  const target = holeAt(text, "omega", "theorem target");
  const attack = (name: string, hiding: string): FileCase => ({
    name,
    hole: bogus,
    candidate: `${hiding}\nexact cheat.elim`,
    proved: false,
  });
  const attacks: FileCase[] = [
    // Where the string stands: after `]`, `)`, an identifier, a keyword, a symbol.
    attack("after `]` (trace[cls])", `have := trace[Meta.debug] "{${CHEAT}}"`),
    attack("after `)` (throwErrorAt)", `have := throwErrorAt (Lean.Syntax.missing) "{${CHEAT}}"`),
    attack("after an identifier", `have := mine "{${CHEAT}}"`),
    attack("after a keyword (`from`)", `have := show String from "{${RUN}}"`),
    attack("after a symbol (`:=`)", `have s : String := "{${RUN}}"`),
    attack("after `exact`", `exact absurd "{${SORRY}}" (fun _ => cheat.elim)`),
    // Inside the prefixes that always interpolate.
    attack("inside m!", `have := m!"{${CHEAT}}"`),
    attack("inside s!", `have := s!"text {${RUN}} more"`),
    attack("inside f!", `have := f!"{${SORRY}}"`),
    attack("in the second braces of a string", `have := trace[x] "{1} and {${RUN}}"`),
    // Braces our reading must not get wrong.
    attack("a nested string in braces", `have := trace[x] "{"{${CHEAT}}"}"`),
    attack("a quote escaped inside braces", `have := trace[x] "{\\"a\\" ++ toString ${SORRY}}"`),
    attack("unterminated braces", `have := trace[x] "{${CHEAT}"`),
    attack("an escaped brace before a real one", `have := trace[x] "\\{{${CHEAT}}"`),
    attack("an escaped backslash before a brace", `have := trace[x] "\\\\{${CHEAT}}"`),
    attack("a string gap before the braces", `have := trace[x] "a\\\n    {${RUN}}"`),
    attack("a line comment hiding the closing brace", `have := trace[x] "{1 -- }\n ${RUN}}"`),
    attack("a block comment hiding the closing brace", `have := trace[x] "{1 /- } -/ ${RUN}}"`),
    attack("a char literal holding a brace", `have := trace[x] "{'}' |> fun _ => ${RUN}}"`),
    attack("a char literal holding a quote", `have := trace[x] "{'"'}{${RUN}}"`),
    attack("a block comment in braces hiding a quote", `have := trace[x] "{1 /- " -/ ${RUN}}"`),
    attack(
      "code after a string the plain reading ends early",
      `have := trace[x] "{" ++ toString (${RUN}) ++ "}"`,
    ),
    attack("a doc comment in braces", `have := trace[x] "{/-- d -/ ${RUN}}"`),
    attack("a guillemet name in braces", `have := trace[x] "{Lean.«Elab».Term.elabTerm}"`),
    attack("a command in braces", `have := trace[x] "{#eval 1}"`),
    attack("a command keyword our word lists miss, in braces", `have := trace[x] "{coinductive}"`),
    attack("an attribute in braces", `have := trace[x] "{@[implemented_by id] x}"`),
    attack("unbounded heartbeats in braces", `have := trace[x] "{by set_option maxHeartbeats 0 in rfl}"`),
    attack("an unbalanced bracket closing code early", `have := trace[x] "{(} ${RUN} {)}"`),
    attack("more braces than a string may hold", `have := trace[x] "${"{1}".repeat(33)}"`),
  ];

  const controls: FileCase[] = [
    { name: "a plain string with braces", hole: target, candidate: 'have s : String := "{a} ≤ {b}"\nomega' },
    {
      name: "an s! string in a show",
      hole: holeAt(text, "rfl", "theorem shown"),
      candidate: 'show s!"{a} := by" = s!"{a} := by"\nrfl',
    },
    {
      name: "an s! string of a hypothesis",
      hole: target,
      candidate: 'have s : String := s!"{a} ≤ {b}"\nomega',
    },
    { name: "comment-like text with braces", hole: target, candidate: 'have s := "-- {a} /- b -/"\nomega' },
    { name: "a raw string with braces", hole: target, candidate: 'have s := r"{by sorry}"\nomega' },
    { name: "a closing brace alone", hole: target, candidate: 'have s := "}"\nomega' },
    {
      name: "a comment with braces inside string code",
      hole: target,
      candidate: 'have s := s!"{a /- } -/}"\nomega',
    },
    { name: "a brace in a char literal", hole: target, candidate: "have c : Char := '{'\nomega" },
    {
      name: "structure braces in string code",
      hole: target,
      candidate: 'have s := s!"{({ fst := a, snd := 2 } : Nat × Nat).1}"\nomega',
    },
  ].map((c) => ({ ...c, proved: true }));
  return { attacks, controls };
}
