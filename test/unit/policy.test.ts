import { test } from "node:test";
import assert from "node:assert/strict";
import { checkCandidate, DEFAULT_POLICY, withTacticWords } from "../../lean-bridge/verify/policy";

const rejected = (c: string) => {
  const r = checkCandidate(c);
  return r.kind === "rejected" ? r.rule : "allowed";
};

test("sorry and admit are rejected, but not inside comments or strings", () => {
  assert.equal(rejected("exact sorry"), "sorry");
  assert.equal(rejected("admit"), "sorry");
  assert.equal(rejected("simp -- no sorry here\nomega"), "allowed");
  assert.equal(rejected('/- sorry -/ exact "sorry".length'), "allowed");
});

test("escapes from the hole are rejected", () => {
  for (const c of [
    "omega\ntheorem x : False := by simp",
    "#exit",
    "#print axioms x",
    "omega\nend Foo",
    "import Foo",
    "@[simp] x",
    "exact (h",
    "exact h)",
    "omega /- open",
    "axiom bad : False",
  ]) {
    assert.equal(rejected(c), "escape", c);
  }
});

test("code execution is rejected by default and the policy is configurable", () => {
  for (const c of [
    "run_tac pure ()",
    "run_cmd pure ()",
    "elab x",
    "IO.println 1",
    "unsafe x",
    "exact by_elab pure q",
  ])
    assert.equal(rejected(c), "code-execution", c);
  assert.equal(rejected("exact?"), "search-tactic");
  // A search is a known tactic that its own rule refuses: relaxing the rule takes the tactic word too.
  const loose = withTacticWords(
    {
      ...DEFAULT_POLICY,
      forbiddenIdentifiers: DEFAULT_POLICY.forbiddenIdentifiers.filter((i) => i !== "exact?"),
    },
    ["exact?"],
  );
  assert.equal(checkCandidate("exact?", loose).kind, "allowed");
});

test("ordinary tactics with unicode and astral characters pass", () => {
  assert.equal(rejected("obtain ⟨hp, hq⟩ := h\nexact ⟨hq, hp⟩ -- 𝔸"), "allowed");
  assert.equal(rejected("calc a = b := by rw [h₁]\n  _ = c := by rw [h₂]"), "allowed");
});

test("empty and oversized candidates are rejected", () => {
  assert.equal(rejected("   \n"), "empty");
  assert.equal(rejected("simp ".repeat(10_000)), "too-long");
});

test("options: only bounded resource limits may be set, and only with `in`", () => {
  for (const c of [
    "set_option debug.skipKernelTC true in decide +kernel",
    "set_option warn.sorry false in exact h",
    "set_option linter.unusedVariables true in simp",
    "set_option pp.all 1 in simp",
    "set_option trace.Meta.synthInstance true in simp",
    "set_option compiler.extract_closed false in rfl",
    "set_option backward.privateInPublic true in simp",
    "set_option backward.isDefEq.respectTransparency 0 in simp",
    "set_option maxHeartbeats 0 in simp",
    "set_option maxHeartbeats 100000000 in simp",
    "set_option maxRecDepth 100 simp",
    "set_option «debug».skipKernelTC true in simp",
  ])
    assert.equal(rejected(c), "set-option", c);
  assert.equal(rejected("set_option maxHeartbeats 400000 in\n  simp"), "allowed");
  assert.equal(rejected("set_option maxRecDepth 2000 in omega"), "allowed");
  // Options that only turn warnings off or change printing, and recursion depth up to the stated bound.
  assert.equal(rejected("set_option linter.unusedVariables false in simp"), "allowed");
  assert.equal(rejected("set_option linter.all false in\n  omega"), "allowed");
  assert.equal(rejected("set_option pp.proofs true in simp"), "allowed");
  assert.equal(rejected("set_option maxRecDepth 10000 in simp"), "allowed");
  assert.equal(rejected("set_option maxRecDepth 16384 in simp"), "allowed");
  assert.equal(rejected("set_option maxRecDepth 100000 in simp"), "allowed");
  assert.equal(rejected("set_option maxRecDepth 100001 in simp"), "set-option");
});

