/**
 * No silent loss of the kernel gate: a Kimina verifier, whose server answers messages only, runs the gate on
 * this machine; where there is no Lean here to run it on (no `lake` on PATH, no embedded Lean), it starts only
 * with `--kernel-gate off` given explicitly, and then every proof says it stands on the server's word.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import { startVerifier } from "../../lean-bridge/verifiers/startVerifier";
import { REPO } from "../helpers";

/** Runs `body` with an environment where no Lean can be found: PATH holds node alone, the cache is empty. */
async function withoutLean(body: () => Promise<void>): Promise<void> {
  const saved = {
    PATH: process.env.PATH,
    FIM_EMBEDDED_LEAN: process.env.FIM_EMBEDDED_LEAN,
    FIM_RLVR_CACHE: process.env.FIM_RLVR_CACHE,
  };
  const cache = mkdtempSync(join(tmpdir(), "fimrlvr-nolean-"));
  process.env.PATH = dirname(process.execPath);
  delete process.env.FIM_EMBEDDED_LEAN;
  process.env.FIM_RLVR_CACHE = cache;
  try {
    await body();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
    rmSync(cache, { recursive: true, force: true });
  }
}

test("Kimina without a local Lean refuses to start unless --kernel-gate off is given, and says what to do", async () => {
  await withoutLean(async () => {
    const root = mkdtempSync(join(tmpdir(), "fimrlvr-kimina-"));
    try {
      for (const kernelGate of [
        undefined,
        { kind: "auto" as const },
        { kind: "share" as const, share: 0.5 },
      ]) {
        const r = await startVerifier(root, {
          kind: "kimina",
          url: "http://127.0.0.1:9",
          ...(kernelGate ? { kernelGate } : {}),
        });
        assert.equal(r.kind, "error", `${JSON.stringify(kernelGate)}: started without a gate`);
        if (r.kind === "error") {
          assert.match(r.message, /no kernel gate here/);
          assert.match(r.hint, /--kernel-gate off/);
        }
      }
      const off = await startVerifier(root, {
        kind: "kimina",
        url: "http://127.0.0.1:9",
        kernelGate: { kind: "off" },
      });
      assert.equal(off.kind, "ok");
      if (off.kind === "ok") assert.equal(off.pool.kernelGate, undefined);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

test("a verifier whose gate fails its self-test does not start: it would mask every proof", async () => {
  await withoutLean(async () => {
    // A scripted `lake` on which the replay program cannot run (test/fixtures/fake-lake).
    process.env.PATH = `${join(REPO, "test", "fixtures", "fake-lake")}${delimiter}${dirname(process.execPath)}`;
    process.env.FAKE_LAKE_NO_RUN = "1";
    const root = mkdtempSync(join(tmpdir(), "fimrlvr-kimina-"));
    try {
      const r = await startVerifier(root, {
        kind: "kimina",
        url: "http://127.0.0.1:9",
        kernelGate: { kind: "auto" },
        // The scripted lake reads FAKE_LAKE_NO_RUN, which the sandbox's environment allow-list would drop.
        sandbox: false,
      });
      assert.equal(r.kind, "error");
      if (r.kind === "error") {
        assert.match(r.message, /the kernel gate cannot run here: the gate's self-test/);
        assert.match(r.hint, /--kernel-gate off/);
      }
    } finally {
      delete process.env.FAKE_LAKE_NO_RUN;
      rmSync(root, { recursive: true, force: true });
    }
  });
});
