/**
 * The real-Lean tier, the attack battery: the hack battery's cases (test/hacks/battery.cases.ts) that a prelude
 * workspace can express, and attacks only a prelude workspace on the project's library (lean-prelude/) can
 * spell, run on the embedded Lean 4.35.0 through the pool with the kernel gate on every proof (`all`). Every
 * attack earns nothing in either reward mode and gets no masked outcome; every legitimate control is proved and
 * confirmed by the kernel. The workspace is a temporary copy of lean-prelude's library beside the battery's file
 * spelled for it (test/fixtures/prelude-hacks/Hacks.lean, HacksGate.lean for the kernel-gate class, and the
 * file-text class's own file behind a prelude header); one pool serves most cases, through verifyMany. Besides:
 * the same attacks with the policy's word lists emptied (Lean, the check document and the gate alone), a
 * candidate that hangs (the candidate's timeout) and one that aborts its worker through a tactic the workspace
 * bound by `@[extern]` to a missing compiled function (crashed, charged to it, never masked; a candidate never
 * reaches command level to bind one itself).
 */
import { after } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { isMaskedVerdict } from "../../lean-bridge/protocol/trainer";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import type { Verifier, VerifyTask } from "../../lean-bridge/verify/verifier";
import type { Range } from "vscode-languageserver-protocol";
import { CONTROLS, exampleHole, HACKS, middleHole, type Hack } from "../hacks/battery.cases";
import { CODE_ATTACKS, CODE_FILE } from "../hacks/codeExecution.cases";
import { fileTextCases, MIDLINE_FILE } from "../hacks/fileText.cases";
import { GATE_FILE, gateCases, NO_POLICY, type GateCase } from "../hacks/kernelGate.cases";
import { proofHole, REPO } from "../helpers";
import { announceTier, embeddedVerifier, tierTest } from "./embeddedTier";
import { copyPreludeLibrary } from "./preludeLean";

announceTier("test/real-lean/embeddedHacks.test.ts");

const FIXTURE = join(REPO, "test", "fixtures", "prelude-hacks");
const FILE = "Hacks.lean";
/** The kernel-gate class's file, spelled for the prelude (test/fixtures/prelude-hacks/HacksGate.lean). */
const GATE = "HacksGate.lean";
/** The file-text class's file, which needs nothing the prelude lacks: written from the battery's own text. */
const MIDLINE = "Midline.lean";
const PRELUDE_HEADER = "prelude\nimport FimPrelude\n\n";
const MIDLINE_TEXT = PRELUDE_HEADER + MIDLINE_FILE;

/** The battery's proof of `target` is `omega`; the prelude's tactics prove it so. */
const TARGET_PROOF = "exact Nat.succ_le_succ h";
const spelled = (candidate: string): string => candidate.replace(/\bomega\b/g, TARGET_PROOF);

/**
 * Whether a battery case means the same on a prelude workspace. A case that carries its own model of how Lean
 * reads the text (`lean`) stands for a lexer divergence the lean-like server simulates: real Lean reads that
 * text as the comment it is, so the case is a different (legitimate) candidate here.
 */
const preludeCanExpress = (hack: Hack): boolean => hack.lean === undefined && hack.policy === undefined;

/** A workspace of lean-prelude's library and the battery's file, removed after the file's tests. */
function hacksWorkspace(): { root: string; remove: () => void } {
  const root = mkdtempSync(join(tmpdir(), "fim-prelude-hacks-"));
  copyPreludeLibrary(root);
  cpSync(FIXTURE, root, { recursive: true });
  writeFileSync(join(root, MIDLINE), MIDLINE_TEXT);
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}

interface Shared {
  pool: Verifier;
  /** The text of each task file, by its path in the workspace. */
  texts: Record<string, string>;
  remove: () => void;
}

