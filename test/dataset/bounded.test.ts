/**
 * Issue 14: a dataset grows with its workspace, not with tasks × declaration size (each task's prefix and
 * suffix are bounded windows, the full text stays in files.jsonl), and the default split keeps held-out
 * middles out of training, marking each held-out task `novel`.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  boundPrefix,
  boundSuffix,
  normalisedMiddleKey,
  scopesInEffect,
  suffixChars,
  tokensMiddleKey,
} from "../../lean-bridge/dataset/context";
import { normalisedMiddle } from "../../lean-bridge/lean/sameCode";
import { mineText } from "../../lean-bridge/holes/mine";
import { exportDataset, type ExportOptions, type ExportReport } from "../../lean-bridge/dataset/exporter";
import type { ContextRecord, TaskRecord } from "../../lean-bridge/dataset/records";
import { hash53 } from "../../lean-bridge/dataset/hash53";
import { promptPrefix } from "../../lean-bridge/dataset/views";
import { parseFile } from "../../lean-bridge/lean/commands";
import { lex } from "../../lean-bridge/lean/lexer";
import { exportOptions, tasksOf } from "./exampleExport";
import { tempDir } from "../tempDirs";

function tmp(): string {
  return tempDir("fim-bounded-");
}

function options(workspace: string, out: string, extra: Partial<ExportOptions> = {}): ExportOptions {
  return exportOptions(out, { workspace, maxFileBytes: 64 << 20, ...extra });
}

function contextsOf(dir: string): ContextRecord[] {
  return readFileSync(join(dir, "contexts.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as ContextRecord);
}

function textsOf(dir: string): Map<string, string> {
  return new Map(
    readFileSync(join(dir, "files.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { file: string; text: string })
      .map((f) => [f.file, f.text]),
  );
}

/** One file whose single proof has `steps` nested `have` blocks: holes × declaration size grows quadratically. */
function longProof(steps: number): string {
  const lines = [
    "import Mathlib.Data.Nat.Basic",
    "import Mathlib.Order.Basic",
    "",
    "namespace Long",
    "open Nat",
    "variable (n : Nat)",
    "",
    "/-- A long proof. -/",
    "theorem long_proof (m : Nat) : m + 0 = m := by",
  ];
  for (let k = 0; k < steps; k++)
    lines.push(`  have h${k} : m + ${k} = m + ${k} := by`, `    rfl`, `  simp only [Nat.add_zero] at h${k}`);
  lines.push("  simp", "", "end Long", "");
  return lines.join("\n");
}

async function exportLong(
  steps: number,
  contextChars: number,
): Promise<{ out: string; tasks: TaskRecord[] }> {
  const ws = tmp();
  writeFileSync(join(ws, "Long.lean"), longProof(steps));
  const out = join(ws, "out");
  const r = await exportDataset(options(ws, out, { contextChars, splitMode: "declaration" }));
  assert.equal(r.kind, "ok", r.kind === "ok" ? "" : JSON.stringify(r));
  return { out, tasks: tasksOf(out) };
}

test("windows are cut at line breaks and never split an astral character", () => {
  assert.equal(boundPrefix("abc", 5), "abc");
  assert.equal(boundPrefix("line one\nline two\n  ", 12), "line two\n  ");
  assert.equal(boundPrefix("x𝔸yz", 3), "yz", "the low half of 𝔸 is not kept alone");
  assert.equal(boundSuffix("\n  rfl\n  simp\nend", 10), "\n  rfl");
  assert.equal(boundSuffix("𝔸𝔸", 3), "𝔸");
  assert.equal(suffixChars(1024), 256);
});

