/**
 * Every proof of the real-Lean example workspace (lean-env-prelude/) checks with the embedded Lean 4.35.0, and so
 * does every open goal's reference proof: the generator builds a copy with each `sorry` replaced by its reference
 * proof and fails on any error or `sorry`. Off CI a machine without the embedded Lean skips, saying why; where
 * CI=true that is a failing test.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { toolSkip } from "../toolSkip";
import { REPO } from "../helpers";
import { findEmbeddedLean } from "./preludeLean";

const lean = findEmbeddedLean();
const skip = toolSkip("the real-Lean workspace's check", lean.kind === "missing" && lean.reason);

test("every proof and reference proof of lean-env-prelude/ checks with the embedded Lean", { skip }, () => {
  if (lean.kind !== "found") return;
  const out = mkdtempSync(join(tmpdir(), "fim-prelude-ws-check-"));
  try {
    const r = spawnSync("python3", [join(REPO, "lean-env-prelude", "generate.py")], {
      env: { ...process.env, FIM_EMBEDDED_LEAN: lean.path, FIM_PRELUDE_WS_OUT: out },
      encoding: "utf8",
      timeout: 10 * 60_000,
    });
    assert.equal(r.status, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /checked with Lean: \d+ declarations, every reference proof accepted, no sorry/);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