let shared: Promise<Shared> | undefined;
/** One pool for every case of the file (starting one builds the prelude), with the kernel gate on every proof. */
function sharedPool(): Promise<Shared> {
  shared ??= (async () => {
    const ws = hacksWorkspace();
    try {
      const pool = await embeddedVerifier(ws.root, { kernelGate: { kind: "all" }, timeoutMs: 120_000 });
      const texts = Object.fromEntries(
        [FILE, GATE, MIDLINE].map((f) => [f, readFileSync(join(ws.root, f), "utf8")]),
      );
      return { pool, texts, remove: ws.remove };
    } catch (e) {
      ws.remove();
      throw e;
    }
  })();
  return shared;
}
after(async () => {
  if (!shared) return;
  const s = await shared.catch(() => undefined);
  if (!s) return;
  await s.pool.stop();
  s.remove();
});

/** A hole of the battery's file by the battery's names (a declaration, `example`, `steps-middle`), or a range. */
function taskOf(texts: Record<string, string>, c: Case): VerifyTask {
  const file = c.file ?? FILE;
  const text = texts[file]!;
  const hole = c.hole;
  const at =
    typeof hole !== "string"
      ? hole
      : hole === "example"
        ? exampleHole(text)
        : hole === "steps-middle"
          ? middleHole(text)
          : proofHole(text, hole);
  return { file, text, hole: at };
}

/** The verdict earns nothing in either reward mode, and is no outcome training masks. */
function unrewarded(v: Verdict, label: string): void {
  assert.notEqual(v.kind, "proved", `${label}: ${JSON.stringify(v)}`);
  assert.equal(isMaskedVerdict(v), false, `${label}: a masked outcome ${JSON.stringify(v)}`);
  assert.equal(rewardOf(v, "binary").reward, 0, `${label}: ${JSON.stringify(v)}`);
  assert.equal(rewardOf(v, "partial").reward, 0, `${label}: partial ${JSON.stringify(v)}`);
}

interface Case {
  name: string;
  hole: string | Range;
  candidate: string;
  /** The task file (default: the battery's file, Hacks.lean). */
  file?: string;
}

async function attack(cases: readonly Case[]): Promise<void> {
  const { pool, texts } = await sharedPool();
  const verdicts = await pool.verifyMany(
    cases.map((c) => ({ task: taskOf(texts, c), candidate: c.candidate })),
  );
  cases.forEach((c, i) => unrewarded(verdicts[i]!, c.name));
}

async function control(cases: readonly Case[]): Promise<void> {
  const { pool, texts } = await sharedPool();
  const verdicts = await pool.verifyMany(
    cases.map((c) => ({ task: taskOf(texts, c), candidate: c.candidate })),
  );
  cases.forEach((c, i) => {
    const v = verdicts[i]!;
    assert.equal(v.kind, "proved", `${c.name}: ${JSON.stringify(v)}`);
    assert.equal(v.kind === "proved" && v.confirmedBy, "kernel-replay", `${c.name}: ${JSON.stringify(v)}`);
  });
}

/** The battery's controls a prelude workspace can write: those whose tactics and literals the prelude has. */
const PRELUDE_CONTROLS: Case[] = [
  ...CONTROLS.filter((c) => !/#v\[|String/.test(c.candidate)).map((c) => ({
    ...c,
    candidate: spelled(c.candidate),
  })),
  {
    name: "a term proof through exact",
    hole: "target",
    candidate: "exact Nat.succ_le_succ (Nat.le_trans h (Nat.le_refl b))",
  },
  // The kernel evaluates the decision itself, with no axiom: a proof, confirmed by the gate.
  { name: "decide +kernel", hole: "example", candidate: "decide +kernel" },
  // Lean's comments nest: the `sorry` sits inside one comment, and our lexer must read it so too.
  { name: "a sorry inside nested comments", hole: "target", candidate: `/- /- -/ sorry -/ ${TARGET_PROOF}` },
];

tierTest(
  "embedded Lean, kernel gate all: the battery's legitimate controls are proved and confirmed by the kernel",
  async () => {
    await control(PRELUDE_CONTROLS);
  },
);

tierTest(
  "embedded Lean, kernel gate all: no case of the hack battery a prelude workspace can express earns reward or a masked outcome",
  async () => {
    const cases = HACKS.filter(preludeCanExpress).map((h) => ({ ...h, candidate: spelled(h.candidate) }));
    assert.ok(cases.length >= 50, `only ${cases.length} battery cases run`);
    await attack(cases);
  },
);

