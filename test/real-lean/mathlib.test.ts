/**
 * The CLI against real Lean on lean-env-mathlib, a project written the way current projects are (`module`
 * files, Mathlib's `lemma`, `open Classical`, `private`/`protected`, `set_option … in`, sections with
 * `variable`, instances and examples): `export --verify` keeps every hole, correct proofs are proved with
 * their axioms named in full, attacks earn nothing. Runs where `lake` is on PATH and the project is built
 * (`lake exe cache get && lake build` in lean-env-mathlib; the hosted workflow's Mathlib job does both and
 * sets FIM_REAL_LEAN_MATHLIB=1, which turns a skip into a failure). Needs `npm run build` (dist/cli.js).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Range } from "vscode-languageserver-protocol";
import { which } from "../../lean-bridge/server/launch";
import { LineIndex } from "../../lean-bridge/text/positions";
import { REPO, proofHole, runCli } from "../helpers";
import { MATHLIB_EXAMPLE, announce, mathlibProjectBuilt, mathlibGate, realLeanTest } from "./gate";

const gate = mathlibGate(which("lake"), process.env, () => mathlibProjectBuilt(MATHLIB_EXAMPLE));
announce("test/real-lean/mathlib.test.ts", gate);

const CLI = join(REPO, "dist", "cli.js");
const ALGEBRA = "FimMathlib/Algebra.lean";
const CLASSIC = "FimMathlib/Classic.lean";
const read = (file: string) => readFileSync(join(MATHLIB_EXAMPLE, file), "utf8");

/** The range of `piece` (its first occurrence after `after`). */
function rangeOf(text: string, piece: string, after: string): Range {
  const start = text.indexOf(piece, text.indexOf(after));
  assert.ok(start >= 0, `no ${JSON.stringify(piece)} after ${JSON.stringify(after)}`);
  return new LineIndex(text).rangeAt(start, start + piece.length);
}

/** The declaration's own proof: the text of its hole, to put back as the candidate. */
function ownProof(text: string, name: string): { hole: Range; candidate: string } {
  const hole = proofHole(text, name);
  const index = new LineIndex(text);
  return { hole, candidate: text.slice(index.offsetAt(hole.start), index.offsetAt(hole.end)) };
}

interface VerdictLine {
  file: string;
  candidate: string;
  verdict: { kind: string; reward: number; axioms?: string[]; reason?: string };
}

