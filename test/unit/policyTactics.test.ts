/**
 * Tactics by allow-list: where Lean's tactic parser reads a tactic's leading word, the word must be on the
 * policy's list (core Lean, Batteries, Mathlib, the workspace's own, a policy file's `allowTactics`); a name
 * in a term's place is not a tactic and passes. And the list covers every proof the project ships.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mineText } from "../../lean-bridge/holes/mine";
import {
  checkCandidate,
  DEFAULT_POLICY,
  policyFromFile,
  withTacticWords,
  type CandidatePolicy,
} from "../../lean-bridge/verify/policy";
import { TACTIC_WORD_GROUPS, TACTIC_WORDS } from "../../lean-bridge/verify/tacticAllowList";
import { CODE_EXECUTION_IDENTIFIERS, SEARCH_IDENTIFIERS } from "../../lean-bridge/verify/policyWords";
import { declaredTactics, workspaceTactics } from "../../lean-bridge/verify/workspaceTactics";
import { holeStartsTactic } from "../../lean-bridge/verify/tacticStarts";
import { lex } from "../../lean-bridge/lean/lexer";
import { parseFile } from "../../lean-bridge/lean/commands";
import { tokenText } from "../../lean-bridge/lean/tokens";

const ROOT = join(__dirname, "..", "..");

function verdict(candidate: string, policy: CandidatePolicy = DEFAULT_POLICY, column = 2): string {
  const v = checkCandidate(candidate, policy, { column });
  return v.kind === "allowed" ? "allowed" : v.rule;
}

test("a tactic off the list is refused wherever Lean reads a tactic's start, naming the word and the fix", () => {
  const places = [
    "my_eval_tac",
    // Spellings a policy under RL would try: a comment before the word, a guillemet name, a block opener's
    // next line.
    "repeat'\n  my_eval_tac",
    "focus\n  my_eval_tac",
    "classical\n  my_eval_tac",
    "exact by\n    my_eval_tac",
    "simp [h] <;>\n  my_eval_tac",
    "{ my_eval_tac }",
    "«my_eval_tac»",
    "omega -- a comment\nmy_eval_tac",
    "/- a comment -/ my_eval_tac",
    "omega\n/- a comment -/\nmy_eval_tac",
    "suffices h : p by my_eval_tac",
    "case' inl => my_eval_tac",
    "simp\nmy_eval_tac",
    "simp; my_eval_tac",
    "constructor <;> my_eval_tac",
    "refine ⟨?_, ?_⟩ <;> [simp; my_eval_tac]",
    "· my_eval_tac",
    "(simp; my_eval_tac)",
    "first | simp | my_eval_tac",
    "first\n| simp\n| my_eval_tac",
    "try my_eval_tac",
    "all_goals\n  my_eval_tac",
    "iterate 2 my_eval_tac",
    "have h : p := by my_eval_tac",
    "exact (by my_eval_tac : p)",
    "exact ⟨by simp, by my_eval_tac⟩",
    "calc a = b := by my_eval_tac\n  _ = c := rfl",
    "induction n with\n| zero => simp\n| succ n ih => my_eval_tac",
    "cases h with\n| inl h => my_eval_tac\n| inr h => simp",
    "case inl h => my_eval_tac",
    "next => my_eval_tac",
    "on_goal 2 => my_eval_tac",
    "match h with\n| .inl a => my_eval_tac\n| .inr b => simp",
    "set_option maxHeartbeats 400000 in\nmy_eval_tac",
    "set_option maxHeartbeats 400000 in my_eval_tac",
    "if h : p then simp else my_eval_tac",
    "if h : p then my_eval_tac else simp",
    'trace "{by my_eval_tac}"',
  ];
  for (const candidate of places) assert.equal(verdict(candidate), "unknown-tactic", candidate);
  const v = checkCandidate("simp\nmy_eval_tac h", DEFAULT_POLICY, { column: 2 });
  assert.equal(v.kind, "rejected");
  if (v.kind === "rejected") {
    assert.match(v.reason, /`my_eval_tac`/);
    assert.match(v.reason, /allowTactics/);
  }
});

test("known tactics pass, and names in a term's place are not tactics", () => {
  const proofs = [
    "intro x\nsimp [foo] at h ⊢\nomega",
    "obtain ⟨x, hx⟩ := h\nexact ⟨x, hx.1⟩",
    "exact foo stop",
    "intro start stop h\nexact stop",
    "exact my_lemma",
    "exact\n    my_lemma _ _",
    "refine my_lemma ?_\n    (my_other_lemma _)",
    "nlinarith [sq_nonneg (a - b),\n    sq_nonneg (a + b)]",
    "rw [foo,\n    my_lemma]",
    "have h : a =\n    my_value := rfl\nexact h",
    "rcases h with ⟨a, b⟩ | c <;> simp",
    "constructor <;> intro h <;> simp_all",
    "· simp\n· ring_nf\n  linarith",
    "conv => lhs; arg 2; rw [h]",
    "conv_lhs => rw [h]",
    "simp? says simp only [foo]",
    "simp (disch := positivity) [div_le_iff]",
    "simpa using\n  my_lemma",
    "simp only\n  [my_lemma]",
    "cases h with\n| inl h => simp\n| inr h => simp",
    "first | rcases h with a | b | simp",
    "induction n with\n| zero => simp\n| succ n ih => simp [ih]",
    "show p.1.stop = 3\nrfl",
    "exact fun x => my_lemma x",
    "#adaptation_note /-- a note -/\nsimp",
  ];
  for (const candidate of proofs) assert.equal(verdict(candidate), "allowed", candidate);
});

test("a code-executing tactic under a fresh name is refused by the allow-list alone", () => {
  // No word list knows `my_eval_tac`: a library's `elab "my_eval_tac" : tactic => … evalExpr …`.
  assert.ok(!DEFAULT_POLICY.forbiddenIdentifiers.includes("my_eval_tac"));
  for (const candidate of ["my_eval_tac", "simp\n  my_eval_tac (IO_action := 1)"])
    assert.equal(verdict(candidate), "unknown-tactic", candidate);
  // Refused words keep their own rule: the word lists run first.
  assert.equal(verdict("run_tac pure ()"), "code-execution");
  assert.equal(verdict("exact?"), "search-tactic");
  assert.equal(verdict("native_decide"), "native-code");
});

test("the list holds no code-executing, search or hole word, and every group names its source", () => {
  const refused = new Set([
    ...CODE_EXECUTION_IDENTIFIERS,
    ...SEARCH_IDENTIFIERS,
    "sorry",
    "admit",
    "stop",
    "sleep",
  ]);
  for (const word of TACTIC_WORDS) assert.ok(!refused.has(word), word);
  for (const group of TACTIC_WORD_GROUPS) {
    assert.ok(group.source.length > 0 && /^\d{4}-\d{2}-\d{2}$/.test(group.read), group.project);
    assert.deepEqual([...group.words].sort(), [...group.words], `${group.project}: kept sorted`);
  }
});

test("a policy file's allowTactics and the workspace's own tactics extend the list; refused words stay refused", () => {
  const loaded = policyFromFile({ allowTactics: ["my_tac", "my_tac!"] });
  assert.equal(loaded.kind, "ok");
  if (loaded.kind !== "ok") return;
  assert.equal(verdict("simp\nmy_tac", loaded.policy), "allowed");
  assert.equal(verdict("my_tac!", loaded.policy), "allowed");
  assert.equal(verdict("other_tac", loaded.policy), "unknown-tactic");
  assert.equal(policyFromFile({ allowTactics: ["two words"] }).kind, "error");
  assert.equal(policyFromFile({ allowTactics: "my_tac" }).kind, "error");
  assert.equal(verdict("run_tac pure ()", withTacticWords(DEFAULT_POLICY, ["run_tac"])), "code-execution");

  assert.deepEqual(
    declaredTactics(
      [
        'syntax (name := myTac) "my_tac " term : tactic',
        'macro "my_macro" : tactic => `(tactic| skip)',
        'elab tk:"my_elab" : tactic => pure ()',
        'macro "not_a_tactic" t:tactic : term => `(1)',
        'syntax "my_conv" : conv',
      ].join("\n"),
    ),
    ["my_tac", "my_macro", "my_elab"],
  );
  const root = mkdtempSync(join(tmpdir(), "fim-tactics-"));
  try {
    mkdirSync(join(root, "Mine"));
    writeFileSync(join(root, "Mine", "Tac.lean"), 'macro "my_own_tac" : tactic => `(tactic| rfl)\n');
    mkdirSync(join(root, ".lake", "packages", "dep"), { recursive: true });
    writeFileSync(join(root, ".lake", "packages", "dep", "Dep.lean"), 'elab "dep_tac" : tactic => pure ()\n');
    const own = workspaceTactics(root);
    assert.deepEqual([...own], ["my_own_tac"]);
    const policy = withTacticWords(DEFAULT_POLICY, own);
    assert.equal(verdict("my_own_tac", policy), "allowed");
    assert.equal(verdict("dep_tac", policy), "unknown-tactic");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

function leanFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".") || name === "node_modules") continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) leanFiles(path, out);
    else if (name.endsWith(".lean")) out.push(path);
  }
  return out;
}

const WORKSPACES = ["lean-env", "lean-env-prelude", "lean-env-mathlib", "lean-prelude"];

/** Every proof the project ships: the Mathlib sample's excerpts, the workspaces' and the fixtures' files. */
function corpus(): [string, string][] {
  const texts: [string, string][] = readFileSync(
    join(ROOT, "test", "fixtures", "mathlib-sample", "proofs.jsonl"),
    "utf8",
  )
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => {
      const e = JSON.parse(l) as { path: string; excerpt: string };
      return [e.path, e.excerpt];
    });
  for (const dir of [...WORKSPACES, join("test", "fixtures")])
    for (const path of leanFiles(join(ROOT, dir))) texts.push([path, readFileSync(path, "utf8")]);
  return texts;
}

