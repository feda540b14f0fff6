/**
 * Whether the real-Lean tests run here. They need `lake` on PATH (and the Mathlib tests a built
 * lean-env-mathlib). Where that is missing they are skipped with the reason printed, so development machines
 * and the project's own CI (.ci/run, no Lean) pass; but the hosted workflow .github/workflows/real-lean.yml
 * sets FIM_REAL_LEAN=1 (and FIM_REAL_LEAN_MATHLIB=1 in its Mathlib job), and there a missing toolchain or
 * project is a failure: a workflow that promised real Lean must never pass by skipping everything.
 */
import { test, type TestContext } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { locateEmbeddedLean, type EmbeddedLocation } from "../../lean-bridge/embedded/install";
import { which } from "../../lean-bridge/server/launch";
import { REPO } from "../helpers";

/** The Mathlib example project (see its lakefile.toml). */
export const MATHLIB_EXAMPLE = join(REPO, "lean-env-mathlib");

/** Set by the hosted workflow: real-Lean tests must run, never skip. */
export const REAL_LEAN_FLAG = "FIM_REAL_LEAN";
/** Set by the hosted workflow's Mathlib job: the Mathlib tests must run, never skip. */
export const REAL_LEAN_MATHLIB_FLAG = "FIM_REAL_LEAN_MATHLIB";

export type RealLeanGate =
  | { kind: "run" }
  | { kind: "skip"; reason: string }
  /** Real Lean was promised by the environment but is not there: every test fails with this reason. */
  | { kind: "missing"; reason: string };

const INSTALL = 'install elan so that `lake` is on PATH (README.md, "With real Lean", has the command)';

/** What the core real-Lean tests (lean-env, core Lean only) do here. Pure: PATH and env are given. */
export function coreGate(lakePath: string | undefined, env: NodeJS.ProcessEnv): RealLeanGate {
  if (lakePath) return { kind: "run" };
  if (env[REAL_LEAN_FLAG] === "1")
    return {
      kind: "missing",
      reason: `${REAL_LEAN_FLAG}=1 says real Lean is expected, but lake is not on PATH: ${INSTALL}`,
    };
  return { kind: "skip", reason: `lake is not on PATH: real-Lean tests need a Lean toolchain; ${INSTALL}` };
}

/**
 * What the Mathlib tests do here. `projectBuilt` is asked only where lake exists (it runs Lake): whether
 * lean-env-mathlib is built, so that the tests never start compiling Mathlib from source.
 */
export function mathlibGate(
  lakePath: string | undefined,
  env: NodeJS.ProcessEnv,
  projectBuilt: () => { built: true } | { built: false; detail: string },
): RealLeanGate {
  const expected = env[REAL_LEAN_MATHLIB_FLAG] === "1";
  if (!lakePath) {
    const reason = `lake is not on PATH: the Mathlib tests need a Lean toolchain; ${INSTALL}`;
    return expected
      ? { kind: "missing", reason: `${REAL_LEAN_MATHLIB_FLAG}=1, but ${reason}` }
      : { kind: "skip", reason };
  }
  const state = projectBuilt();
  if (state.built) return { kind: "run" };
  const reason =
    "lean-env-mathlib is not built: run `cd lean-env-mathlib && lake exe cache get && lake build` " +
    `(downloads Mathlib's prebuilt files, several GB) — ${state.detail}`;
  return expected
    ? { kind: "missing", reason: `${REAL_LEAN_MATHLIB_FLAG}=1, but ${reason}` }
    : { kind: "skip", reason };
}

/**
 * Whether a Lake project that requires Mathlib is built, without building or fetching anything: Mathlib must
 * already be checked out (else Lake would clone it first), then `lake build --no-build` must succeed.
 */
export function mathlibProjectBuilt(root: string): { built: true } | { built: false; detail: string } {
  if (!existsSync(join(root, ".lake", "packages", "mathlib")))
    return { built: false, detail: "Mathlib is not fetched (no .lake/packages/mathlib)" };
  const r = spawnSync("lake", ["build", "--no-build"], { cwd: root, encoding: "utf8" });
  if (r.status === 0) return { built: true };
  const said = `${r.stdout ?? ""}${r.stderr ?? ""}`.trim().split("\n").slice(-3).join(" / ");
  return { built: false, detail: `\`lake build --no-build\` exited ${r.status ?? r.signal}: ${said}` };
}

