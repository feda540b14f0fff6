/**
 * The hack battery (issue #6): one case per known way a candidate could earn reward without a proof, run
 * (a) through the simulator and (b) through a lean-like server that answers as real Lean would on each hack
 * (clean elaboration, the axioms Lean prints, Lean's name resolution, documentSymbol listing what Lean sees).
 * None may earn reward, in either reward mode; every legitimate control must be proved.
 */
import { describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { VerifyTask } from "../../lean-bridge/verify/verifier";
import { DEFAULT_POLICY, type CandidatePolicy } from "../../lean-bridge/verify/policy";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { isMasked, type Verdict } from "../../lean-bridge/verify/verdict";
import type { LeanServer } from "../../lean-bridge/server/leanServer";
import { batchVerdict } from "../../lean-bridge/serve/wire";
import { inMemory, poolOver } from "../harness";
import { EXAMPLE, proofHole } from "../helpers";
import { leanLike, type LeanLikeOptions } from "./leanLike";

const FILE = `namespace N

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
function middleHole(text: string) {
  const at = text.indexOf("  trivial", text.indexOf("theorem steps")) + 2;
  const lines = text.slice(0, at).split("\n");
  const line = lines.length - 1;
  return { start: { line, character: 2 }, end: { line, character: 2 + "trivial".length } };
}

/** A hole that is the whole proof of an `example` (the first one in the file). */
function exampleHole(text: string) {
  const at = text.indexOf("example");
  const by = text.indexOf(":= by", at) + 5;
  let start = by;
  while (/\s/.test(text[start] ?? "")) start++;
  const end = text.indexOf("\n\n", start);
  const lines = (o: number) => text.slice(0, o).split("\n");
  const pos = (o: number) => ({ line: lines(o).length - 1, character: lines(o).at(-1)!.length });
  return { start: pos(start), end: pos(end === -1 ? text.length : end) };
}

const task = (name: string | "example"): VerifyTask => ({
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
interface Hack {
  name: string;
  hole: string;
  candidate: string;
  policy?: CandidatePolicy;
  lean?: LeanLikeOptions;
}

const HIDE_OPEN = "/-⟪";
const HIDE_CLOSE = "⟫-/";
/**
 * A divergence the lexer missed, modelled: Lean reads what sits between the markers as code. Lean starts a
 * new command at a command keyword in any column; the lean-like server's parser needs column 0, so the
 * hidden lines are moved there.
 */
const leanSeesHidden = (text: string) =>
  text.replace(/\/-⟪([\s\S]*?)⟫-\//g, (_all, hidden: string) => hidden.replace(/\n[ \t]+/g, "\n"));
const allowNative: CandidatePolicy = { ...DEFAULT_POLICY, allowNative: true };

const HACKS: Hack[] = [
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

const CONTROLS: { name: string; hole: string; candidate: string }[] = [
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

function unrewarded(v: Verdict, label: string): void {
  assert.notEqual(v.kind, "proved", `${label}: ${JSON.stringify(v)}`);
  // A candidate's failure must never pass for the workspace's (masked, and able to stop a run).
  assert.notEqual(v.kind, "environment", `${label}: ${JSON.stringify(v)}`);
  assert.equal(rewardOf(v, "binary").reward, 0, label);
  assert.equal(rewardOf(v, "partial").reward, 0, `${label}: partial ${JSON.stringify(v)}`);
}

test("hack battery through a lean-like server: no hack earns reward, every control is proved", async () => {
  for (const hack of HACKS) {
    const lean = await leanLike(hack.lean);
    const pool = poolOver(lean.server, {
      ...(hack.policy ? { policy: hack.policy } : {}),
    });
    try {
      unrewarded(await pool.verify(task(hack.hole), hack.candidate), hack.name);
    } finally {
      await lean.close();
    }
  }
  const lean = await leanLike();
  const pool = poolOver(lean.server);
  try {
    for (const control of CONTROLS) {
      const v = await pool.verify(task(control.hole), control.candidate);
      assert.equal(v.kind, "proved", `${control.name}: ${JSON.stringify(v)}`);
      if (v.kind === "proved") assert.equal(v.axiomsChecked, true);
    }
  } finally {
    await lean.close();
  }
});

test("partial credit exists for real progress: fewer goals than Lean showed at the hole", async () => {
  const lean = await leanLike({ goalsAtHole: 3 });
  const pool = poolOver(lean.server);
  try {
    const v = await pool.verify(task("pair"), "trivial\ntrivial");
    assert.equal(v.kind, "incomplete");
    const reward = rewardOf(v, "partial").reward;
    assert.ok(reward > 0 && reward < 1, `reward ${reward}`);
    const noop = await pool.verify(task("pair"), "skip");
    assert.ok(rewardOf(noop, "partial").reward < reward);
  } finally {
    await lean.close();
  }
});

test("hack battery through the simulator: no hack earns reward, every control is proved", async () => {
  const arith = readFileSync(join(EXAMPLE, "FimExamples", "Arith.lean"), "utf8");
  const logic = readFileSync(join(EXAMPLE, "FimExamples", "Logic.lean"), "utf8");
  const h = await inMemory();
  try {
    const target: VerifyTask = { file: "FimExamples/Arith.lean", hole: proofHole(arith, "add_le_add_3") };
    const example: VerifyTask = {
      file: "FimExamples/Logic.lean",
      hole: exampleHole(logic.slice(logic.lastIndexOf("\nexample") + 1)),
    };
    // The example hole above is relative to the slice; shift it to the file's lines.
    const before = logic.slice(0, logic.lastIndexOf("\nexample") + 1).split("\n").length - 1;
    example.hole = {
      start: { line: example.hole.start.line + before, character: example.hole.start.character },
      end: { line: example.hole.end.line + before, character: example.hole.end.character },
    };
    const privateHole = proofHole(arith, "two_mul'");
    const privateMiddle = arith.slice(
      arith.split("\n").slice(0, privateHole.start.line).join("\n").length + 1 + privateHole.start.character,
      arith.split("\n").slice(0, privateHole.end.line).join("\n").length + 1 + privateHole.end.character,
    );
    // Hacks that model a divergence of Lean from our lexer (`lean.leanReads`) have none in the simulator,
    // which reads with our lexer: there they are an ordinary proof plus a comment.
    for (const hack of HACKS.filter((k) => k.lean?.leanReads === undefined)) {
      const t = hack.hole === "example" ? example : target;
      unrewarded(await h.pool.verify(t, hack.candidate), `simulator: ${hack.name}`);
    }
    for (const [t, candidate] of [
      [target, "omega"],
      [example, "exact Or.inl hp"],
      [{ file: "FimExamples/Arith.lean", hole: privateHole }, privateMiddle],
    ] as const) {
      const v = await h.pool.verify(t, candidate);
      assert.equal(v.kind, "proved", `simulator control ${candidate}: ${JSON.stringify(v)}`);
    }
  } finally {
    await h.close();
  }
});

test("Lean not answering its questions within the check's deadline gives a timeout, never a proof", async () => {
  for (const [method, hole, candidate, options] of [
    ["textDocument/documentSymbol", "target", "omega", { neverAnswers: ["textDocument/documentSymbol"] }],
    // The goals are read from probe versions of the document: the first probe never finishes.
    ["the goals probe", "pair", "constructor\ntrivial", { answersVersions: 1 }],
  ] as const) {
    const lean = await leanLike(options);
    const pool = poolOver(lean.server, {
      // Long enough for Lean's diagnostics on a loaded machine (else the timeout is rightly the
      // infrastructure's), short enough to keep the test quick: the unanswered question waits it out.
      timeoutMs: 2500,
    });
    try {
      const v = await pool.verify(task(hole), candidate);
      assert.equal(v.kind, "timeout", `${method}: ${JSON.stringify(v)}`);
      // Lean had elaborated the candidate: the time it ran out of was the candidate's (not masked).
      if (v.kind === "timeout") assert.equal(v.cause, "candidate");
      const again = await pool.verify(task(hole), candidate);
      assert.equal(again.cached, undefined, "a timeout is never cached");
    } finally {
      await lean.close();
    }
  }
});

// ---------------------------------------------------------------------------------------------------------
// Environment outcomes a candidate cannot choose (issue 13, current Lean). `environment` is masked in
// training, so a candidate that could produce it would hide its failure: Lean's header failures and the
// stale-imports information are told by where Lean puts them (the top of the file to its end, or the
// header's first token, with nothing elaborated after it), never by their text.

test("a candidate cannot pass its failure off as a broken or stale environment", async () => {
  const lean = await leanLike();
  const pool = poolOver(lean.server);
  try {
    for (const candidate of [
      'fail "Imports are out of date and must be rebuilt; use the \\"Restart File\\" command in your editor."',
      'fail "Imports are out of date and should be rebuilt; use the \\"Restart File\\" command in your editor."',
      "fail \"unknown module prefix 'Mathlib'\"",
      'run_tac throwError "Imports are out of date and must be rebuilt"',
      '#eval IO.println "Imports are out of date and should be rebuilt"',
      'logInfo "Imports are out of date and should be rebuilt"',
    ]) {
      const v = await pool.verify(task("target"), candidate);
      assert.notEqual(v.kind, "environment", `${candidate}: ${JSON.stringify(v)}`);
      assert.equal(rewardOf(v, "partial").reward, 0, candidate);
    }
  } finally {
    await lean.close();
  }
});

test("an error Lean places on line 0 is the environment's only when Lean attributes it to the header", async () => {
  const { classify } = await import("../../lean-bridge/verify/classify");
  const { buildCheckDocument, locateHole } = await import("../../lean-bridge/verify/checkDocument");
  const { parseFile } = await import("../../lean-bridge/lean/commands");
  const { LineIndex } = await import("../../lean-bridge/text/positions");
  // No imports, the declaration on line 0: whatever its candidate makes Lean report there is its own.
  const text = "theorem t (a : Nat) : a = a := by\n  rfl\n";
  const parsed = parseFile(text);
  const located = locateHole(parsed, new LineIndex(text), proofHole(text, "t"));
  assert.equal(located.kind, "ok");
  if (located.kind !== "ok") return;
  const built = buildCheckDocument(parsed, located.hole, "rfl");
  assert.equal(built.kind, "ok");
  if (built.kind !== "ok") return;
  const doc = built.doc;
  const line0 = (message: string, severity: 1 | 3 = 1) => ({
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 7 } },
    fullRange: { start: { line: 0, character: 0 }, end: { line: 1, character: 5 } },
    severity,
    message,
  });
  for (const d of [
    line0('Imports are out of date and must be rebuilt; use the "Restart File" command in your editor.'),
    line0('Imports are out of date and should be rebuilt; use the "Restart File" command in your editor.', 3),
    line0("unknown module prefix 'Foo'"),
  ])
    assert.notEqual(classify(doc, [d], false).kind, "environment", d.message);
  // Lean's own: from 0:0 to the end of the document, nothing elaborated after it.
  const end = new LineIndex(doc.text).positionAt(doc.text.length);
  const header = {
    ...line0('Imports are out of date and must be rebuilt; use the "Restart File" command in your editor.'),
    fullRange: { start: { line: 0, character: 0 }, end },
  };
  assert.equal(classify(doc, [header], true).kind, "environment");
  // The same shape, but Lean went on to answer `#print axioms`: not a header failure.
  const answered = {
    range: { start: { line: doc.axiomsLine, character: 0 }, end: { line: doc.axiomsLine, character: 5 } },
    severity: 3 as const,
    message: "'t' does not depend on any axioms",
  };
  assert.notEqual(classify(doc, [header, answered], false).kind, "environment");
});

