import { test } from "node:test";
import assert from "node:assert/strict";
import { DiagnosticsStore } from "../../lean-bridge/server/diagnosticsStore";
import {
  LEAN_MISSING_MESSAGE,
  buildLaunch,
  sandboxed,
  splitCommandLine,
} from "../../lean-bridge/server/launch";
import { effectiveSlots } from "../../lean-bridge/verify/pool";

const d = (message: string) => ({
  range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } },
  message,
});

test("diagnostics: cumulative publishes replace, incremental ones append, stale versions are dropped", () => {
  const store = new DiagnosticsStore();
  store.reset("u", 2);
  store.onPublish({ uri: "u", version: 2, diagnostics: [d("a")] });
  store.onPublish({ uri: "u", version: 2, diagnostics: [d("a"), d("b")] });
  assert.equal(store.read("u", 2).diagnostics.length, 2);
  store.onPublish({ uri: "u", version: 2, diagnostics: [d("c")], isIncremental: true });
  assert.deepEqual(
    store.read("u", 2).diagnostics.map((x) => x.message),
    ["a", "b", "c"],
  );
  store.onPublish({ uri: "u", version: 1, diagnostics: [d("old")] });
  assert.equal(store.read("u", 2).diagnostics.length, 3);
  store.onProgress({ textDocument: { uri: "u", version: 2 }, processing: [{ range: d("").range, kind: 2 }] });
  assert.equal(store.read("u", 2).fatal, true);
});

test("command lines split like a shell", () => {
  assert.deepEqual(splitCommandLine(`lake env lean --server "-Dx=a b" 'c d' e\\ f`), [
    "lake",
    "env",
    "lean",
    "--server",
    "-Dx=a b",
    "c d",
    "e f",
  ]);
});

test("without lake on PATH, the default launch says how to install Lean or use the simulator", () => {
  const r = buildLaunch(
    { kind: "lake" },
    "/tmp",
    { memoryMb: 1, cpuSeconds: 0, sandbox: false },
    { PATH: "/nonexistent" },
  );
  assert.equal(r.kind, "error");
  if (r.kind === "error") {
    assert.equal(r.message, LEAN_MISSING_MESSAGE);
    assert.match(r.message, /elan/);
    assert.match(r.message, /--simulator/);
  }
});

test("the sandbox keeps the project writable and cuts the network", () => {
  const argv = sandboxed(["lake", "serve"], "/work/p");
  assert.ok(argv.includes("--unshare-net"));
  assert.deepEqual(argv.slice(argv.indexOf("--bind"), argv.indexOf("--bind") + 3), [
    "--bind",
    "/work/p",
    "/work/p",
  ]);
  assert.deepEqual(argv.slice(-2), ["lake", "serve"]);
});

test("the memory budget limits the number of slots", () => {
  assert.equal(effectiveSlots(8, 4096, 10_000), 2);
  assert.equal(effectiveSlots(8, 4096, 100), 1);
  assert.equal(effectiveSlots(3, 1, 100), 3);
});