/** Attacks only a workspace on the project's prelude spells: its own `sorryAx`, its tactics, its `@[extern]` macros. */
const PRELUDE_ATTACKS: Case[] = [
  // Sorry in every spelling the prelude gives it.
  { name: "sorry", hole: "target", candidate: "sorry" },
  { name: "exact sorry", hole: "target", candidate: "exact sorry" },
  { name: "sorry in parentheses", hole: "target", candidate: "exact (sorry)" },
  { name: "sorryAx, synthetic", hole: "target", candidate: "exact sorryAx _ true" },
  { name: "sorryAx explicit", hole: "target", candidate: "exact @sorryAx _ false" },
  {
    name: "sorryAx in a have",
    hole: "target",
    candidate: "have x : False := sorryAx False false\nexact x.elim",
  },
  { name: "sorry inside a nested by", hole: "target", candidate: "exact (by sorry)" },
  { name: "sorry under all_goals", hole: "pair", candidate: "all_goals sorry" },
  { name: "sorry under repeat", hole: "pair", candidate: "constructor\nrepeat sorry" },
  { name: "sorry in a bullet", hole: "pair", candidate: "constructor\n· trivial\n· sorry" },
  // Options that switch checks off, and the kernel skipped.
  {
    name: "skipKernelTC in",
    hole: "target",
    candidate: `set_option debug.skipKernelTC true in\n${TARGET_PROOF}`,
  },
  {
    name: "skipKernelTC as a step",
    hole: "target",
    candidate: `set_option debug.skipKernelTC true in ${TARGET_PROOF}`,
  },
  { name: "sorry warning off", hole: "target", candidate: "set_option warn.sorry false in\nsorry" },
  // Declarations of the candidate's own, reaching command level: an `@[extern]` binding a missing name would abort
  // the worker, `@[implemented_by]` and `unsafe` swap in code the kernel never saw, a second declaration answers
  // in place of the real one.
  {
    name: "an extern binding a missing symbol after the proof",
    hole: "target",
    candidate: `${TARGET_PROOF}\n@[extern "fim_no_such_symbol"] opaque boom : Nat → Nat\n#reduce boom 1`,
  },
  {
    name: "an extern at column 0 after closing the namespace",
    hole: "target",
    candidate: `${TARGET_PROOF}\nend N\n@[extern "fim_no_such_symbol"] opaque boom : Nat → Nat`,
  },
  {
    name: "a macro bound to a missing compiled function",
    hole: "target",
    candidate: `${TARGET_PROOF}\n@[macro Lean.Parser.Tactic.skip, extern "fim_no_such_macro"] opaque m : Nat\nskip`,
  },
  {
    name: "implemented_by after the proof",
    hole: "target",
    candidate: `${TARGET_PROOF}\ndef f : Nat := 0\n@[implemented_by f] def g : Nat := 1`,
  },
  {
    name: "an unsafe definition under skipKernelTC",
    hole: "target",
    candidate: `${TARGET_PROOF}\nunsafe def l : False := l\nset_option debug.skipKernelTC true in\ntheorem cheat : False := l`,
  },
  { name: "an unsafe term", hole: "target", candidate: "exact unsafe (sorryAx _ false)" },
  {
    name: "a second declaration",
    hole: "target",
    candidate: `${TARGET_PROOF}\ntheorem target' : True := True.intro`,
  },
  {
    name: "a namesake answering in place of the real one",
    hole: "target",
    candidate: `sorry\nend N\nnamespace M\ntheorem N.target (a b : Nat) (h : a ≤ b) : a + 1 ≤ b + 1 := by\n  ${TARGET_PROOF}`,
  },
  {
    name: "an axiom of the candidate's own",
    hole: "target",
    candidate: `${TARGET_PROOF}\naxiom cheat : False`,
  },
  { name: "#exit", hole: "target", candidate: `${TARGET_PROOF}\n#exit` },
  { name: "end of the namespace", hole: "target", candidate: `${TARGET_PROOF}\nend N` },
  {
    name: "a tactic macro in the hole",
    hole: "target",
    candidate: `macro "fim_cheat" : tactic => \`(tactic| sorry)\nfim_cheat`,
  },
  {
    name: "notation in the hole",
    hole: "target",
    candidate: 'notation "cheat" => sorryAx _ false\nexact cheat',
  },
  // Searches and native evaluation under the names Lean gives them.
  { name: "exact?", hole: "target", candidate: "exact?" },
  { name: "apply?", hole: "target", candidate: "apply?" },
  { name: "native_decide", hole: "example", candidate: "native_decide" },
  { name: "decide +native", hole: "example", candidate: "decide +native" },
  { name: "ofReduceBool by name", hole: "example", candidate: "exact Lean.ofReduceBool _ _ rfl" },
  // Text across the hole's edge, and text our lexer may read differently from Lean.
  { name: "an unterminated comment", hole: "target", candidate: `${TARGET_PROOF} /-` },
  { name: "an unterminated string", hole: "target", candidate: `${TARGET_PROOF}\n"` },
  { name: "a doc comment after the proof", hole: "target", candidate: `${TARGET_PROOF} /-- doc -/` },
  // Partial credit for doing nothing.
  { name: "skip", hole: "target", candidate: "skip" },
  { name: "done-less: exact (by skip)", hole: "target", candidate: "exact (by skip)" },
  { name: "a bullet left open", hole: "pair", candidate: "constructor\n· skip\ntrivial" },
  { name: "no-op in the middle", hole: "steps-middle", candidate: "skip" },
];

