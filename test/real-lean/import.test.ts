/**
 * `fim-rlvr import`'s sorry pre-check where Lean answers (the same workflow test/statements/import.test.ts
 * runs against the simulator): each statement is checked with `sorry` as its proof by Lean's language server
 * in a fresh core-only Lake project; a statement Lean cannot elaborate is dropped with Lean's own message, a
 * row whose header the project cannot load is dropped as an environment problem, a duplicate is kept once,
 * and the rest become tasks. Skipped, with the reason printed, where `lake` is not on PATH (failing instead
 * where FIM_REAL_LEAN=1, see gate.ts).
 */
import assert from "node:assert/strict";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO, runCli } from "../helpers";
import { announce, processCoreGate, realLeanTest } from "./gate";

const gate = processCoreGate();
announce("test/real-lean/import.test.ts", gate);

const CLI = join(REPO, "dist", "cli.js");

function lines<T>(path: string): T[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as T);
}

realLeanTest(
  "import's sorry pre-check with Lean: keeps what elaborates, drops the rest with Lean's message",
  gate,
  async () => {
    const dir = mkdtempSync(join(tmpdir(), "fim-real-import-"));
    cpSync(join(REPO, "lean-env", "lean-toolchain"), join(dir, "lean-toolchain"));
    writeFileSync(join(dir, "lakefile.toml"), 'name = "realimport"\n');
    const source = join(dir, "theorems.jsonl");
    const rows = [
      { name: "keeps", statement: "theorem keeps (n : Nat) : n + 0 = n", imports: [] },
      { name: "keeps_again", statement: "theorem keeps_again (n : Nat) :\n    n + 0 = n", imports: [] },
      {
        name: "with_proof",
        statement: "theorem with_proof (p : Prop) (hp : p) : p ∧ p := by\n  exact ⟨hp, hp⟩",
        imports: [],
      },
      // Nat plus a string: no HAdd instance, an elaboration error in the statement itself.
      { name: "ill_typed", statement: 'theorem ill_typed (n : Nat) : n + "x" = n', imports: [] },
      { name: "pinned", statement: "theorem pinned : True", imports: ["NoSuchLibrary.Old"] },
    ];
    writeFileSync(source, rows.map((r) => JSON.stringify(r)).join("\n") + "\n");
    const out = join(dir, "ds");
    const r = await runCli(CLI, ["import", source, "--project", dir, "--out", out], process.env);
    assert.equal(r.code, 0, r.stderr);
    assert.doesNotMatch(r.stderr, /simulator/i, "Lean checked, not the simulator");
    const report = JSON.parse(readFileSync(join(out, "report.json"), "utf8")) as {
      verifier: string;
      rows: { read: number; duplicates: number; kept: number; dropped: Record<string, number> };
    };
    assert.deepEqual(
      {
        read: report.rows.read,
        duplicates: report.rows.duplicates,
        kept: report.rows.kept,
        doesNotElaborate: report.rows.dropped.doesNotElaborate,
        environment: report.rows.dropped.environment,
        inconclusive: report.rows.dropped.inconclusive,
      },
      { read: 5, duplicates: 1, kept: 2, doesNotElaborate: 1, environment: 1, inconclusive: 0 },
      JSON.stringify(report),
    );
    const dropped = lines<{ label: string; kind: string; message: string }>(join(out, "dropped.jsonl"));
    const illTyped = dropped.find((d) => d.label === "ill_typed");
    assert.equal(illTyped?.kind, "doesNotElaborate");
    assert.match(illTyped.message, /\S/, "Lean's own message is kept");
    assert.equal(dropped.find((d) => d.label === "pinned")?.kind, "environment");
    const tasks = lines<{ kind: string; decl: string }>(join(out, "tasks.jsonl"));
    assert.ok(tasks.some((t) => t.kind === "proof" && t.decl.endsWith(".keeps")));
    assert.ok(tasks.some((t) => t.kind === "proof" && t.decl.endsWith(".with_proof")));
  },
);