/**
 * Registers a real-Lean test under `gate`: skipped with the reason when the gate says skip, failing with the
 * reason when real Lean was promised but is missing, run otherwise.
 */
export function realLeanTest(
  name: string,
  gate: RealLeanGate,
  body: (t: TestContext) => Promise<void>,
): void {
  test(name, { skip: gate.kind === "skip" ? gate.reason : false }, async (t) => {
    if (gate.kind === "missing") assert.fail(gate.reason);
    await body(t);
  });
}

/** Says once on stderr why a file's tests are skipped or failing (the runner's own output names each test). */
export function announce(file: string, gate: RealLeanGate): void {
  if (gate.kind !== "run")
    process.stderr.write(`${file}: ${gate.kind === "skip" ? "skipped" : "FAILING"}: ${gate.reason}\n`);
}

/** The core gate for this process. */
export function processCoreGate(): RealLeanGate {
  return coreGate(which("lake"), process.env);
}

/** A Lean release as three numbers; prereleases (`4.35.0-rc4`) count as their release. */
export type LeanVersion = readonly [number, number, number];

/** The version in `lean --version` output ("Lean (version 4.34.1, x86_64-unknown-linux-gnu, …)"). */
export function parseLeanVersion(text: string): LeanVersion | undefined {
  const m = /version (\d+)\.(\d+)\.(\d+)/.exec(text);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
}

export function atLeast(version: LeanVersion, floor: LeanVersion): boolean {
  for (let k = 0; k < 3; k++) if (version[k] !== floor[k]) return version[k]! > floor[k]!;
  return true;
}

/** The version of the Lean that elan selects in `root` (its lean-toolchain), asked of `lean --version`. */
export function leanVersionIn(root: string): LeanVersion {
  const r = spawnSync("lean", ["--version"], { cwd: root, encoding: "utf8" });
  const version = parseLeanVersion(r.stdout ?? "");
  assert.ok(version, `\`lean --version\` in ${root} gave no version: ${r.stdout}${r.stderr}`);
  return version;
}

/**
 * Releases where what the verifier sees changed, from Lean's release notes (reference manual,
 * Manual/Releases): each test branches on these, never on the toolchain's name.
 */
export const LEAN_CHANGES = {
  /** lean4#12217: one axiom per native computation (`X._native.native_decide.ax_…`), not `Lean.ofReduceBool`. */
  nativeAxiomPerComputation: [4, 29, 0],
  /** lean4#13117: `#print axioms` answers in a `module` again (refused since lean4#8174, 4.20). */
  printAxiomsInModules: [4, 30, 0],
} as const satisfies Record<string, LeanVersion>;

/**
 * What the embedded-Lean tier does here (the tests of test/real-lean/embedded*.test.ts, on Lean 4.35.0 built by
 * scripts/setup-lean.sh). Unlike the toolchain's tier, this Lean installs from a registry on every machine the
 * setup runs on, so it is never skipped where it is installed, and where CI=true (or FIM_REAL_LEAN=1) a missing
 * one fails every test. Pure: the location and the environment are given.
 */
export function embeddedGate(located: EmbeddedLocation, env: NodeJS.ProcessEnv): RealLeanGate {
  if (located.kind === "found") return { kind: "run" };
  const reason = `the embedded Lean is missing: ${located.reason}`;
  if (env.CI === "true" || env[REAL_LEAN_FLAG] === "1")
    return {
      kind: "missing",
      reason: `${env.CI === "true" ? "CI=true" : `${REAL_LEAN_FLAG}=1`}, but ${reason}`,
    };
  return { kind: "skip", reason };
}

/** The embedded-Lean gate for this process. */
export function processEmbeddedGate(): RealLeanGate {
  return embeddedGate(locateEmbeddedLean(process.env), process.env);
}