test("every tactic block of the Mathlib sample, the workspaces and the fixtures passes the tactic list", () => {
  const texts = corpus();
  // The prelude workspaces declare their tactics themselves, as a user's project would.
  const policy = withTacticWords(
    DEFAULT_POLICY,
    WORKSPACES.flatMap((w) => [...workspaceTactics(join(ROOT, w))]),
  );
  const refused: string[] = [];
  let holes = 0;
  for (const [path, text] of texts)
    for (const hole of mineText(text).holes) {
      holes++;
      const v = checkCandidate(hole.middle, policy, { column: hole.indent });
      if (v.kind === "rejected" && v.rule === "unknown-tactic")
        refused.push(`${path}: ${v.reason.slice(0, 80)}`);
    }
  assert.deepEqual(refused, [], `${refused.length} of ${holes} blocks refused`);
  assert.ok(holes >= 2000, `${holes} blocks`);
});

test("a hole in a term's place holds a term: only its `by` blocks hold tactics", () => {
  const file = "theorem t (hp : p) (hq : q) : p ∧ q := by\n  constructor\n  exact ⟨hp, hq⟩\n";
  const ts = lex(file);
  let from = 0;
  while (tokenText(ts, from) !== "by") from++;
  const at = (text: string) => file.indexOf(text);
  assert.equal(holeStartsTactic(ts, from + 1, ts.count - 1, at("constructor")), true);
  assert.equal(holeStartsTactic(ts, from + 1, ts.count - 1, at("exact")), true);
  assert.equal(holeStartsTactic(ts, from + 1, ts.count - 1, at("hp, hq")), false);
  assert.equal(holeStartsTactic(ts, from + 1, ts.count - 1, file.length), true);
  const term = (candidate: string) => {
    const v = checkCandidate(candidate, DEFAULT_POLICY, { column: 9, mode: "term" });
    return v.kind === "allowed" ? "allowed" : v.rule;
  };
  assert.equal(term("hp"), "allowed");
  assert.equal(term("my_lemma hp"), "allowed");
  assert.equal(term("(by my_eval_tac)"), "unknown-tactic");
  assert.equal(term("by simp"), "allowed");
});

