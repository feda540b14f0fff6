/**
 * The native replay tool's build, without Lean: where it finds the library the embedded `lean` runs on, where
 * it caches the tool (named by the source's and the library's fingerprint), and that a build that cannot run
 * makes the gate unavailable with what to do, never a crash. The tool itself is tested on the embedded Lean
 * (test/real-lean/embeddedGate.test.ts).
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  embeddedLeanPath,
  ensureNativeReplayTool,
  leanLibraryDir,
  nativeReplayToolPath,
} from "../../lean-bridge/verify/nativeReplayTool";
import { NATIVE_REPLAY_SOURCE, NATIVE_REPLAY_VERSION } from "../../lean-bridge/verify/nativeReplaySource";
import { isPreludeWorkspace } from "../../lean-bridge/verify/leanKernelGate";

/** An install laid out as the installer writes it: bin/lean and lib/libleanshared.so (empty stand-ins). */
function fakeInstall(): { root: string; lean: string; env: NodeJS.ProcessEnv } {
  const root = mkdtempSync(join(tmpdir(), "fimrlvr-tool-"));
  const install = join(root, "lean", "4.35.0-embedded");
  mkdirSync(join(install, "bin"), { recursive: true });
  mkdirSync(join(install, "lib"), { recursive: true });
  const lean = join(install, "bin", "lean");
  writeFileSync(lean, "#!/bin/sh\nexit 0\n");
  chmodSync(lean, 0o755);
  writeFileSync(join(install, "lib", "libleanshared.so"), "");
  const env: NodeJS.ProcessEnv = { ...process.env, FIM_RLVR_CACHE: root, CC: "false" };
  delete env.FIM_EMBEDDED_LEAN;
  return { root, lean, env };
}

test("the tool is cached under the embedded install, named by its source's version and the library", () => {
  const f = fakeInstall();
  try {
    assert.equal(embeddedLeanPath(f.env), f.lean);
    const lib = leanLibraryDir(f.lean, f.env);
    assert.equal(lib, join(f.root, "lean", "4.35.0-embedded", "lib"));
    const path = nativeReplayToolPath(lib!, f.env);
    assert.ok(
      path.startsWith(
        join(f.root, "lean", "4.35.0-embedded", "bin", `fimrlvr-replay-v${NATIVE_REPLAY_VERSION}-`),
      ),
    );
    // Another library build gets another tool.
    writeFileSync(join(lib!, "libleanshared.so"), "changed");
    assert.notEqual(nativeReplayToolPath(lib!, f.env), path);
  } finally {
    rmSync(f.root, { recursive: true, force: true });
  }
});

test("a build that fails makes the gate unavailable, says what to do, and leaves nothing half-written", () => {
  const f = fakeInstall();
  try {
    const r = ensureNativeReplayTool(f.lean, f.env);
    assert.equal(r.kind, "unavailable");
    if (r.kind === "unavailable") {
      assert.match(r.message, /building the gate's replay tool with `false` failed/);
      assert.match(r.action, /C compiler/);
    }
    const bin = join(f.root, "lean", "4.35.0-embedded", "bin");
    assert.deepEqual(
      readdirSync(bin).filter((n) => n.startsWith("fimrlvr-replay")),
      [],
    );
    const none = ensureNativeReplayTool(join(f.root, "nowhere", "lean"), f.env);
    assert.equal(none.kind, "unavailable");
    assert.equal(existsSync(join(f.root, "nowhere")), false);
  } finally {
    rmSync(f.root, { recursive: true, force: true });
  }
});

test("the C source answers in the gate's format, its JSON strings escaped", () => {
  assert.match(NATIVE_REPLAY_SOURCE, /FIMRLVR-GATE \{\\"kind\\":\\"replayed\\"/);
  assert.match(NATIVE_REPLAY_SOURCE, /\\u%04x/, "control characters are escaped in JSON strings");
});

test("the embedded gate is for prelude workspaces only: every Lean file outside hidden folders begins with prelude", () => {
  const root = mkdtempSync(join(tmpdir(), "fimrlvr-prelude-ws-"));
  try {
    assert.equal(isPreludeWorkspace(root), false, "no Lean file at all");
    mkdirSync(join(root, "A"), { recursive: true });
    writeFileSync(join(root, "A", "B.lean"), "/-! doc /- nested -/ -/\n-- a line\nprelude\nimport A.C\n");
    writeFileSync(join(root, "A", "C.lean"), "prelude\n");
    mkdirSync(join(root, ".lake", "packages"), { recursive: true });
    writeFileSync(join(root, ".lake", "packages", "Dep.lean"), "import Mathlib\n");
    assert.equal(isPreludeWorkspace(root), true);
    writeFileSync(join(root, "Main.lean"), "import A.B\n");
    assert.equal(isPreludeWorkspace(root), false, "a file that needs Init");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