test("legitimate proofs: plain strings with braces, Mathlib's #s, hypotheses named native or lemma", () => {
  for (const c of [
    'have s : String := "a{b}"\nomega',
    'exact "}".length',
    "exact (#s).le_of_lt h",
    "have : #s ≤ #t := h\nomega",
    "intro native\nexact native",
    "have native : 1 = 1 := rfl\nomega",
    "have lemma : 1 = 1 := rfl\nomega",
    "obtain ⟨lemma, h⟩ := h\nexact lemma",
  ])
    assert.equal(rejected(c), "allowed", c);
  // The nearby attacks still fail.
  for (const [c, rule] of [
    ['exact s!"{sorry}".length', "sorry"],
    ['exact (toString s!"{by native_decide}").length', "native-code"],
    ['exact mySyntax "{by run_tac pure ()}"', "code-execution"],
    ['throwError "{IO.println 1}"', "code-execution"],
    ['exact f "}{".length', "ambiguous-string"],
    ["decide +native", "native-code"],
    ["decide (config := { native := true })", "native-code"],
    ["exact IO.println", "code-execution"],
    // `IO` alone too: `open IO` would reach `FS.writeFile` without naming `IO`.
    ["intro IO\nexact IO", "code-execution"],
    ["intro extern\nexact extern", "code-execution"],
    ["exact unsafeBaseIO (pure ())", "code-execution"],
    ["lemma foo : 1 = 1 := rfl", "escape"],
    ["omega\n#exit", "escape"],
    ["omega\n#eval 1", "escape"],
    ["sleep 4294967295", "time"],
    ["constructor\n· stop", "sorry"],
  ] as const)
    assert.equal(rejected(c), rule, c);
});

test("sorryAx, as_aux_lemma and compiled-code proofs are refused; native code only when the policy allows it", () => {
  assert.equal(rejected("exact sorryAx _ false"), "sorry");
  assert.equal(rejected("exact «sorryAx» _ false"), "sorry");
  assert.equal(rejected("as_aux_lemma => simp"), "sorry");
  for (const c of [
    "native_decide",
    "decide +native",
    "decide (config := { native := true })",
    "exact Lean.ofReduceBool _ _ rfl",
    "exact Lean.«ofReduceBool» _ _ rfl",
    "exact Lean.trustCompiler",
  ])
    assert.equal(rejected(c), "native-code", c);
  assert.equal(checkCandidate("native_decide", { ...DEFAULT_POLICY, allowNative: true }).kind, "allowed");
  assert.equal(rejected("decide +kernel"), "allowed");
});

test("the policy reads the text Lean reads: a lone CR ends a line comment", () => {
  assert.equal(rejected("simp -- harmless\rexact sorry"), "sorry");
  assert.equal(rejected("simp -- harmless\r\nomega"), "allowed");
});

test("guillemet names are compared as Lean reads them", () => {
  assert.equal(rejected("exact «sorry»"), "sorry");
  assert.equal(rejected("run_tac «IO».println 1"), "code-execution");
});

test("strings whose braces cannot be read one way are refused (Lean may read them as interpolated code)", () => {
  assert.notEqual(rejected('exact foo!"{" ; sorry ; "}"'), "allowed");
  assert.equal(rejected('exact foo!"{"'), "ambiguous-string");
  assert.equal(rejected('exact s!"{x}"'), "allowed");
});

test("legitimate odd proofs pass: vector literals, comment markers in strings, hypotheses named like tactics", () => {
  assert.equal(rejected("exact #v[1, 2].size"), "allowed");
  assert.equal(rejected('have h : "a -- b /- c".length = 11 := by decide\nexact h'), "allowed");
  assert.equal(rejected("intro simp omega\nexact omega simp"), "allowed");
  assert.equal(rejected("exact h₁.trans (2 : Nat).succ_pos"), "allowed");
  assert.equal(rejected("#check Nat"), "escape");
  assert.equal(rejected("#eval 1"), "escape");
});

