/**
 * The imports' fingerprint (lean-bridge/verify/importFingerprint.ts): every way a compiled import can change
 * under a running verifier is found and named, a `touch` with the same bytes is not a change, files Lean
 * never loads are not watched, and sweeps are shared by callers waiting together.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, statSync, unlinkSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ImportFingerprint } from "../../lean-bridge/verify/importFingerprint";

const BUILD = join(".lake", "build", "lib", "lean");
const DEP = join(".lake", "packages", "dep", ".lake", "build", "lib", "lean");

function tree(): string {
  const root = mkdtempSync(join(tmpdir(), "fim-imports-"));
  const files = {
    [join(BUILD, "Ws", "Basic.olean")]: "ws basic",
    [join(BUILD, "Ws", "Basic.ilean")]: "not loaded by Lean's elaborator",
    [join(BUILD, "Ws", "Mod.olean.server")]: "module part",
    [join(BUILD, "Ws", "Mod.ir")]: "ir",
    [join(DEP, "Dep", "Core.olean")]: "dep core",
    [join(".fim-rlvr", "gate", "run-1", "out", "FimRlvrGateCheck.olean")]: "the gate's own output",
    [join("Ws", "Basic.lean")]: "source",
  };
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(join(root, file, ".."), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  return root;
}

async function check(print: ImportFingerprint) {
  return print.checkedSince(performance.now());
}

test("the fingerprint covers the module files of the workspace and its packages, nothing else", async () => {
  const root = tree();
  try {
    const print = ImportFingerprint.take(root);
    assert.equal(print.fileCount, 4, "Basic.olean, Mod.olean.server, Mod.ir, Dep/Core.olean");
    assert.deepEqual(await check(print), { kind: "unchanged", files: 4 });
    // Files Lean does not load modules from, and the verifier's own scratch, change freely.
    writeFileSync(join(root, BUILD, "Ws", "Basic.ilean"), "changed");
    writeFileSync(join(root, "Ws", "Basic.lean"), "changed");
    writeFileSync(join(root, BUILD, "Ws", "Basic.trace"), "new");
    writeFileSync(join(root, ".fim-rlvr", "gate", "run-1", "out", "FimRlvrGateCheck.olean"), "next run");
    mkdirSync(join(root, ".fim-rlvr", "gate", "run-2"), { recursive: true });
    writeFileSync(join(root, ".fim-rlvr", "gate", "run-2", "X.olean"), "gate");
    assert.equal((await check(print)).kind, "unchanged");
    // The same bytes under new times (a rebuild that changed nothing): no change.
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, DEP, "Dep", "Core.olean"), later, later);
    assert.equal((await check(print)).kind, "unchanged");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

const CHANGES: [string, (root: string) => void, string, string][] = [
  [
    "an import rewritten (a poisoned package module)",
    (root) => writeFileSync(join(root, DEP, "Dep", "Core.olean"), "dep core + axiom cheat : False"),
    join(DEP, "Dep", "Core.olean"),
    "rewritten",
  ],
  [
    "an import rewritten with the same size and its times put back",
    (root) => {
      const file = join(root, BUILD, "Ws", "Basic.olean");
      const before = statSync(file);
      writeFileSync(file, "ws BASIC");
      utimesSync(file, before.atime, before.mtime);
    },
    join(BUILD, "Ws", "Basic.olean"),
    "rewritten",
  ],
  [
    "an import removed",
    (root) => unlinkSync(join(root, BUILD, "Ws", "Mod.ir")),
    join(BUILD, "Ws", "Mod.ir"),
    "removed",
  ],
  [
    "a new module beside the others (one that shadows a package's)",
    (root) => writeFileSync(join(root, BUILD, "Ws", "Shadow.olean"), "new"),
    join(BUILD, "Ws", "Shadow.olean"),
    "added",
  ],
  [
    "a new folder of modules",
    (root) => {
      mkdirSync(join(root, BUILD, "Evil", "Deep"), { recursive: true });
      writeFileSync(join(root, BUILD, "Evil", "Deep", "Cheat.olean"), "new");
    },
    join(BUILD, "Evil", "Deep", "Cheat.olean"),
    "added",
  ],
];

for (const [name, change, file, kind] of CHANGES)
  test(`found and named: ${name}; every later answer is the same`, async () => {
    const root = tree();
    try {
      const print = ImportFingerprint.take(root);
      assert.equal((await check(print)).kind, "unchanged");
      change(root);
      const found = await check(print);
      assert.equal(found.kind, "tampered");
      if (found.kind !== "tampered") return;
      assert.equal(found.file, file);
      assert.equal(found.change, kind);
      assert.match(found.message, new RegExp(file.replace(/[.]/g, "\\.")));
      assert.match(found.message, /no verdict from here on is paid/);
      assert.deepEqual(await check(print), found, "a change found stays found");
      assert.deepEqual(print.found, found);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

test("callers waiting together share sweeps: a sweep under way serves only those who asked before it began", async () => {
  const root = tree();
  try {
    const print = ImportFingerprint.take(root);
    const before = performance.now();
    const first = print.checkedSince(before);
    // Asked for a moment before the sweep under way began: that sweep serves it.
    const early = print.checkedSince(before);
    // Asked for later moments while it runs: the next sweep serves them all.
    const late = [1, 2, 3, 4, 5].map(() => print.checkedSince(performance.now()));
    await Promise.all([first, early, ...late]);
    assert.equal(print.sweeps, 2, "one sweep for the early callers, one for all the late ones");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("a change made while a sweep runs is found by the sweep of a caller who asked after it", async () => {
  const root = tree();
  try {
    const print = ImportFingerprint.take(root);
    const running = print.checkedSince(performance.now());
    writeFileSync(join(root, DEP, "Dep", "Core.olean"), "poisoned while the sweep ran");
    const after = print.checkedSince(performance.now());
    await running;
    assert.equal((await after).kind, "tampered");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
