/**
 * The embedded Lean's decisions that need no Lean: where it is found, which files of a workspace it can judge
 * (prelude headers, the workspace's own imports, no Lake configuration it cannot honour), the environment its
 * server runs in, and how the CLI chooses it.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { chooseVerifier, verifierSpec } from "../../lean-bridge/cli/pool";
import { projectCheckedIn } from "../../lean-bridge/cli/trainCommand";
import { decideEmbedded } from "../../lean-bridge/embedded/choose";
import {
  EMBEDDED_LEAN_VARIABLE,
  embeddedInstallDir,
  embeddedLabel,
  locateEmbeddedLean,
} from "../../lean-bridge/embedded/install";
import { buildIdentity, buildLibDir } from "../../lean-bridge/embedded/build";
import { embeddedEnv, embeddedServerLaunch } from "../../lean-bridge/embedded/launch";
import { firstRefusal, readHeader, viewWorkspace } from "../../lean-bridge/embedded/workspace";
import { REPO } from "../helpers";
import { embeddedGate } from "../real-lean/gate";

const FIXTURE = join(REPO, "test", "fixtures", "prelude-workspace");

function scratch(): string {
  return mkdtempSync(join(tmpdir(), "fim-embedded-"));
}

/** A fake `lean` (never run here): an executable file is all `locateEmbeddedLean` looks for. */
function fakeLean(dir: string): string {
  const path = join(dir, "lean");
  writeFileSync(path, "#!/bin/sh\nexit 0\n");
  chmodSync(path, 0o755);
  return path;
}

test("headers: prelude after comments and blank lines, imports with the module system's words", () => {
  assert.deepEqual(readHeader("/- a -/\n-- b\n\nprelude\nimport A.B\nimport C\ntheorem x : True := y"), {
    kind: "prelude",
    imports: ["A.B", "C"],
  });
  assert.deepEqual(readHeader("module\nprelude\npublic import A\nimport all «B».C\n"), {
    kind: "prelude",
    imports: ["A", "B.C"],
  });
  assert.deepEqual(readHeader("import A\ntheorem t : True := x"), { kind: "not-prelude", found: "import" });
  assert.deepEqual(readHeader("theorem t : True := x"), { kind: "not-prelude", found: "theorem" });
  assert.deepEqual(readHeader("-- only a comment\n"), { kind: "not-prelude", found: "an empty file" });
  // `prelude` inside a comment or a later line after a command is not a header.
  assert.equal(readHeader("/- prelude -/\ntheorem t : True := x").kind, "not-prelude");
});

test("the fixture workspace is judged whole, its modules in import order", () => {
  const view = viewWorkspace(FIXTURE);
  assert.deepEqual(
    view.modules.map((m) => m.name),
    ["PreludeWs.Core", "PreludeWs.Syntax", "PreludeWs.Basic", "PreludeWs"],
  );
  assert.equal(view.refused.size, 0);
  assert.equal(firstRefusal(view), undefined);
});