test("characters Lean or a reader takes differently are refused anywhere; valid Unicode is not", () => {
  const refused: [string, RegExp][] = [
    ["omega -- \ud800", /U\+D800, a lone UTF-16 surrogate/],
    ["omega -- \udc00 x", /U\+DC00, a lone UTF-16 surrogate/],
    ["omega\u0000", /U\+0000, a control character/],
    ["omega\u000c", /U\+000C, a control character/],
    ["omega\u0085", /U\+0085, a control character/],
    ['have s := "\u202e" \nomega', /U\+202E, a bidirectional control/],
    ["\u2066omega\u2069", /U\+2066, a bidirectional control/],
  ];
  for (const [candidate, why] of refused) {
    const r = checkCandidate(candidate, DEFAULT_POLICY);
    assert.equal(r.kind, "rejected", JSON.stringify(candidate));
    if (r.kind === "rejected") {
      assert.equal(r.rule, "character", JSON.stringify(candidate));
      assert.match(r.reason, why);
    }
  }
  for (const candidate of [
    "omega -- 𝔽 ≤ ✓ done",
    "omega\t-- tab",
    "omega\r\n",
    'have s := "∀ x, x = x"\nomega',
  ])
    assert.equal(checkCandidate(candidate, DEFAULT_POLICY).kind, "allowed", JSON.stringify(candidate));
});

test("code in any string's braces is checked as candidate code, wherever the string stands (issue 23)", () => {
  const cheat = "by set_option debug.skipKernelTC true in run_tac Lean.addDecl default";
  for (const [c, rule] of [
    // After `]`, `)`, an identifier and a keyword; inside `m!` and `s!`; plain strings.
    [`trace[x] "{${cheat}}"\nexact cheat.elim`, "set-option"],
    ['throwErrorAt (stx) "{by run_tac pure ()}"', "code-execution"],
    ['exact mine "{by sorry}"', "sorry"],
    ['exact "{by native_decide}".length', "native-code"],
    ['show m!"{by admit}" = m!""', "sorry"],
    ['exact s!"a {(by exact?)} b".length', "search-tactic"],
    ['exact "{IO.println 1}".length', "code-execution"],
    // Commands and the rest of the escape rules hold inside braces too.
    ['exact "{theorem}".length', "escape"],
    ['exact "{coinductive}".length', "escape"],
    ['exact "{#eval 1}".length', "escape"],
    ['exact "{@[simp] x}".length', "escape"],
    ['exact "{(}".length', "escape"],
    ['exact "{x) (y}".length', "escape"],
    ['exact "{set_option maxHeartbeats 0 in x}".length', "set-option"],
    // Braces that cannot be read one way: nested strings, unterminated braces, a comment swallowing `}`.
    ['trace[x] "{"a"}"', "ambiguous-string"],
    ['exact s!"{"a"}".length', "ambiguous-string"],
    ['exact f "{by simp".length', "ambiguous-string"],
    ['exact f "{x -- }".length', "ambiguous-string"],
    ['exact f "{x /- }".length', "ambiguous-string"],
    ['trace[x] "{\\"a\\"}"', "ambiguous-string"],
  ] as const)
    assert.equal(rejected(c), rule, c);
  // Legitimate strings: harmless code in braces, escaped braces, raw strings, `}` alone.
  for (const c of [
    'show s!"{x} := by" = s!"{x} := by"\nrfl',
    'have s : String := "{this is a set} and {x, y}"\nomega',
    'have s : String := "-- {x} /- not code -/"\nomega',
    'exact "\\{x}".length',
    'exact r"{by sorry}".length',
    'exact "}".length',
    "exact \"{'}'}\".length",
    'exact "{{a}}".length',
  ])
    assert.equal(rejected(c), "allowed", c);
});

