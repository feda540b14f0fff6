/**
 * Rows that share a header pay its import cost once per slot. The pool checks every task in one of K slot
 * documents, changing only what differs (a minimal didChange), and Lean keeps a document's imports while its
 * header's syntax is unchanged (src/Lean/Language/Lean.lean, `parseHeader`'s "semi-fast path"); the simulator
 * charges a header load whenever a document's worker (re)starts. A batch whose files alternate between two
 * headers is ordered so each slot stays within one header: the loads are counted, not timed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { inMemory } from "../harness";
import { EXAMPLE, proofHole } from "../helpers";
import { tempDir } from "../tempDirs";

/** Files come in pairs of one header, then a pair of the other: A A B B A A … */
const headerOf = (k: number) => (Math.floor(k / 2) % 2 === 0 ? "A" : "B");

function project(files: number): {
  root: string;
  items: { task: { file: string; hole: ReturnType<typeof proofHole> }; candidate: string }[];
} {
  const root = tempDir("fim-headers-");
  cpSync(join(EXAMPLE, "lean-toolchain"), join(root, "lean-toolchain"));
  mkdirSync(join(root, "Base"));
  writeFileSync(join(root, "Base", "A.lean"), "def baseA : Nat := 1\n");
  writeFileSync(join(root, "Base", "B.lean"), "def baseB : Nat := 2\n");
  mkdirSync(join(root, "Rows"));
  const items = [];
  for (let k = 0; k < files; k++) {
    // As `fim-rlvr import` writes them: the row's header, then its theorem in a namespace of its own.
    const header = headerOf(k) === "A" ? "import Base.A\nopen Nat" : "import Base.B";
    const name = `row_${k}`;
    const text = `${header}\n\nnamespace Rows.R${k}\n\ntheorem ${name} (n : Nat) : n + ${k} = ${k} + n := by\n  omega\n\nend Rows.R${k}\n`;
    const file = `Rows/R${k}.lean`;
    writeFileSync(join(root, file), text);
    for (const candidate of ["omega", "simp", "rfl", "decide"])
      items.push({ task: { file, hole: proofHole(text, name) }, candidate });
  }
  return { root, items };
}

test("a batch over files whose headers alternate loads each header about once per slot", async () => {
  const { root, items } = project(12);
  const h = await inMemory({ cwd: root }, { projectRoot: root, slots: 2 });
  try {
    const verdicts = await h.pool.verifyMany(items);
    assert.deepEqual(
      verdicts.map((v) => v.kind === "proved"),
      items.map((i) => i.candidate === "omega"),
      JSON.stringify(verdicts.map((v) => [v.kind, (v as { reason?: string }).reason])),
    );
    // 2 slots, 2 headers: one load per slot to start with, at most one switch each when a header's work runs
    // out. Taken in file order, each slot would switch header on nearly every file.
    assert.ok(h.simulator.stats.headerLoads <= 4, `header loads: ${h.simulator.stats.headerLoads}`);
    // Every distinct check elaborated its theorem once, and each proved hole once more with the verifier's
    // no-op in it (verify/noopProbe.ts): one per file here.
    assert.equal(
      h.simulator.stats.elaborated,
      items.length + 12,
      "every distinct check elaborated its theorem",
    );
  } finally {
    await h.close();
  }
});

test("checks of one header on one slot keep the imports: one load for all of them", async () => {
  const { root, items } = project(12);
  const h = await inMemory({ cwd: root }, { projectRoot: root, slots: 1 });
  try {
    const sameHeader = items.filter((i) => headerOf(Number(/R(\d+)\.lean$/.exec(i.task.file)![1])) === "A");
    for (const item of sameHeader) await h.pool.verify(item.task, item.candidate);
    assert.equal(h.simulator.stats.headerLoads, 1);
  } finally {
    await h.close();
  }
});