test("each task's prefix and suffix are bounded, contiguous with the hole, and the prompt keeps the statement", async () => {
  const contextChars = 300;
  const { out, tasks } = await exportLong(200, contextChars);
  const text = textsOf(out).get("Long.lean")!;
  const contexts = contextsOf(out);
  assert.equal(contexts.length, 1, "one declaration, one context row");
  assert.ok(tasks.length > 600);
  let cut = 0;
  for (const t of tasks) {
    const context = contexts[t.context]!;
    const declaration = text.slice(context.offsets.start, context.offsets.end);
    assert.equal(context.text, declaration);
    assert.ok(
      declaration.slice(0, t.offsets.start - context.offsets.start).endsWith(t.prefix),
      "the declaration's text before the hole, from the context row, ends with the window",
    );
    assert.ok(t.prefix.length <= contextChars, `prefix of ${t.id}: ${t.prefix.length}`);
    assert.ok(t.suffix.length <= suffixChars(contextChars), `suffix of ${t.id}: ${t.suffix.length}`);
    assert.ok(text.slice(0, t.offsets.start).endsWith(t.prefix), "the file before the hole ends with prefix");
    assert.ok(text.slice(t.offsets.end).startsWith(t.suffix), "the file after the hole starts with suffix");
    assert.equal(text.slice(t.offsets.start, t.offsets.end), t.middle);
    const prompt = promptPrefix(context, t);
    assert.ok(prompt.includes(context.statement) && prompt.endsWith(t.prefix));
    assert.match(
      prompt,
      /^import Mathlib\.Data\.Nat\.Basic\nimport Mathlib\.Order\.Basic\nnamespace Long\nopen Nat\nvariable \(n : Nat\)\n\n/,
    );
    if (!t.prefix.includes(context.statement)) cut++;
  }
  assert.ok(cut > tasks.length / 2, "most prefixes of a long proof are cut to the window");
});

test("a dataset's size grows linearly with one declaration's length, and is bounded per task", async () => {
  const contextChars = 512;
  const small = await exportLong(150, contextChars);
  const large = await exportLong(600, contextChars);
  const bytes = (out: string) => statSync(join(out, "tasks.jsonl")).size;
  const perTask = (out: string, n: number) => bytes(out) / n;
  // Four times the proof: about four times the tasks and bytes (the old whole-declaration prefixes: ~16×).
  const ratio = bytes(large.out) / bytes(small.out);
  assert.ok(ratio < 5, `tasks.jsonl grew ${ratio.toFixed(1)}× for a 4× longer proof`);
  assert.ok(Math.abs(perTask(large.out, large.tasks.length) - perTask(small.out, small.tasks.length)) < 200);
  // Per task: the windows, the middle and a bounded rest (ids, positions, statement, header).
  for (const t of large.tasks) {
    const line = JSON.stringify(t).length;
    assert.ok(
      line <= contextChars + suffixChars(contextChars) + 2 * t.middle.length + 1200,
      `${t.id}: ${line}`,
    );
  }
});

test("scopes: namespaces, sections and opens in effect, `end` closing them, `open … in` for one command", () => {
  const text = [
    "namespace A",
    "open Nat",
    "section S",
    "universe u",
    "open List in",
    "theorem x : True := by trivial",
    "theorem y : True := by trivial",
    "end S",
    "theorem z : True := by trivial",
    "end A",
    "theorem w : True := by trivial",
  ].join("\n");
  const parsed = parseFile(text);
  const scopes = scopesInEffect(parsed);
  const at = (name: string) => scopes[parsed.commands.findIndex((c) => c.declaration?.name === name)];
  assert.deepEqual(at("x"), ["namespace A", "open Nat", "section S", "universe u", "open List in"]);
  assert.deepEqual(at("y"), ["namespace A", "open Nat", "section S", "universe u"]);
  assert.deepEqual(at("z"), ["namespace A", "open Nat"]);
  assert.deepEqual(at("w"), []);
});

test("a middle is compared without comments and layout, but tokens stay apart", () => {
  const norm = (s: string) => normalisedMiddle(lex(s), 0, s.length);
  assert.equal(norm("simp  [foo,bar] -- why\n  /- note -/ exact h"), norm("simp [foo, bar]\nexact h"));
  assert.notEqual(norm("exact a b"), norm("exact ab"));
  // The export hashes the same text over the tokens in place.
  for (const text of ["simp  [foo,bar] -- why\n  exact h", "rw [← mul_comm] /- x -/ at h₁", ""]) {
    const ts = lex(text);
    assert.equal(normalisedMiddleKey(ts, 0, text.length), hash53(normalisedMiddle(ts, 0, text.length)));
  }
});

/** Declarations whose proofs repeat a few middles, written with different comments and layout. */
function repetitiveWorkspace(): string {
  const ws = tmp();
  const proofs = ["rfl", "rfl -- the same", "simp", "simp  -- again", "omega"];
  const decls: string[] = [];
  for (let k = 0; k < 120; k++)
    decls.push(`theorem t${k} (a : Nat) : a + ${k} = a + ${k} := by\n  ${proofs[k % proofs.length]}\n`);
  for (let k = 0; k < 60; k++)
    decls.push(`theorem u${k} (a : Nat) : a * ${k} = a * ${k} := by\n  exact Nat.mul_comm_${k} a\n`);
  writeFileSync(join(ws, "R.lean"), decls.join("\n"));
  return ws;
}