test("every hole the miner cuts from the shipped proofs stands where the file's own reading starts a tactic", () => {
  // The file is read as the candidate is: a mined hole read as a term's place would hold its candidate to
  // fewer tactics than Lean reads there.
  const misread: string[] = [];
  let holes = 0;
  for (const [path, text] of corpus()) {
    const parsed = parseFile(text.replace(/\r\n?/g, "\n"));
    for (const hole of mineText(text).holes) {
      const decl = parsed.commands
        .map((c) => c.declaration)
        .find((d) => d && d.start <= hole.start && hole.end <= d.end);
      if (!decl) continue;
      let from = decl.firstToken;
      while (from <= decl.lastToken && (parsed.tokens.starts[from] ?? 0) <= (decl.byStart ?? 0)) from++;
      holes++;
      if (!holeStartsTactic(parsed.tokens, from, decl.lastToken, hole.start))
        misread.push(`${path} ${hole.kind} ${JSON.stringify(hole.middle.slice(0, 60))}`);
    }
  }
  assert.deepEqual(misread, [], `${misread.length} of ${holes} holes`);
  assert.ok(holes >= 2000, `${holes} holes`);
});

test("a candidate nesting tactic blocks past what the reader reads is refused, and reading stays linear", () => {
  // Past the reader's depth a tactic would go unread; no proof nests blocks 48 deep.
  assert.equal(verdict("· ".repeat(60) + "my_eval_tac"), "too-deep");
  assert.equal(verdict("try ".repeat(60) + "simp"), "too-deep");
  assert.equal(verdict("· ".repeat(20) + "simp"), "allowed");
  // The layout reader is asked for one level at a time: 5,000 bullets read in well under the check's budget.
  const start = process.hrtime.bigint();
  assert.equal(verdict("· ".repeat(5000) + "simp"), "too-deep");
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  assert.ok(ms < 2000, `${ms.toFixed(0)} ms`);
});