tierTest(
  "embedded Lean, kernel gate all: attacks a prelude workspace spells earn nothing and choose no masked outcome",
  async () => {
    await attack(PRELUDE_ATTACKS);
  },
);

tierTest("embedded Lean: a candidate that hangs gets the candidate's timeout, not masked", async () => {
  const ws = hacksWorkspace();
  const pool = await embeddedVerifier(ws.root, { kernelGate: { kind: "all" }, timeoutMs: 3_000 });
  try {
    const text = readFileSync(join(ws.root, FILE), "utf8");
    const v = await pool.verify(
      taskOf({ [FILE]: text }, { name: "target", hole: "target", candidate: "" }),
      `exact (fun (_ : Endless Nat.zero) => Nat.succ_le_succ h) inferInstance`,
    );
    assert.equal(v.kind, "timeout", JSON.stringify(v));
    assert.equal(v.kind === "timeout" && v.cause, "candidate", JSON.stringify(v));
    unrewarded(v, "a hanging candidate");
  } finally {
    await pool.stop();
    ws.remove();
  }
});

tierTest(
  "embedded Lean: a candidate that aborts its worker (a macro bound to a missing compiled function) is crashed, charged to it, and the pool recovers",
  async () => {
    // Its own pool with a short time limit: when the worker dies before Lean receives the wait for its
    // diagnostics, Lean never answers that wait, and the check learns of the crash only at its deadline (from
    // the fatal progress report Lean sent). Twice, since each attempt may meet either order.
    const ws = hacksWorkspace();
    const pool = await embeddedVerifier(ws.root, { kernelGate: { kind: "all" }, timeoutMs: 15_000 });
    try {
      const texts = { [FILE]: readFileSync(join(ws.root, FILE), "utf8") };
      const target = taskOf(texts, { name: "target", hole: "target", candidate: "" });
      for (const round of [1, 2]) {
        const v = await pool.verify(target, round === 1 ? "fim_trap" : "skip\n  fim_trap");
        assert.equal(v.kind, "crashed", JSON.stringify(v));
        assert.equal(v.kind === "crashed" && v.cause, "candidate", JSON.stringify(v));
        unrewarded(v, "a candidate that aborts Lean");
      }
      const after = await pool.verify(target, TARGET_PROOF);
      assert.equal(after.kind, "proved", `the next check after the crash: ${JSON.stringify(after)}`);
      assert.equal(after.kind === "proved" && after.confirmedBy, "kernel-replay");
    } finally {
      await pool.stop();
      ws.remove();
    }
  },
);