test("a file that needs Init, an import from outside and files that import them are refused, each saying why", () => {
  const root = scratch();
  try {
    cpSync(FIXTURE, root, { recursive: true });
    writeFileSync(join(root, "Plain.lean"), "theorem t : True := trivial\n");
    writeFileSync(join(root, "Outside.lean"), "prelude\nimport Mathlib.Tactic\n");
    writeFileSync(join(root, "UsesPlain.lean"), "prelude\nimport Plain\n");
    writeFileSync(join(root, "Cycle1.lean"), "prelude\nimport Cycle2\n");
    writeFileSync(join(root, "Cycle2.lean"), "prelude\nimport Cycle1\n");
    // Lake's output and hidden folders are never modules.
    mkdirSync(join(root, ".lake", "packages", "x"), { recursive: true });
    writeFileSync(join(root, ".lake", "packages", "x", "Y.lean"), "import Init\n");
    const view = viewWorkspace(root);
    assert.match(view.refused.get("Plain.lean")!.reason, /does not start with `prelude`.*Init/);
    assert.match(view.refused.get("Plain.lean")!.action, /prelude/);
    assert.match(
      view.refused.get("Outside.lean")!.reason,
      /Mathlib\.Tactic, which is not a module of this workspace/,
    );
    assert.match(
      view.refused.get("UsesPlain.lean")!.reason,
      /imports Plain, which the embedded Lean cannot judge/,
    );
    assert.match(view.refused.get("Cycle1.lean")?.reason ?? view.refused.get("Cycle2.lean")!.reason, /cycle/);
    assert.ok(![...view.refused.keys()].some((f) => f.startsWith(".lake")));
    // The fixture's own modules are still judged.
    assert.ok(view.modules.some((m) => m.name === "PreludeWs.Basic"));
    assert.equal(firstRefusal(view)?.file, "Cycle1.lean");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("Lake configuration the embedded Lean cannot honour refuses the whole workspace; a plain lakefile.toml does not", () => {
  const root = scratch();
  try {
    cpSync(FIXTURE, root, { recursive: true });
    assert.equal(firstRefusal(viewWorkspace(root)), undefined, "lakefile.toml without dependencies");
    writeFileSync(
      join(root, "lakefile.toml"),
      'name = "x"\n\n[[require]]\nname = "mathlib"\nscope = "leanprover-community"\n',
    );
    const required = firstRefusal(viewWorkspace(root));
    assert.equal(required?.file, "lakefile.toml");
    assert.match(required!.refusal.reason, /requires other packages/);
    rmSync(join(root, "lakefile.toml"));
    writeFileSync(join(root, "lakefile.lean"), "import Lake\nopen Lake DSL\npackage x\n");
    const lean = firstRefusal(viewWorkspace(root));
    assert.equal(lean?.file, "lakefile.lean");
    assert.match(lean!.refusal.reason, /only Lake can run/);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

test("the embedded Lean is found through FIM_EMBEDDED_LEAN first, then the installed cache; missing says how to install", () => {
  const dir = scratch();
  try {
    const cache = join(dir, "cache");
    const named = fakeLean(dir);
    assert.deepEqual(locateEmbeddedLean({ [EMBEDDED_LEAN_VARIABLE]: named, FIM_RLVR_CACHE: cache }), {
      kind: "found",
      lean: named,
      from: "variable",
    });
    const wrong = locateEmbeddedLean({ [EMBEDDED_LEAN_VARIABLE]: join(dir, "nope"), FIM_RLVR_CACHE: cache });
    assert.equal(wrong.kind, "missing");
    if (wrong.kind === "missing") assert.match(wrong.reason, /FIM_EMBEDDED_LEAN=.*not an executable/);
    const none = locateEmbeddedLean({ FIM_RLVR_CACHE: cache });
    assert.equal(none.kind, "missing");
    if (none.kind === "missing") assert.match(none.reason, /npm run setup:lean/);
    assert.equal(embeddedInstallDir({ FIM_RLVR_CACHE: cache }), join(cache, "lean", "4.35.0-embedded"));
    mkdirSync(join(cache, "lean", "4.35.0-embedded", "bin"), { recursive: true });
    const installed = fakeLean(join(cache, "lean", "4.35.0-embedded", "bin"));
    assert.deepEqual(locateEmbeddedLean({ FIM_RLVR_CACHE: cache }), {
      kind: "found",
      lean: installed,
      from: "cache",
    });
    assert.equal(embeddedLabel("4.35.0"), "Lean 4.35.0 (embedded runtime, workspace prelude)");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the server finds the workspace's modules through LEAN_PATH and never asks another Lean's lake", () => {
  const env = embeddedEnv("/w", { PATH: "/bin", LAKE: "/elan/bin/lake", LEAN_SYSROOT: "/elan" });
  // The workspace's build, then the check documents' compiled prefixes (verify/prefixModules.ts).
  assert.equal(
    env.LEAN_PATH,
    [join("/w", ".lake", "build", "lib", "lean"), join("/w", ".fim-rlvr", "prefixes")].join(delimiter),
  );
  assert.equal(env.LAKE, undefined);
  assert.equal(env.LEAN_SYSROOT, undefined);
  assert.equal(env.PATH, "/bin");
  const { spec } = embeddedServerLaunch(
    "/opt/lean",
    "/w",
    { memoryMb: 1234, cpuSeconds: 0, sandbox: false },
    {},
  );
  assert.deepEqual(spec.command, ["/opt/lean", "--server", "-Dserver.reportDelayMs=0", "-M1234"]);
  assert.equal(spec.cwd, "/w");
});

test("auto uses the embedded Lean only without lake and only for a workspace it can judge; --lean asks for it", () => {
  const dir = scratch();
  try {
    const lean = fakeLean(dir);
    const noLake = { PATH: join(dir, "empty"), [EMBEDDED_LEAN_VARIABLE]: lean };
    assert.equal(decideEmbedded(FIXTURE, "auto", noLake).kind, "use");
    // Users with elan keep their toolchain.
    mkdirSync(join(dir, "bin"));
    writeFileSync(join(dir, "bin", "lake"), "");
    assert.equal(decideEmbedded(FIXTURE, "auto", { ...noLake, PATH: join(dir, "bin") }).kind, "not-used");
    assert.equal(decideEmbedded(FIXTURE, "embedded", { ...noLake, PATH: join(dir, "bin") }).kind, "use");
    assert.equal(decideEmbedded(FIXTURE, "toolchain", noLake).kind, "not-used");
    const lakeEnv = join(REPO, "lean-env");
    const notPrelude = decideEmbedded(lakeEnv, "auto", noLake);
    assert.equal(notPrelude.kind, "not-used");
    if (notPrelude.kind === "not-used") assert.match(notPrelude.reason, /does not start with `prelude`/);
    const missing = decideEmbedded(FIXTURE, "embedded", { PATH: "", FIM_RLVR_CACHE: join(dir, "c") });
    assert.equal(missing.kind, "error");

    // The CLI: no fallback to the simulator where the embedded Lean will judge; --lean parsed and checked.
    const fixtureArgs = {};
    assert.equal(chooseVerifier(fixtureArgs, 1, "rewards", noLake, FIXTURE).spec.kind, "lean");
    assert.equal(chooseVerifier(fixtureArgs, 1, "rewards", noLake, FIXTURE).fellBack, false);
    // train: a workspace target is the project its candidates are checked in, so it too gets the embedded
    // Lean (the quick start trains lean-env-prelude this way); a dataset folder's is only what --project names.
    assert.equal(projectCheckedIn(FIXTURE, undefined), FIXTURE);
    assert.equal(
      chooseVerifier(fixtureArgs, 1, "rewards", noLake, projectCheckedIn(FIXTURE, undefined)).spec.kind,
      "lean",
    );
    const datasetDir = join(dir, "dataset");
    mkdirSync(datasetDir);
    writeFileSync(join(datasetDir, "tasks.jsonl"), "");
    assert.equal(projectCheckedIn(datasetDir, undefined), undefined);
    assert.equal(projectCheckedIn(datasetDir, FIXTURE), FIXTURE);
    const spec = verifierSpec({ lean: "embedded" }, 1);
    assert.equal(spec.kind === "lean" && spec.lean, "embedded");
    assert.throws(
      () => verifierSpec({ lean: "elan" }, 1),
      /--lean elan: expected one of auto, embedded, toolchain/,
    );
    assert.throws(() => verifierSpec({ lean: "embedded", simulator: true }, 1), /--lean/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the embedded tier never skips where the embedded Lean is installed, and fails where CI=true lacks it", () => {
  const found = { kind: "found", lean: "/x/lean", from: "cache" } as const;
  const missing = { kind: "missing", reason: "not installed" } as const;
  assert.deepEqual(embeddedGate(found, {}), { kind: "run" });
  assert.deepEqual(embeddedGate(found, { CI: "true" }), { kind: "run" });
  assert.equal(embeddedGate(missing, {}).kind, "skip");
  assert.equal(embeddedGate(missing, { CI: "true" }).kind, "missing");
  assert.equal(embeddedGate(missing, { FIM_REAL_LEAN: "1" }).kind, "missing");
});

test("the build's identity changes with any module's stamp, so a prefix compiled on the old build is not reused", () => {
  const root = mkdtempSync(join(tmpdir(), "fim-build-identity-"));
  try {
    const modules = [{ name: "Ws.Base", file: "Ws/Base.lean", imports: [] }];
    const unbuilt = buildIdentity(root, modules);
    mkdirSync(join(buildLibDir(root), "Ws"), { recursive: true });
    writeFileSync(join(buildLibDir(root), "Ws", "Base.fim-rlvr-hash"), "aaaa\n");
    const first = buildIdentity(root, modules);
    writeFileSync(join(buildLibDir(root), "Ws", "Base.fim-rlvr-hash"), "bbbb\n");
    const second = buildIdentity(root, modules);
    assert.notEqual(unbuilt, first);
    assert.notEqual(first, second);
    assert.equal(buildIdentity(root, modules), second, "the same build gives the same identity");
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
