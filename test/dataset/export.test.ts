import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { exportDataset, type ExportOptions } from "../../lean-bridge/dataset/exporter";
import { FIM_TOKEN_SETS } from "../../lean-bridge/dataset/views";
import { EXAMPLE, REPO } from "../helpers";
import { exportOptions, tasksOf } from "./exampleExport";
import { tempDir } from "../tempDirs";

function tmp(): string {
  return tempDir("fim-export-");
}

function options(out: string, extra: Partial<ExportOptions> = {}): ExportOptions {
  // These tests are about declaration splits and their balance; bounded.test.ts covers `dedup`.
  return exportOptions(out, { splitMode: "declaration", ...extra });
}

test("export writes files, tasks, a card and a report; ids and splits are deterministic", async () => {
  const a = join(tmp(), "a");
  const b = join(tmp(), "b");
  const r1 = await exportDataset(options(a));
  const r2 = await exportDataset(options(b));
  assert.equal(r1.kind, "ok");
  assert.equal(r2.kind, "ok");
  assert.deepEqual(readdirSync(a).sort(), [
    "README.md",
    "contexts.jsonl",
    "files.jsonl",
    "report.json",
    "summary.svg",
    "tasks.jsonl",
  ]);
  assert.equal(readFileSync(join(a, "tasks.jsonl"), "utf8"), readFileSync(join(b, "tasks.jsonl"), "utf8"));
  const tasks = tasksOf(a);
  assert.ok(tasks.length > 500);
  assert.equal(new Set(tasks.map((t) => t.id)).size, tasks.length, "ids are unique");
  for (const key of [
    "id",
    "file",
    "decl",
    "kind",
    "range",
    "middle",
    "indent",
    "split",
    "context",
    "prefix",
    "suffix",
    "offsets",
    "offsetsCodePoints",
  ])
    assert.ok(key in tasks[0]!, key);
  // Splits are by declaration: every hole of one theorem in one split.
  const splitOfDecl = new Map<string, string>();
  for (const t of tasks) {
    const key = `${t.file}\0${t.context}`;
    assert.equal(splitOfDecl.get(key) ?? t.split, t.split, `${t.decl} is in one split`);
    splitOfDecl.set(key, t.split);
  }
  const splits = new Set(tasks.map((t) => t.split));
  assert.deepEqual([...splits].sort(), ["test", "train", "validation"]);
  // Another seed moves some declarations to other splits, deterministically.
  const c = join(tmp(), "c");
  await exportDataset(options(c, { seed: 7 }));
  const moved = tasksOf(c).filter((t, k) => t.split !== tasks[k]!.split).length;
  assert.ok(moved > 0);
  // files.jsonl holds each file's exact text and hash.
  const files = readFileSync(join(a, "files.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { file: string; sha256: string; text: string });
  const arith = files.find((f) => f.file === "FimExamples/Arith.lean")!;
  assert.equal(arith.text, readFileSync(join(EXAMPLE, "FimExamples", "Arith.lean"), "utf8"));
  const card = readFileSync(join(a, "README.md"), "utf8");
  assert.match(card, /load_dataset\(here\)/);
  assert.ok(card.includes(`Lean toolchain: ${readFileSync(join(EXAMPLE, "lean-toolchain"), "utf8").trim()}`));
  const report = JSON.parse(readFileSync(join(a, "report.json"), "utf8")) as {
    declarations: { skipped: Record<string, number> };
    timeMs: number;
  };
  assert.equal(report.declarations.skipped["term-proof"], 2);
  assert.equal(typeof report.timeMs, "number");
});

test("the default family split: held-out statements never in training, families whole, shares and every kind kept", async () => {
  const out = join(tmp(), "family");
  const r = await exportDataset(exportOptions(out));
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  const tasks = tasksOf(out);
  const contexts = readFileSync(join(out, "contexts.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { statement: string; scope: string[]; file: string });
  const familyOf = (t: { context: number }) => {
    const c = contexts[t.context]!;
    return `${c.file}#${c.scope.flatMap((s) => /^(?:namespace|section) (\S+)/.exec(s)?.[1] ?? []).join(".")}`;
  };
  const trainStatements = new Set(
    tasks.filter((t) => t.split === "train").map((t) => contexts[t.context]!.statement),
  );
  const trainFamilies = new Set(tasks.filter((t) => t.split === "train").map(familyOf));
  const heldOut = tasks.filter((t) => t.split !== "train");
  assert.ok(heldOut.length > 80);
  for (const t of heldOut) {
    assert.ok(!trainStatements.has(contexts[t.context]!.statement), `${t.decl} is held out and trained on`);
    assert.equal(t.heldOut, trainFamilies.has(familyOf(t)) ? "instance" : "family", t.decl);
    assert.equal(typeof t.novel, "boolean");
  }
  for (const t of tasks.filter((t) => t.split === "train")) assert.equal(t.heldOut, null);
  const report = r.report;
  assert.equal(report.split.mode, "family");
  const count = (set: string, split: string) =>
    heldOut.filter((t) => t.heldOut === set && t.split === split).length;
  assert.deepEqual(report.split.heldOut, {
    instance: { validation: count("instance", "validation"), test: count("instance", "test") },
    family: { validation: count("family", "validation"), test: count("family", "test") },
  });
  // Whole families held out, and more instance tasks than family tasks.
  const families = report.split.families;
  assert.ok(families.heldOutNames.length >= 2 && families.total >= 40, JSON.stringify(families));
  for (const name of families.heldOutNames) assert.ok(!trainFamilies.has(name), name);
  assert.ok(count("instance", "test") > count("family", "test"));
  // Near 80/10/10, and every kind in training, listed with its zeros.
  for (const [split, target] of Object.entries(report.splitFractions))
    assert.ok(
      Math.abs(report.holes.kept.shares[split]! - target) < 0.015,
      `${split}: ${report.holes.kept.shares[split]}`,
    );
  assert.deepEqual(Object.keys(report.holes.kept.byKindAndSplit).sort(), [
    "block",
    "proof",
    "steps",
    "tactic",
  ]);
  for (const [kind, row] of Object.entries(report.holes.kept.byKindAndSplit)) {
    assert.deepEqual(Object.keys(row).sort(), ["test", "train", "validation"], kind);
    assert.ok(row.train! > 0, `${kind} has training tasks`);
  }
  assert.deepEqual(report.warnings, []);
  const card = readFileSync(join(out, "README.md"), "utf8");
  assert.match(card, /Split `family` \(the default\)/);
  assert.ok(
    card.includes(
      `**${count("instance", "validation")} validation and ${count("instance", "test")} test tasks are held-out instances**`,
    ),
  );
  assert.match(card, /\| block \| \d+ \| \d+ \| \d+ \| \d+ \|/);
});

test("data-valued definitions give no tasks and are counted in the report and the card", async () => {
  const ws = tmp();
  writeFileSync(
    join(ws, "D.lean"),
    "def answer : Nat := by\n  exact 42\nabbrev Two : Nat := by exact 2\n" +
      "theorem t (a : Nat) : a = a := by\n  rfl\ninstance : Inhabited Nat := by\n  exact ⟨0⟩\n",
  );
  const out = join(ws, "out");
  const r = await exportDataset(options(out, { workspace: ws }));
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.equal(r.report.declarations.skipped["data-valued-definition"], 2);
  const contexts = readFileSync(join(out, "contexts.jsonl"), "utf8").trim().split("\n");
  const declKinds = contexts.map((l) => (JSON.parse(l) as { declKind: string }).declKind);
  assert.deepEqual([...new Set(declKinds)].sort(), ["instance", "theorem"]);
  assert.match(readFileSync(join(out, "README.md"), "utf8"), /skipped: .*data-valued-definition 2/);
});

test("identical (statement, middle) pairs are kept once; --kinds and --max-middle-chars filter", async () => {
  const ws = tmp();
  const body = "theorem same (a : Nat) : a = a := by\n  rfl\n";
  writeFileSync(join(ws, "A.lean"), body);
  writeFileSync(join(ws, "B.lean"), body);
  const out = join(ws, "out");
  const r = await exportDataset(options(out, { workspace: ws }));
  assert.equal(r.kind, "ok");
  if (r.kind === "ok") assert.equal(r.report.holes.duplicatesDropped, 1);
  assert.equal(tasksOf(out).length, 1);
  const only = join(tmp(), "o");
  await exportDataset(options(only, { kinds: ["block"], maxMiddleChars: 10 }));
  const tasks = tasksOf(only);
  assert.ok(tasks.length > 0);
  assert.ok(tasks.every((t) => t.kind === "block" && t.middle.length <= 10));
});

test("by default a hole whose middle is longer than 1,024 characters is no task, and is counted", async () => {
  const ws = tmp();
  // A proof of 40 lines of 30 characters: its whole-proof middle is about 1,200 characters, every other hole short.
  const steps = Array.from(
    { length: 40 },
    (_, k) => `  have h${String(k).padStart(3, "0")} : ${k} = ${k} := rfl`,
  );
  writeFileSync(join(ws, "Long.lean"), `theorem long : True := by\n${steps.join("\n")}\n  trivial\n`);
  const proofChars = steps.join("\n").length + "\n  trivial".length - 2;
  assert.ok(proofChars > 1024 && proofChars < 2000, String(proofChars));
  const bounded = join(ws, "bounded");
  const r = await exportDataset(options(bounded, { workspace: ws }));
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  assert.equal(r.report.maxMiddleChars, 1024);
  assert.equal(r.report.holes.tooLongDropped, 1);
  assert.ok(tasksOf(bounded).every((t) => t.kind !== "proof" && t.middle.length <= 1024));
  assert.match(readFileSync(join(bounded, "README.md"), "utf8"), /longer than 1024 characters: 1 dropped/);
  const wide = join(ws, "wide");
  const w = await exportDataset(options(wide, { workspace: ws, maxMiddleChars: 2000 }));
  assert.equal(w.kind === "ok" && w.report.holes.tooLongDropped, 0);
  assert.equal(tasksOf(wide).filter((t) => t.kind === "proof").length, 1);
});

test("bad input is skipped and reported: binary, invalid UTF-8, oversized files", async () => {
  const ws = tmp();
  writeFileSync(join(ws, "Good.lean"), "theorem g : True := by\n  trivial\n");
  writeFileSync(join(ws, "Binary.lean"), Buffer.from([0x74, 0x00, 0x01, 0x02]));
  writeFileSync(join(ws, "Latin1.lean"), Buffer.from([0x74, 0x68, 0xe9, 0x0a]));
  writeFileSync(join(ws, "Big.lean"), "-- x\n".repeat(1000));
  const out = join(ws, "out");
  const r = await exportDataset(options(out, { workspace: ws, maxFileBytes: 1000 }));
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  const reasons = Object.fromEntries(r.report.files.skipped.map((s) => [s.file, s.reason]));
  assert.match(reasons["Binary.lean"]!, /binary/);
  assert.match(reasons["Latin1.lean"]!, /UTF-8/);
  assert.match(reasons["Big.lean"]!, /larger than 1000 bytes/);
  assert.equal(r.report.files.mined, 1);
});

test("views: lean-grpo rows for whole proofs, fim-text with the chosen sentinels", async () => {
  const out = join(tmp(), "v");
  const r = await exportDataset(
    options(out, { formats: ["native", "lean-grpo", "fim-text"], fimTokens: FIM_TOKEN_SETS.qwen }),
  );
  assert.equal(r.kind, "ok");
  const grpo = readFileSync(join(out, "lean-grpo.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(Object.keys(grpo[0]!).sort(), ["context", "imports", "name", "statement"]);
  assert.equal(grpo.length, tasksOf(out).filter((t) => t.kind === "proof").length);
  assert.match(String(grpo[0]!.statement), /^theorem add_le_add_1 .* := by$/);
  const fim = readFileSync(join(out, "fim-text.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { text: string });
  assert.match(fim[0]!.text, /^<\|fim_prefix\|>[\s\S]*<\|fim_suffix\|>[\s\S]*<\|fim_middle\|>omega$/);
});

test("atomicity: a cancelled export leaves the old dataset intact; a foreign folder is refused", async () => {
  const root = tmp();
  const out = join(root, "ds");
  assert.equal((await exportDataset(options(out))).kind, "ok");
  const before = readFileSync(join(out, "tasks.jsonl"), "utf8");
  const abort = new AbortController();
  const r = await exportDataset(
    options(out, {
      seed: 3,
      signal: abort.signal,
      onProgress: (p) => p.phase === "mining" && p.done >= 1 && abort.abort(),
    }),
  );
  assert.equal(r.kind, "cancelled");
  assert.equal(readFileSync(join(out, "tasks.jsonl"), "utf8"), before);
  assert.deepEqual(readdirSync(root), ["ds"], "no staging folder is left behind");
  const foreign = join(root, "notes");
  mkdirSync(foreign);
  writeFileSync(join(foreign, "thesis.tex"), "precious");
  const refused = await exportDataset(options(foreign));
  assert.equal(refused.kind, "error");
  assert.equal(readFileSync(join(foreign, "thesis.tex"), "utf8"), "precious");
});

test("Ctrl-C during `fim-rlvr export --verify` exits 130 and leaves the previous dataset untouched", async () => {
  const root = tmp();
  const ws = join(root, "ws");
  cpSync(EXAMPLE, ws, { recursive: true });
  const out = join(root, "ds");
  assert.equal((await exportDataset(options(out, { workspace: ws }))).kind, "ok");
  const before = readFileSync(join(out, "tasks.jsonl"), "utf8");
  // A slow simulated verifier (50 ms per declaration) keeps the export busy while the signal arrives.
  const child = spawn(
    process.execPath,
    [
      join(REPO, "dist", "cli.js"),
      "export",
      ws,
      "--out",
      out,
      "--verify",
      "--simulator",
      "--sim-decl-ms",
      "50",
      "--seed",
      "9",
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr.setEncoding("utf8");
  const code = await new Promise<number | null>((resolve) => {
    child.stderr.on("data", (chunk: string) => {
      stderr += chunk;
      if (/export: verifying/.test(stderr) && !child.killed) child.kill("SIGINT");
    });
    child.on("exit", (c) => resolve(c));
  });
  assert.equal(code, 130, stderr);
  assert.match(stderr, /interrupted; the previous dataset \(if any\) is left untouched/);
  assert.equal(readFileSync(join(out, "tasks.jsonl"), "utf8"), before);
  assert.deepEqual(readdirSync(root).sort(), ["ds", "ws"]);
});

test("a workspace without Lean files or without tactic proofs gives no dataset and says what was found", async () => {
  const none = tmp();
  writeFileSync(join(none, "notes.md"), "# not Lean\n");
  const r1 = await exportDataset(options(join(none, "out"), { workspace: none }));
  assert.equal(r1.kind, "empty");
  if (r1.kind === "empty")
    assert.match(r1.message, /found no readable Lean source files .* needs a folder holding \.lean files/);
  const terms = tmp();
  writeFileSync(join(terms, "T.lean"), "theorem t : True := trivial\ndef f : Nat := 1\n");
  const r2 = await exportDataset(options(join(terms, "out"), { workspace: terms }));
  assert.equal(r2.kind, "empty");
  if (r2.kind === "empty")
    assert.match(r2.message, /found 1 Lean file with 2 declarations, but no tactic proofs .*term-proof 2/);
  const filtered = await exportDataset(options(join(tmp(), "out"), { maxMiddleChars: 0 }));
  assert.equal(filtered.kind, "empty");
  if (filtered.kind === "empty")
    assert.match(filtered.message, /none is left after the filters .* longer than --max-middle-chars/);
  assert.deepEqual(readdirSync(terms).sort(), ["T.lean"], "nothing written, no staging left");
});

test("tasks carry code-point offsets that slice like Python, and the card gives the achieved split shares", async () => {
  const out = join(tmp(), "cp");
  const r = await exportDataset(options(out));
  assert.equal(r.kind, "ok");
  if (r.kind !== "ok") return;
  const texts = new Map(
    readFileSync(join(out, "files.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { file: string; text: string })
      .map((f) => [f.file, Array.from(f.text)] as const),
  );
  let astral = 0;
  for (const t of tasksOf(out)) {
    const chars = texts.get(t.file)!;
    assert.equal(chars.slice(t.offsetsCodePoints.start, t.offsetsCodePoints.end).join(""), t.middle);
    if (t.offsetsCodePoints.start !== t.offsets.start) astral++;
  }
  assert.ok(astral > 0, "the example workspace has holes after astral characters, where the offsets differ");
  const shares = r.report.holes.kept.shares;
  for (const [split, target] of Object.entries(r.report.splitFractions))
    assert.ok(Math.abs(shares[split]! - target) < 0.01, `${split}: ${shares[split]} vs ${target}`);
  const card = readFileSync(join(out, "README.md"), "utf8");
  assert.match(card, /\| train \| \d+ \| \d+\.\d% \| 80\.0% \|/);
  assert.match(card, /UTF-16 code units/);
  assert.match(card, /offsetsCodePoints/);
});

test("holes in `module` files are never offered where the project's Lean cannot axiom-check them; the report counts them", async () => {
  const work = tmp();
  const ws = join(work, "ws");
  mkdirSync(ws);
  cpSync(join(EXAMPLE, "FimExamples"), join(ws, "FimExamples"), { recursive: true });
  const arith = join(ws, "FimExamples", "Arith.lean");
  writeFileSync(arith, `module\n\n${readFileSync(arith, "utf8")}`);
  for (const [toolchain, dropped] of [
    ["leanprover/lean4:v4.29.0", true],
    ["leanprover/lean4:v4.30.0", false],
  ] as const) {
    writeFileSync(join(ws, "lean-toolchain"), `${toolchain}\n`);
    const out = join(work, toolchain.replace(/\W/g, "_"));
    const r = await exportDataset(options(out, { workspace: ws }));
    assert.equal(r.kind, "ok");
    if (r.kind !== "ok") continue;
    const fromArith = tasksOf(out).filter((t) => t.file === "FimExamples/Arith.lean").length;
    if (dropped) {
      assert.equal(fromArith, 0);
      assert.ok(r.report.holes.uncheckableDropped > 0);
      assert.match(r.report.holes.uncheckableReason ?? "", /module.*4\.30/);
      assert.match(readFileSync(join(out, "README.md"), "utf8"), /Holes not offered/);
    } else {
      assert.ok(fromArith > 0);
      assert.equal(r.report.holes.uncheckableDropped, 0);
    }
  }
});