test("words read as Lean's tokenizer reads them: a keyword is a whole identifier, a tactic word at a tactic's start (issue 23)", () => {
  for (const c of [
    "show r.stop = 3\nexact h",
    "intro lemma\nexact lemma.1.1",
    "show #s.powerset = 2 ^ #s\nexact h",
    "exact @Submodule.module",
    "exact Foo.theorem.end",
    "have hint := h\nomega",
    "have hint : 1 = 1 := rfl\nomega",
    "intro stop\nexact stop",
    "intro admit\nexact admit",
    "obtain ⟨hint, h⟩ := h\nexact hint.1",
    "exact fun sleep => 0",
    "exact h.sorry",
  ])
    assert.equal(rejected(c), "allowed", c);
  for (const [c, rule] of [
    ["stop", "sorry"],
    ["· stop", "sorry"],
    ["exact (by stop)", "sorry"],
    ["exact (by admit : 1 = 1)", "sorry"],
    ["exact ⟨by admit, h⟩", "sorry"],
    ["hint", "search-tactic"],
    ["(hint)", "search-tactic"],
    ["first | hint | omega", "search-tactic"],
    ["try hint", "search-tactic"],
    ["intro\nhint", "search-tactic"],
    ["sleep 100", "time"],
    ["omega\nlemma x : 1 = 1 := rfl", "escape"],
    ["intro lemma foo", "escape"],
    ["omega\nmodule", "escape"],
    ["#exit.foo", "escape"],
    ["#eval.x", "escape"],
    ["exact h.sorryAx", "sorry"],
    ["exact Lean.«ofReduceBool» _ _ rfl", "native-code"],
    ["exact h.IO.println", "code-execution"],
    ["exact «sorry»", "sorry"],
  ] as const)
    assert.equal(rejected(c), rule, c);
});

test("the Mathlib spellings once refused pass, each beside the attack it resembles", () => {
  for (const c of [
    "#adaptation_note /-- nightly: simp was simp only -/\nsimp",
    "#adaptation_note\n/-- a note on its own line -/\nset_option maxSynthPendingDepth 2 in\nrw [h]",
    "show #univ = 4\nsimp",
    "exact a + stop",
    "show p.1.stop = 3\nexact h",
    "intro start stop h\nexact h",
    'exact "{"',
    'have : "{" ≠ "}" := by decide\nsimp',
    "set_option maxSynthPendingDepth 2 in simp",
    "set_option push_neg.use_distrib true in push_neg",
    "set_option backward.isDefEq.respectTransparency false in simp",
    "set_option backward.synthInstance.canonInstances false in simp",
    "set_option maxHeartbeats 800000 in simp",
    "set_option maxRecDepth 100000 in simp",
    "have : a % 2 < 2 := Nat.mod_lt _ (by omega)\nomega",
    "exact type_of% h",
  ])
    assert.equal(rejected(c), "allowed", c);
  for (const [c, rule] of [
    ["#adaptation_notes", "escape"],
    ["show #universe = 4", "escape"],
    ["exact by stop", "sorry"],
    ["all_goals stop", "sorry"],
    ['exact f "{"', "ambiguous-string"],
    ['exact s!"{"', "escape"],
    ["set_option backward.privateInPublic true in simp", "set-option"],
    ["set_option maxHeartbeats 1600001 in simp", "set-option"],
    ["set_option maxRecDepth 0 in simp", "set-option"],
    ["set_option maxSynthPendingDepth 5 in simp", "set-option"],
    ["exact eval% 2 ^ 10", "code-execution"],
    ["exact n%2", "code-execution"],
  ] as const)
    assert.equal(rejected(c), rule, c);
});

test("code-execution routes are refused however they are spelled or opened", () => {
  for (const c of [
    "open IO in omega",
    "open _root_.IO in omega",
    "open «IO» in omega",
    'exact (FS.writeFile "x" "").run ()',
    "exact (Process.exit 0).run ()",
    'exact (System.FilePath.pathExists "x").run ()',
    "open System in omega",
    "open Lean in omega",
    "open Mathlib in omega",
    "exact Mathlib.Tactic.Polyrith.sageOutput",
    "exact (EIO.toBaseIO x).run ()",
    "exact BaseIO.toIO x",
    "plausible",
    "with_panel_widgets [W] simp",
    "conv => run_conv pure ()",
    'exact include_str "/etc/passwd"',
    "polyrith",
    "have := dbgSleep 1 fun _ => h\nomega",
  ])
    assert.notEqual(rejected(c), "allowed", c);
  for (const c of ["observe h : a = b", "rw_search", "aesop?", "try?", "rw??", "library_search", "exact?%"])
    assert.equal(rejected(c), "search-tactic", c);
  // Lean's pure lemma namespaces stay citable.
  assert.equal(rejected("exact Lean.Omega.LinearCombo.coordinate_eval 0 v"), "allowed");
});