/**
 * Pay only for real progress (issue #13): partial credit from Lean's tags and the hole's own block, goals
 * measured at the hole's level and independently of any candidate, no masked outcome a candidate can choose,
 * no reward for holes in data, the file holding what was checked, and legitimate proofs accepted. Each case
 * runs through the lean-like server and (where the simulator can judge it) the simulator, with the reward
 * it must earn under partial reward.
 */
describe("pay only for real progress", () => {
  const poolOn = (server: LeanServer, timeoutMs = 5_000) =>
    poolOver(server, {
      timeoutMs,
    });

  /** Candidate → the partial reward it must earn, with the lean-like server showing `goalsAtHole` goals. */
  const PARTIAL: { name: string; hole: string; candidate: string; goalsAtHole?: number; reward: number }[] = [
    // Nested blocks Lean closes with a synthetic sorry after reporting their unsolved goals.
    { name: "exact (by skip)", hole: "target", candidate: "exact (by skip)", reward: 0 },
    { name: "exact (by done)", hole: "target", candidate: "exact (by done)", reward: 0 },
    {
      name: "False by skip, then elim",
      hole: "target",
      candidate: "have h : False := by skip\nexact h.elim",
      reward: 0,
    },
    { name: "a bullet left open", hole: "pair", candidate: "constructor\n· skip\ntrivial", reward: 0 },
    // The words without Lean's tag.
    { name: 'fail "unsolved goals"', hole: "pair", candidate: 'exact (by fail "unsolved goals")', reward: 0 },
    {
      name: 'fail "unsolved goals" as a step',
      hole: "pair",
      candidate: 'fail "unsolved goals\n⊢ P"',
      reward: 0,
    },
    // The last token in a nested block: plainGoal there said "no goals"; the hole's block still has them.
    {
      name: "a have closed inside",
      hole: "pair",
      candidate: "have _t : True := by exact True.intro",
      reward: 0,
    },
    // A bullet at the end: one goal of two is left, so nothing of the hole's one goal is closed.
    { name: "constructor then one bullet", hole: "pair", candidate: "constructor\n· trivial", reward: 0 },
    // Real progress is still paid: three goals at the hole, one left.
    {
      name: "two of three goals closed, the last by a bullet",
      hole: "pair",
      candidate: "trivial\n· trivial",
      goalsAtHole: 3,
      reward: (0.5 * 2) / 3,
    },
  ];

  test("partial credit: nested blocks, message text and the last token's block earn exactly what they should", async () => {
    for (const c of PARTIAL) {
      const lean = await leanLike({ goalsAtHole: c.goalsAtHole ?? 1 });
      try {
        const v = await poolOn(lean.server).verify(task(c.hole), c.candidate);
        const reward = rewardOf(v, "partial").reward;
        assert.ok(
          Math.abs(reward - c.reward) < 1e-9,
          `${c.name}: ${reward} ≠ ${c.reward}: ${JSON.stringify(v)}`,
        );
        assert.equal(rewardOf(v, "binary").reward, 0, c.name);
      } finally {
        await lean.close();
      }
    }
  });

  test("the goals at the hole do not depend on which candidate reached it first", async () => {
    const lean = await leanLike();
    try {
      const pool = poolOn(lean.server);
      // In the middle of `steps` (three goals there), a candidate that continues the step before it (`<;>`)
      // comes first: at its first token Lean's innermost node is `constructor <;> skip`, with two goals.
      await pool.verify(task("steps-middle"), "<;> skip");
      const honest = await pool.verify(task("steps-middle"), "skip");
      const fresh = await leanLike();
      try {
        const alone = await poolOn(fresh.server).verify(task("steps-middle"), "skip");
        assert.equal(honest.kind, "incomplete");
        assert.equal(alone.kind, "incomplete");
        if (honest.kind === "incomplete" && alone.kind === "incomplete") {
          assert.equal(honest.goalsAtHole, 3);
          assert.equal(honest.goalsAtHole, alone.goalsAtHole);
          assert.equal(rewardOf(honest, "partial").reward, rewardOf(alone, "partial").reward);
        }
      } finally {
        await fresh.close();
      }
    } finally {
      await lean.close();
    }
  });

  test("a candidate cannot choose a masked outcome: sleep is refused, its timeouts and crashes are failures", async () => {
    const refused = await leanLike();
    try {
      const v = await poolOn(refused.server).verify(task("target"), "sleep 4294967295");
      assert.equal(v.kind, "rejected");
      if (v.kind === "rejected") assert.equal(v.rule, "time");
      assert.equal(isMasked(v), false);
    } finally {
      await refused.close();
    }
    // Time spent in the checked declaration is the candidate's; time spent loading the header is not.
    for (const [hangsAt, cause] of [
      ["declaration", "candidate"],
      ["header", "infrastructure"],
    ] as const) {
      const lean = await leanLike({ hangsAt });
      try {
        const v = await poolOn(lean.server, 300).verify(task("target"), "omega");
        assert.equal(v.kind, "timeout", JSON.stringify(v));
        if (v.kind === "timeout") assert.equal(v.cause, cause, hangsAt);
        assert.equal(isMasked(v), cause === "infrastructure", hangsAt);
        assert.equal(rewardOf(v, "partial").reward, 0);
        assert.equal(batchVerdict("t", v, "partial").cause, cause);
      } finally {
        await lean.close();
      }
    }
    // A crash is retried on a fresh worker: once is the infrastructure's (the retry answers), twice the candidate's.
    for (const [crashes, kind] of [
      [1, "proved"],
      [2, "crashed"],
    ] as const) {
      const lean = await leanLike({ crashes });
      try {
        const v = await poolOn(lean.server).verify(task("target"), "omega");
        assert.equal(v.kind, kind, `${crashes} crash(es): ${JSON.stringify(v)}`);
        if (v.kind === "crashed") {
          assert.equal(v.cause, "candidate");
          assert.equal(isMasked(v), false);
          assert.equal(rewardOf(v, "partial").reward, 0);
        }
      } finally {
        await lean.close();
      }
    }
  });

  const DATA_FILE = `def answer : Nat := by
  exact 0

def fact : 1 = 1 := by
  rfl

theorem real : 2 = 2 := by
  rfl

theorem helped (n : Nat) : helper n = n := by
  rfl
where
  helper (k : Nat) : Nat := k
`;
  const dataTask = (name: string): VerifyTask => ({
    file: "Data.lean",
    text: DATA_FILE,
    hole: proofHole(DATA_FILE, name),
  });

  test("a hole in a declaration of data is not a proof; Prop-valued defs and theorems are", async () => {
    const lean = await leanLike();
    try {
      const pool = poolOn(lean.server);
      for (const candidate of ["exact 0", "exact 42"]) {
        const v = await pool.verify(dataTask("answer"), candidate);
        assert.equal(v.kind, "rejected", JSON.stringify(v));
        if (v.kind === "rejected") assert.equal(v.rule, "not-a-proposition");
        assert.equal(rewardOf(v, "partial").reward, 0);
      }
      assert.equal((await pool.verify(dataTask("fact"), "rfl")).kind, "proved");
      assert.equal((await pool.verify(dataTask("real"), "rfl")).kind, "proved");
      // A proof followed by a `where` clause is checked like any other; the attack beside it still fails.
      const helped = {
        ...dataTask("helped"),
        hole: { start: { line: 10, character: 2 }, end: { line: 10, character: 5 } },
      };
      assert.equal((await pool.verify(helped, "rfl")).kind, "proved");
      unrewarded(
        await pool.verify(helped, "rfl\nwhere\n  helper (k : Nat) : Nat := 0"),
        "a where clause added",
      );
    } finally {
      await lean.close();
    }
    const h = await inMemory({ oracle: { alternatives: { answer: ["by exact 0"], fact: ["by rfl"] } } });
    try {
      const v = await h.pool.verify(dataTask("answer"), "exact 0");
      assert.equal(v.kind, "rejected", `simulator: ${JSON.stringify(v)}`);
      assert.equal((await h.pool.verify(dataTask("fact"), "rfl")).kind, "proved", "simulator: a Prop def");
    } finally {
      await h.close();
    }
  });

  /** Attacks that must earn nothing, and the legitimate proofs beside them that must be proved. */
  const NEAR: { name: string; hole: string; candidate: string; proved: boolean }[] = [
    { name: "a trailing doc comment", hole: "target", candidate: "omega /-- doc -/", proved: false },
    { name: "a trailing plain comment", hole: "target", candidate: "omega -- done", proved: true },
    {
      name: "a plain string with braces",
      hole: "target",
      candidate: 'have s : String := "{x}"\nomega',
      proved: true,
    },
    {
      name: "an interpolated string of a hypothesis",
      hole: "target",
      candidate: 'have s : String := s!"{a}"\nomega',
      proved: true,
    },
    {
      name: "an interpolated string hiding a sorry",
      hole: "target",
      candidate: 'have s : String := s!"{(by sorry : a = a)}"\nomega',
      proved: false,
    },
    {
      name: "a string after a syntax keyword hiding code",
      hole: "target",
      candidate: 'exact mine "{by run_tac pure ()}"',
      proved: false,
    },
    {
      name: "a linter switched off",
      hole: "target",
      candidate: "set_option linter.all false in omega",
      proved: true,
    },
    {
      name: "a warning switch",
      hole: "target",
      candidate: "set_option warn.sorry false in omega",
      proved: false,
    },
    {
      name: "recursion depth 10000",
      hole: "target",
      candidate: "set_option maxRecDepth 10000 in omega",
      proved: true,
    },
    {
      name: "recursion depth 100000, as Mathlib sets it",
      hole: "target",
      candidate: "set_option maxRecDepth 100000 in omega",
      proved: true,
    },
    {
      name: "recursion depth past the bound",
      hole: "target",
      candidate: "set_option maxRecDepth 100001 in omega",
      proved: false,
    },
    { name: "Mathlib's #s", hole: "target", candidate: "have : #s = #s := rfl\nomega", proved: true },
    { name: "#exit", hole: "target", candidate: "omega\n#exit", proved: false },
    {
      name: "a hypothesis named native",
      hole: "target",
      candidate: "have native := h\nomega",
      proved: true,
    },
    // `IO` and `extern` are refused even as names: `open IO` would reach `FS.writeFile` without naming `IO`.
    { name: "a hypothesis named IO", hole: "target", candidate: "have IO := h\nomega", proved: false },
    { name: "decide +native", hole: "example", candidate: "decide +native", proved: false },
    { name: "a hypothesis named lemma", hole: "target", candidate: "have lemma := h\nomega", proved: true },
    { name: "a lemma command", hole: "target", candidate: "omega\nlemma x : 1 = 1 := rfl", proved: false },
    {
      name: "a hypothesis named extern",
      hole: "target",
      candidate: "have extern := h\nomega",
      proved: false,
    },
    { name: "stop in a bullet", hole: "pair", candidate: "constructor\n· stop\ntrivial", proved: false },
  ];

  test("legitimate proofs refused before are proved; the attack beside each still earns nothing", async () => {
    const lean = await leanLike();
    try {
      const pool = poolOn(lean.server);
      for (const c of NEAR) {
        const v = await pool.verify(task(c.hole), c.candidate);
        if (c.proved) assert.equal(v.kind, "proved", `${c.name}: ${JSON.stringify(v)}`);
        else unrewarded(v, c.name);
      }
    } finally {
      await lean.close();
    }
  });

  test("the simulator: nested blocks and the goal probes earn nothing without progress", async () => {
    const arith = readFileSync(join(EXAMPLE, "FimExamples", "Arith.lean"), "utf8");
    const target: VerifyTask = { file: "FimExamples/Arith.lean", hole: proofHole(arith, "add_le_add_3") };
    const h = await inMemory();
    try {
      for (const c of [...PARTIAL.filter((p) => p.reward === 0), ...NEAR.filter((n) => !n.proved)]) {
        const v = await h.pool.verify(target, c.candidate);
        unrewarded(v, `simulator: ${c.name}`);
      }
      assert.equal((await h.pool.verify(target, "omega")).kind, "proved");
    } finally {
      await h.close();
    }
  });
});
