/**
 * The real-Lean tier, the workspace build: the embedded Lean builds the prelude fixture's modules in import
 * order into Lake's layout, skips what has not changed, rebuilds what has, and reports a module's error with
 * its file and Lean's words; the installer finds its own install and leaves it alone.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { buildLibDir, buildWorkspace, type BuildOptions } from "../../lean-bridge/embedded/build";
import {
  embeddedInstallDir,
  embeddedLeanVersion,
  locateEmbeddedLean,
} from "../../lean-bridge/embedded/install";
import { viewWorkspace } from "../../lean-bridge/embedded/workspace";
import { REPO } from "../helpers";
import { announceTier, freshWorkspace, recordTierVersion, tierTest } from "./embeddedTier";

announceTier("test/real-lean/embeddedBuild.test.ts");

async function buildOptions(): Promise<BuildOptions> {
  const located = locateEmbeddedLean();
  assert.equal(located.kind, "found");
  if (located.kind !== "found") throw new Error("unreachable");
  const version = await embeddedLeanVersion(located.lean);
  assert.equal(version.kind, "ok", JSON.stringify(version));
  if (version.kind !== "ok") throw new Error("unreachable");
  assert.equal(version.release, "4.35.0");
  recordTierVersion(version.release);
  return { lean: located.lean, versionText: version.text, memoryMb: 4096, timeoutMs: 120_000 };
}

tierTest(
  "embedded Lean: the workspace builds in import order, unchanged modules are skipped, changed ones rebuilt",
  async () => {
    const ws = freshWorkspace();
    try {
      const options = await buildOptions();
      const first = await buildWorkspace(ws.root, viewWorkspace(ws.root).modules, options);
      assert.equal(first.failed, 0, JSON.stringify([...first.results]));
      assert.deepEqual(
        [...first.results.keys()],
        ["PreludeWs.Core", "PreludeWs.Syntax", "PreludeWs.Basic", "PreludeWs"],
      );
      for (const m of ["PreludeWs/Core", "PreludeWs/Syntax", "PreludeWs/Basic", "PreludeWs"]) {
        assert.ok(existsSync(join(buildLibDir(ws.root), `${m}.olean`)), `${m}.olean`);
        assert.ok(existsSync(join(buildLibDir(ws.root), `${m}.ilean`)), `${m}.ilean`);
      }
      const again = await buildWorkspace(ws.root, viewWorkspace(ws.root).modules, options);
      assert.deepEqual([again.built, again.upToDate], [0, 4]);
      const basic = join(ws.root, "PreludeWs", "Basic.lean");
      writeFileSync(basic, readFileSync(basic, "utf8") + "\ntheorem added (p : Prop) (h : p) : p := h\n");
      const changed = await buildWorkspace(ws.root, viewWorkspace(ws.root).modules, options);
      assert.deepEqual(
        [...changed.results].map(([name, r]) => `${name}:${r.kind}`),
        [
          "PreludeWs.Core:up-to-date",
          "PreludeWs.Syntax:up-to-date",
          "PreludeWs.Basic:built",
          "PreludeWs:built",
        ],
      );
    } finally {
      ws.remove();
    }
  },
);

tierTest(
  "embedded Lean: a module's build error names its file and Lean's message, and its importers say why",
  async () => {
    const ws = freshWorkspace();
    try {
      const syntax = join(ws.root, "PreludeWs", "Syntax.lean");
      writeFileSync(syntax, readFileSync(syntax, "utf8") + "\ntheorem broken : False := True.intro\n");
      const report = await buildWorkspace(ws.root, viewWorkspace(ws.root).modules, await buildOptions());
      const failed = report.results.get("PreludeWs.Syntax");
      assert.equal(failed?.kind, "failed");
      if (failed?.kind === "failed") {
        assert.match(failed.message, /PreludeWs\/Syntax\.lean:\d+:\d+: error/);
        assert.match(failed.message, /[Tt]ype mismatch/);
      }
      const importer = report.results.get("PreludeWs.Basic");
      assert.equal(importer?.kind, "failed");
      if (importer?.kind === "failed")
        assert.match(importer.message, /imports PreludeWs\.Syntax, which did not build: .*Syntax\.lean/s);
      assert.equal(report.results.get("PreludeWs.Core")?.kind, "built");
    } finally {
      ws.remove();
    }
  },
);

tierTest("embedded Lean: scripts/setup-lean.sh finds its install and leaves it alone", async (t) => {
  const located = locateEmbeddedLean();
  if (located.kind !== "found" || located.from !== "cache") {
    t.skip("the embedded Lean in use is FIM_EMBEDDED_LEAN's, not the installer's");
    return;
  }
  const cache = dirname(dirname(embeddedInstallDir()));
  const r = spawnSync("bash", [join(REPO, "scripts", "setup-lean.sh")], {
    env: { ...process.env, FIM_RLVR_CACHE: cache },
    encoding: "utf8",
    timeout: 60_000,
  });
  assert.equal(r.status, 0, `${r.stdout}${r.stderr}`);
  assert.match(r.stdout, /already installed/);
});