function normalised(middle: string): string {
  return middle.replace(/--.*$/gm, "").replace(/\s+/g, " ").trim();
}

test("the dedup split keeps every held-out middle out of training; each held-out task is novel", async () => {
  const ws = repetitiveWorkspace();
  const out = join(ws, "dedup");
  const r = await exportDataset(options(ws, out, { splitMode: "dedup" }));
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  const tasks = tasksOf(out);
  const heldOut = new Set(tasks.filter((t) => t.split !== "train").map((t) => normalised(t.middle)));
  const train = tasks.filter((t) => t.split === "train");
  assert.ok(train.length > 0);
  for (const t of train) {
    assert.ok(!heldOut.has(normalised(t.middle)), `training has held-out middle ${t.middle}`);
    assert.equal(t.novel, null, "training tasks carry no novel flag");
  }
  assert.ok(tasks.filter((t) => t.split !== "train").every((t) => t.novel === true));
  const overlap: ExportReport["overlap"] = r.report.overlap;
  assert.equal(overlap.splitMode, "dedup");
  assert.equal(overlap.test.inTraining, 0);
  assert.ok(
    overlap.trainingDropped > 0,
    "training tasks sharing rfl/simp/omega with held-out ones were dropped",
  );
  const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as ExportReport;
  assert.deepEqual(report.overlap, overlap);
  assert.match(
    readFileSync(join(out, "README.md"), "utf8"),
    /Split `dedup`: by declaration, and no training task has the middle/,
  );
});

test("the declaration split keeps every task and marks held-out ones novel exactly when training lacks the middle", async () => {
  const ws = repetitiveWorkspace();
  const out = join(ws, "decl");
  const r = await exportDataset(options(ws, out, { splitMode: "declaration" }));
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  const tasks = tasksOf(out);
  const inTraining = new Set(tasks.filter((t) => t.split === "train").map((t) => normalised(t.middle)));
  const test = tasks.filter((t) => t.split === "test");
  for (const t of tasks.filter((t) => t.split !== "train"))
    assert.equal(t.novel, !inTraining.has(normalised(t.middle)), `${t.middle}`);
  const memorised = test.filter((t) => t.novel === false).length;
  assert.ok(memorised > 0 && memorised < test.length, "some test middles occur in training, some do not");
  assert.deepEqual(r.report.overlap.test, { tasks: test.length, inTraining: memorised });
  assert.equal(r.report.overlap.trainingDropped, 0);
  const card = readFileSync(join(out, "README.md"), "utf8");
  assert.ok(card.includes(`**${memorised} of ${test.length} test middles**`), card);
});

test("the normalised-middle key of every span of tokens is the hash of its normalised middle", () => {
  const text = [
    "theorem t (n : Nat) : n = n := by -- lead",
    "  /- a block -/ induction n with",
    "  | zero => rfl -- z",
    "  | succ k ih =>",
    "    /-- doc -/ simp [ih]  -- s",
    "    exact ⟨rfl, «x y»⟩ /- end -/",
  ].join("\n");
  const ts = lex(text);
  // Every pair of offsets, inside tokens too.
  for (let start = 0; start <= text.length; start++)
    for (let end = 0; end <= text.length; end++)
      assert.equal(
        normalisedMiddleKey(ts, start, end),
        hash53(normalisedMiddle(ts, start, end)),
        `span ${start}..${end}`,
      );
});

test("a mined hole's key from its first and last tokens is the key of its offsets", () => {
  const text = [
    "theorem t (n : Nat) : n + 0 = n := by",
    "  induction n with -- on n",
    "  | zero => rfl",
    "  | succ k ih =>",
    "    simp  -- a comment",
    "    /- a block comment -/",
    "    omega",
    "",
    "theorem u (a b : Nat) (h : a = b) : b = a := by",
    "  have h' : b = a := by",
    "    rw [h]  -- rewrite",
    "  · exact h'",
  ].join("\n");
  const parsed = parseFile(text);
  const holes = mineText(text, parsed).holes;
  assert.ok(holes.length >= 8, `${holes.length} holes`);
  for (const hole of holes) {
    assert.equal(parsed.tokens.starts[hole.firstToken], hole.start);
    assert.equal(parsed.tokens.ends[hole.lastToken], hole.end);
    assert.equal(
      tokensMiddleKey(parsed.tokens, hole.firstToken, hole.lastToken),
      normalisedMiddleKey(parsed.tokens, hole.start, hole.end),
      `${hole.kind} ${hole.middle}`,
    );
  }
});