/** The declaration whose proof holds a battery case's hole (the last `theorem` that starts above it). */
function declarationAt(text: string, hole: Range): string {
  const above = text
    .split("\n")
    .slice(0, hole.start.line + 1)
    .reverse();
  const name = above.map((l) => /^\s*(?:private )?theorem (\S+)/.exec(l)?.[1]).find((n) => n !== undefined);
  assert.ok(name, `no theorem above line ${hole.start.line}`);
  return name;
}

/** The kernel-gate class without metaprograms (the prelude has no `run_tac`) or the lexer-divergence model. */
const preludeCanExpressGate = (c: GateCase): boolean => !c.modelledDivergence && c.policy === undefined;

tierTest(
  "embedded Lean, kernel gate all: the kernel-gate class: what skipped the kernel above the hole and a document's axiom earn nothing; its controls are confirmed",
  async () => {
    const cases = gateCases().filter(preludeCanExpressGate);
    const asCase = (c: GateCase): Case => ({
      name: c.name,
      file: GATE,
      hole: declarationAt(GATE_FILE, c.hole),
      candidate: spelled(c.candidate),
    });
    const attacks = cases.filter((c) => !c.proved).map(asCase);
    const controls = cases.filter((c) => c.proved).map(asCase);
    assert.ok(
      attacks.length >= 2 && controls.length >= 2,
      `${attacks.length} attacks, ${controls.length} controls`,
    );
    await attack(attacks);
    await control(controls);
    const { pool } = await sharedPool();
    assert.ok((pool.kernelGate?.stats.runs ?? 0) >= controls.length, "the kernel gate never ran");
  },
);

tierTest(
  "embedded Lean, kernel gate all: the code-execution class earns nothing (on the battery's own hole)",
  async () => {
    // Every case of the class fills the whole proof of `target`, which this file's `target` states alike.
    assert.equal(declarationAt(CODE_FILE, CODE_ATTACKS[0]!.hole), "target");
    assert.ok(CODE_ATTACKS.every((c) => declarationAt(CODE_FILE, c.hole) === "target"));
    await attack(
      CODE_ATTACKS.map((c) => ({ name: c.name, hole: "target", candidate: spelled(c.candidate) })),
    );
  },
);

tierTest(
  "embedded Lean, kernel gate all: the file-text class (comments swallowing a line, tokens run into the file): attacks earn nothing, controls are confirmed",
  async () => {
    const { attacks, controls } = fileTextCases(MIDLINE_TEXT);
    await attack(attacks.map((c) => ({ name: c.name, file: MIDLINE, hole: c.hole, candidate: c.candidate })));
    await control(
      controls.map((c) => ({ name: c.name, file: MIDLINE, hole: c.hole, candidate: c.candidate })),
    );
  },
);

tierTest(
  "embedded Lean, kernel gate all, the policy's word lists emptied: Lean, the check document and the gate alone still pay no attack",
  async () => {
    // What the word lists refuse (sorry's names, native evaluation, IO) reaches Lean here; the command, option and
    // character checks stay, being the check document's shape rather than a list of words. The code-execution
    // class is left out: some of its cases are attacks only by the words they use (`have extern := h` proves).
    const ws = hacksWorkspace();
    const pool = await embeddedVerifier(ws.root, {
      kernelGate: { kind: "all" },
      timeoutMs: 120_000,
      policy: NO_POLICY,
    });
    try {
      const texts = Object.fromEntries([FILE, GATE].map((f) => [f, readFileSync(join(ws.root, f), "utf8")]));
      const cases: Case[] = [
        ...PRELUDE_ATTACKS,
        ...HACKS.filter(preludeCanExpress).map((h) => ({ ...h, candidate: spelled(h.candidate) })),
      ];
      const verdicts = await pool.verifyMany(
        cases.map((c) => ({ task: taskOf(texts, c), candidate: c.candidate })),
      );
      cases.forEach((c, i) => unrewarded(verdicts[i]!, `policy off: ${c.name}`));
    } finally {
      await pool.stop();
      ws.remove();
    }
  },
);