async function verifyBatch(
  lines: { file: string; hole: Range; candidate: string }[],
): Promise<VerdictLine[]> {
  const dir = mkdtempSync(join(tmpdir(), "fim-mathlib-batch-"));
  const input = join(dir, "in.jsonl");
  const out = join(dir, "out.jsonl");
  writeFileSync(input, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  const r = await runCli(
    CLI,
    [
      "verify-batch",
      "--project",
      MATHLIB_EXAMPLE,
      "--input",
      input,
      "--out",
      out,
      "--reward",
      "partial",
    ].concat(["--workers", "2", "--no-sandbox", "--timeout-ms", "300000"]),
    process.env,
  );
  assert.equal(r.code, 0, r.stderr);
  return readFileSync(out, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as VerdictLine);
}

realLeanTest(
  "real Lean + Mathlib: `export --verify` keeps every hole of module files, lemmas, instances and examples",
  gate,
  async () => {
    const out = join(mkdtempSync(join(tmpdir(), "fim-mathlib-export-")), "ds");
    const r = await runCli(
      CLI,
      ["export", MATHLIB_EXAMPLE, "--out", out, "--verify", "--workers", "2", "--no-sandbox"],
      process.env,
    );
    assert.equal(r.code, 0, r.stderr);
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
      verification?: { dropped: number; kept: number; verifier: string; examples: unknown[] };
    };
    assert.match(report.verification?.verifier ?? "", /^Lean/);
    assert.equal(report.verification?.dropped, 0, JSON.stringify(report.verification?.examples));
    const tasks = readFileSync(join(out, "tasks.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { file: string; decl: string; declKind: string });
    for (const [file, name] of [
      [ALGEBRA, "add_sq_expand"], // `lemma` in a `module`, section variables
      [ALGEBRA, "three_mul_pos"], // private
      [ALGEBRA, "le_add_sq"], // protected
      [ALGEBRA, "sub_add_cancel_of_pos"], // set_option … in
      [CLASSIC, "ite_same"], // open Classical: decidable by choice
      [CLASSIC, "Coin.heads_ne_tails"], // protected, in a file without `module`
      [CLASSIC, "coinNonempty"], // a named instance
      [CLASSIC, "cube_expand"], // set_option … in
    ] as const)
      assert.ok(
        tasks.some((t) => t.file === file && t.decl.endsWith(name)),
        `no task for ${name} in ${file}`,
      );
    for (const file of [ALGEBRA, CLASSIC])
      for (const kind of ["instance", "example"])
        assert.ok(
          tasks.some((t) => t.file === file && t.declKind === kind),
          `no task for an ${kind} in ${file}`,
        );
  },
);

realLeanTest(
  "real Lean + Mathlib: correct proofs are proved with axioms in full; attacks and empty progress earn nothing",
  gate,
  async () => {
    const algebra = read(ALGEBRA);
    const classic = read(CLASSIC);
    const correct = [
      ...["add_sq_expand", "three_mul_pos", "le_add_sq", "sub_add_cancel_of_pos", "six_mul_pos"].map((n) => ({
        file: ALGEBRA,
        ...ownProof(algebra, n),
      })),
      ...[
        "imp_iff_not_or_of",
        "of_not_not'",
        "ite_same",
        "choose_spec_eq",
        "Coin.heads_ne_tails",
        "cube_expand",
      ].map((n) => ({ file: CLASSIC, ...ownProof(classic, n) })),
    ];
    const ring = proofHole(algebra, "add_sq_expand");
    const attacks = [
      "exact (by skip)",
      "exact (by done)",
      "have h : False := by skip\nexact h.elim",
      "have _t : True := by exact True.intro",
      "sleep 10\nring",
      "native_decide",
      "exact sorry",
      "skip",
      "ring\n\ntheorem sneaky : True := trivial",
      "ring\nend FimMathlib.Algebra",
    ].map((candidate) => ({ file: ALGEBRA, hole: ring, candidate }));
    const bullets = [
      // One goal at the hole and one left after the bullet: no progress.
      {
        file: CLASSIC,
        hole: proofHole(classic, "imp_iff_not_or_of"),
        candidate: "by_cases hp : p\n· exact Or.inr (h hp)",
      },
    ];
    // Two goals at the hole (after `constructor`), one closed: a quarter.
    const half = {
      file: ALGEBRA,
      hole: rangeOf(algebra, "· linarith\n  · linarith", "lemma solve_system"),
      candidate: "· linarith",
    };
    const verdicts = await verifyBatch([...correct, ...attacks, ...bullets, half]);
    assert.equal(verdicts.length, correct.length + attacks.length + bullets.length + 1);
    const at = (k: number) => verdicts[k]!;
    correct.forEach((c, k) => {
      const v = at(k).verdict;
      assert.equal(v.kind, "proved", `${c.file}: ${c.candidate}: ${JSON.stringify(v)}`);
      assert.ok(!(v.axioms ?? []).includes("choice"), `a shortened axiom name: ${JSON.stringify(v.axioms)}`);
    });
    // Classical proofs (by_contra, an `if` decided by choice, choose_spec) depend on Classical.choice.
    const classical = correct
      .map((c, k) => ({ c, v: at(k).verdict }))
      .filter(({ c }) => c.file === CLASSIC && /by_contra|split|choose_spec/.test(c.candidate));
    assert.equal(classical.length, 3);
    for (const { c, v } of classical)
      assert.ok((v.axioms ?? []).includes("Classical.choice"), `${c.candidate}: ${JSON.stringify(v.axioms)}`);
    [...attacks, ...bullets].forEach((a, k) => {
      const v = at(correct.length + k).verdict;
      assert.notEqual(v.kind, "proved", a.candidate);
      assert.equal(v.reward, 0, `${a.candidate}: ${JSON.stringify(v)}`);
    });
    const last = at(verdicts.length - 1).verdict;
    assert.equal(last.kind, "incomplete", JSON.stringify(last));
    assert.equal(last.reward, 0.25, JSON.stringify(last));
  },
);
