/**
 * The kernel gate on the embedded Lean (Lean 4.35.0's runtime without its standard library): its native replay
 * tool is built here from our source, its self-test passes, a real proof is confirmed by the kernel, and the
 * attacks a prelude workspace can express earn nothing: a theorem that reached the environment under
 * `debug.skipKernelTC` over an `unsafe` definition (Lean's server proves what cites it), an `axiom` of the check
 * document, and one under an allowed axiom's name. A header that fails by itself is the workspace's
 * (`environment`). A compiled declaration that states something else than the file's statement (a weaker type,
 * another kind, other universe parameters: what code run at compile time could leave) is refuted against the
 * statement compiled with `sorry` in the hole, once per hole. The gate's cost against a check's is measured on
 * the controls and printed, and the statement check's cost per proof beside the gate without it. The fixture is a
 * small prelude workspace of these tests' own, test/fixtures/gate-prelude.
 *
 * Where the embedded Lean is missing the tests skip, saying why, or fail where CI=true (toolSkip.ts); the
 * embedded Lean is found through FIM_EMBEDDED_LEAN, then the installed location (npm run setup:lean). The pool
 * test needs the project's prelude library for its tactic syntax: lean-prelude/, or the copy FIM_GATE_PRELUDE
 * names; it builds only the modules its task file imports.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildLaunch } from "../../lean-bridge/server/launch";
import { judgeWithGate, type GateRequest } from "../../lean-bridge/verify/kernelGate";
import { LeanKernelGate } from "../../lean-bridge/verify/leanKernelGate";
import { kernelGateReferencePath } from "../../lean-bridge/util/projectLayout";
import { CompileZygote } from "../../lean-bridge/verify/compileZygote";
import { embeddedLeanPath, ensureNativeReplayTool } from "../../lean-bridge/verify/nativeReplayTool";
import { VerifierPool } from "../../lean-bridge/verify/pool";
import { isMasked, type VerdictOutcome } from "../../lean-bridge/verify/verdict";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import { proofHole, REPO } from "../helpers";
import { toolSkip } from "../toolSkip";
import { copyPreludeLibrary } from "./preludeLean";

const FIXTURE = join(REPO, "test", "fixtures", "gate-prelude");
const LEAN = embeddedLeanPath();
const skip = toolSkip(
  "the kernel gate on the embedded Lean",
  LEAN
    ? false
    : "the embedded Lean is not installed (npm run setup:lean) and FIM_EMBEDDED_LEAN names no `lean` binary",
);
const LIMITS = { memoryMb: 4096, cpuSeconds: 0, sandbox: false };
const MODULES = ["Core", "Tasks", "Attacks", "OwnAxiom"];

/** A copy of the fixture with its modules built where the embedded Lean's workspace build puts them. */
function builtWorkspace(lean: string): string {
  const root = mkdtempSync(join(tmpdir(), "fimrlvr-embedded-gate-"));
  cpSync(FIXTURE, root, { recursive: true });
  const build = join(root, ".lake", "build", "lib", "lean");
  mkdirSync(join(build, "GatePrelude"), { recursive: true });
  for (const m of MODULES) {
    const r = spawnSync(
      lean,
      ["-o", join(build, "GatePrelude", `${m}.olean`), join("GatePrelude", `${m}.lean`)],
      {
        cwd: root,
        env: { ...process.env, LEAN_PATH: build },
        encoding: "utf8",
        timeout: 120_000,
      },
    );
    assert.equal(r.status, 0, `building GatePrelude.${m} failed: ${r.stdout}${r.stderr}`);
  }
  return root;
}

function gate(root: string, lean: string): LeanKernelGate {
  return new LeanKernelGate({ projectRoot: root, limits: LIMITS, toolchain: { kind: "embedded", lean } });
}

const ONE = (text: string, name: string, declarationLine: number): GateRequest => ({
  documentText: text,
  declaration: [name],
  mayBePrivate: false,
  headerEndLine: 1,
  declarationLine,
});

const RULES = (checkedName: string) => ({
  checkedName,
  isPrivate: false,
  mayBePrivate: false,
  allowNative: false,
  legacyNativeExists: false,
});

test(
  "embedded Lean: the gate builds its replay tool, and its self-test replays a theorem of its own and refutes one that skipped the kernel",
  { skip },
  async () => {
    const root = builtWorkspace(LEAN!);
    try {
      assert.equal(await gate(root, LEAN!).ready(120_000), undefined);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test(
  "embedded Lean: the gate confirms a real proof and refutes kernel-skipping ones; a header that fails alone is the workspace's",
  { skip },
  async () => {
    const root = builtWorkspace(LEAN!);
    const g = gate(root, LEAN!);
    const proved: VerdictOutcome = {
      kind: "proved",
      axioms: [],
      axiomsChecked: true,
      confirmedBy: "server",
      diagnostics: [],
    };
    try {
      const real = await g.run(
        ONE("prelude\nimport GatePrelude.Core\ntheorem t (n : Num) : Eq n n := @Eq.refl Num n\n", "t", 2),
        120_000,
      );
      assert.equal(real.kind, "replayed", JSON.stringify(real));
      const confirmed = judgeWithGate(proved, real, "kernel-replay", RULES("t"));
      assert.equal(confirmed.kind, "proved");
      assert.equal(confirmed.kind === "proved" && confirmed.confirmedBy, "kernel-replay");

      const skipped = await g.run(
        ONE(
          "prelude\nimport GatePrelude.Core\nunsafe def l : False := l\nset_option debug.skipKernelTC true in\ntheorem t : False := l\n",
          "t",
          3,
        ),
        120_000,
      );
      assert.equal(skipped.kind, "kernel-rejected", JSON.stringify(skipped));

      // Through an import too: the workspace's Attacks module holds `unchecked`, which the kernel never saw.
      const imported = await g.run(
        ONE("prelude\nimport GatePrelude.Attacks\ntheorem t : False := unchecked\n", "t", 2),
        120_000,
      );
      const importedVerdict = judgeWithGate(proved, imported, "kernel-replay", RULES("t"));
      assert.notEqual(
        importedVerdict.kind,
        "proved",
        `a proof citing an unchecked import was ${JSON.stringify(imported)}`,
      );

      const ownAxiom = await g.run(
        ONE("prelude\nimport GatePrelude.Core\naxiom cheat : False\ntheorem t : False := cheat\n", "t", 3),
        120_000,
      );
      const refuted = judgeWithGate(proved, ownAxiom, "kernel-replay", RULES("t"));
      assert.equal(refuted.kind, "rejected", JSON.stringify(refuted));

      const allowedName = await g.run(
        ONE("prelude\ninductive False : Prop\naxiom propext : False\ntheorem t : False := propext\n", "t", 3),
        120_000,
      );
      assert.equal(judgeWithGate(proved, allowedName, "kernel-replay", RULES("t")).kind, "rejected");

      const missing = await g.run(
        ONE("prelude\nimport GatePrelude.Missing\ntheorem t : True := True.intro\n", "t", 2),
        120_000,
      );
      assert.deepEqual(
        [missing.kind, missing.kind === "compile-failed" && missing.inHeader],
        ["compile-failed", true],
      );
      const wrong = await g.run(
        ONE("prelude\nimport GatePrelude.Core\ntheorem t : False := True.intro\n", "t", 2),
        120_000,
      );
      assert.deepEqual(
        [wrong.kind, wrong.kind === "compile-failed" && wrong.inHeader],
        ["compile-failed", false],
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  },
);

/** The project's prelude library (lean-prelude/, module root FimPrelude): the pool's holes need its tactic syntax. */
const PRELUDE = process.env.FIM_GATE_PRELUDE ?? join(REPO, "lean-prelude");
const poolSkip =
  skip ||
  toolSkip(
    "the kernel gate through the pool on the embedded Lean",
    existsSync(join(PRELUDE, "FimPrelude.lean"))
      ? false
      : `the project's prelude library is not at ${PRELUDE} (FIM_GATE_PRELUDE names another copy)`,
  );

/** The modules of a prelude workspace in import order (each file's `import` lines name modules of the workspace). */
function importOrder(root: string, modules: string[]): string[] {
  const order: string[] = [];
  const visit = (m: string) => {
    if (order.includes(m)) return;
    const path = join(root, ...m.split(".")) + ".lean";
    if (!existsSync(path)) return;
    for (const line of readFileSync(path, "utf8").split("\n")) {
      const imported = /^import\s+(\S+)/.exec(line)?.[1];
      if (imported) visit(imported);
    }
    order.push(m);
  };
  modules.forEach(visit);
  return order;
}

/**
 * A workspace of the project's prelude library with the modules `imports` need built where the embedded Lean's
 * workspace build puts them; `extra` files are copied in from the gate fixture.
 */
function preludeWorkspace(imports: string[], extra: [string, string][] = []): string {
  const root = mkdtempSync(join(tmpdir(), "fimrlvr-embedded-prelude-"));
  copyPreludeLibrary(root, PRELUDE);
  for (const [from, to] of extra) cpSync(join(FIXTURE, from), join(root, to));
  const build = join(root, ".lake", "build", "lib", "lean");
  for (const m of importOrder(root, imports)) {
    const olean = join(build, ...m.split(".")) + ".olean";
    mkdirSync(join(olean, ".."), { recursive: true });
    const r = spawnSync(LEAN!, ["-o", olean, join(...m.split(".")) + ".lean"], {
      cwd: root,
      env: { ...process.env, LEAN_PATH: build },
      encoding: "utf8",
      timeout: 300_000,
    });
    assert.equal(r.status, 0, `building ${m} failed: ${r.stdout}${r.stderr}`);
  }
  return root;
}

test(
  "embedded Lean: a compiled declaration that states something else than the file (as a metaprogram could make it) is refuted, not masked; the same statement is confirmed; the statement check's cost is printed",
  { skip: poolSkip },
  async () => {
    const root = preludeWorkspace(["FimPrelude.Tactics"]);
    const g = gate(root, LEAN!);
    const proved: VerdictOutcome = {
      kind: "proved",
      axioms: [],
      axiomsChecked: true,
      confirmedBy: "server",
      diagnostics: [],
    };
    const header = "prelude\nimport FimPrelude.Tactics\n";
    const statement = "theorem refl (p : Prop) : Eq p p := by\n  ";
    // The request of one hole: the document the gate compiles, and its statement with sorry in the hole.
    const holed = (documentText: string, name = "refl"): GateRequest => ({
      documentText,
      declaration: [name],
      mayBePrivate: false,
      headerEndLine: 1,
      declarationLine: 2,
      referenceText: `${header}${statement}sorry\n`,
    });
    try {
      assert.equal(await g.ready(120_000), undefined);
      const timed = async (request: GateRequest) => {
        const started = performance.now();
        const report = await g.run(request, 120_000);
        return { report, ms: performance.now() - started };
      };
      const honest = `${header}${statement}exact Eq.refl p\n`;
      const first = await timed(holed(honest));
      assert.equal(first.report.kind, "replayed", JSON.stringify(first.report));
      assert.deepEqual(first.report.kind === "replayed" && first.report.statement, { kind: "same" });
      const confirmed = judgeWithGate(proved, first.report, "kernel-replay", RULES("refl"));
      assert.equal(
        confirmed.kind === "proved" && confirmed.confirmedBy,
        "kernel-replay",
        JSON.stringify(confirmed),
      );
      const again = await timed(holed(`${header}${statement}exact @Eq.refl Prop p\n`));
      assert.deepEqual(again.report.kind === "replayed" && again.report.statement, { kind: "same" });
      // A private declaration over a private definition: the reference, compiled in another folder, names the
      // document's private constants alike.
      const privateText = `${header}private def P : Prop := True\nprivate theorem own : P := by\n  `;
      const privately = await g.run(
        {
          documentText: `${privateText}exact True.intro\n`,
          declaration: ["own"],
          mayBePrivate: true,
          headerEndLine: 1,
          declarationLine: 3,
          referenceText: `${privateText}sorry\n`,
        },
        120_000,
      );
      assert.deepEqual(
        privately.kind === "replayed" && privately.statement,
        { kind: "same" },
        JSON.stringify(privately),
      );
      const plain = await g.run(ONE(honest, "refl", 2), 120_000);
      assert.equal(plain.kind === "replayed" && plain.statement, undefined, "no reference, no comparison");

      // What a metaprogram in the candidate could leave behind: a constant of the checked name stating `True`
      // (here the gate's compile is simply fed such a document), the right type as a definition, or a
      // universe-polymorphic statement over other universe parameters.
      const polymorphic = "theorem poly.{u} (α : Sort u) (a : α) : Eq a a := by\n  ";
      for (const [what, request, message] of [
        ["a weaker type", holed(`${header}theorem refl (p : Prop) : True := True.intro\n`), /type differs/],
        ["another kind", holed(`${header}def refl (p : Prop) : Eq p p := Eq.refl p\n`), /kind/],
        [
          "other universe parameters",
          {
            ...holed(`${header}theorem poly.{v} (α : Sort v) (a : α) : Eq a a := Eq.refl a\n`, "poly"),
            referenceText: `${header}${polymorphic}sorry\n`,
          },
          /universe parameters/,
        ],
      ] as const) {
        const report = await g.run(request, 120_000);
        assert.equal(
          report.kind === "replayed" && report.statement?.kind,
          "differs",
          `${what}: ${JSON.stringify(report)}`,
        );
        if (report.kind === "replayed" && report.statement?.kind === "differs")
          assert.match(report.statement.message, message, what);
        const verdict = judgeWithGate(proved, report, "kernel-replay", RULES("refl"));
        assert.equal(verdict.kind, "rejected", `${what}: ${JSON.stringify(verdict)}`);
        assert.equal(isMasked(verdict), false, what);
      }
      // The cost per proof once the hole's reference is compiled: runs with and without the check, alternated,
      // their medians compared (one machine's noise falls on both alike).
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const withCheck: number[] = [];
      const without: number[] = [];
      for (let k = 0; k < 9; k++) {
        // Alternated, so that neither always runs first.
        if (k % 2 === 0) {
          withCheck.push((await timed(holed(honest))).ms);
          without.push((await timed(ONE(honest, "refl", 2))).ms);
        } else {
          without.push((await timed(ONE(honest, "refl", 2))).ms);
          withCheck.push((await timed(holed(honest))).ms);
        }
      }
      assert.deepEqual(
        readdirSync(kernelGateReferencePath(root)).length,
        3,
        "one reference compiled per hole (refl, own, poly), however many proofs of it",
      );
      process.stderr.write(
        `kernel gate's statement check on the embedded Lean: a hole's first proof ${first.ms.toFixed(0)} ms (its reference compile included); then per proof, median of 9: ${median(withCheck).toFixed(0)} ms with the check, ${median(without).toFixed(0)} ms without (${(median(withCheck) / Math.max(1e-3, median(without))).toFixed(2)}x)\n`,
      );
    } finally {
      g.stop();
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test(
  "embedded Lean: through the pool on `lean --server`, every control the server proves is confirmed by the gate, every attack earns nothing, and the gate's cost against a check is printed",
  { skip: poolSkip },
  async () => {
    const root = mkdtempSync(join(tmpdir(), "fimrlvr-embedded-pool-"));
    copyPreludeLibrary(root, PRELUDE);
    cpSync(join(FIXTURE, "pool", "GatePool.lean"), join(root, "GatePool.lean"));
    const build = join(root, ".lake", "build", "lib", "lean");
    const env = { ...process.env, LEAN_PATH: build };
    for (const m of importOrder(root, ["GatePool"]).filter((m) => m !== "GatePool")) {
      const olean = join(build, ...m.split(".")) + ".olean";
      mkdirSync(join(olean, ".."), { recursive: true });
      const r = spawnSync(LEAN!, ["-o", olean, join(...m.split(".")) + ".lean"], {
        cwd: root,
        env,
        encoding: "utf8",
        timeout: 300_000,
      });
      assert.equal(r.status, 0, `building ${m} failed: ${r.stdout}${r.stderr}`);
    }
    const launch = buildLaunch(
      { kind: "command", commandLine: `${LEAN!} --server -Dserver.reportDelayMs=0` },
      root,
      LIMITS,
      env,
    );
    assert.equal(launch.kind, "ok");
    if (launch.kind !== "ok") return;
    const backend = gate(root, LEAN!);
    const started = await VerifierPool.start({
      projectRoot: root,
      launch: launch.spec,
      slots: 1,
      timeoutMs: 120_000,
      memoryPerWorkerMb: 4096,
      toolchain: undefined,
      kernelGate: () => ({ backend, mode: { kind: "all" }, timeoutMs: 120_000, concurrency: 1 }),
    });
    if (started.kind !== "ok") assert.fail(`${started.message}\n${started.stderr}`);
    const pool = started.pool;
    try {
      const file = "GatePool.lean";
      const text = readFileSync(join(root, file), "utf8");
      const controls: [string, string][] = [
        ["truth", "exact True.intro"],
        ["imp", "exact fun h => h"],
        ["refl", "exact Eq.refl p"],
      ];
      for (const [name, candidate] of controls) {
        const v = await pool.verify({ file, text, hole: proofHole(text, name) }, candidate);
        assert.equal(v.kind, "proved", `${name}: ${JSON.stringify(v)}`);
        assert.equal(v.kind === "proved" && v.confirmedBy, "kernel-replay", `${name}: ${JSON.stringify(v)}`);
      }
      const attacks: [string, string][] = [
        ["falseGoal", "exact unchecked"],
        ["falseGoal2", "exact propext"],
      ];
      for (const [name, candidate] of attacks) {
        const v = await pool.verify({ file, text, hole: proofHole(text, name) }, candidate);
        assert.notEqual(v.kind, "proved", `${name}: ${JSON.stringify(v)}`);
        assert.equal(rewardOf(v).reward, 0, `${name}: ${JSON.stringify(v)}`);
        assert.equal(isMasked(v), false, `${name}: a masked outcome: ${JSON.stringify(v)}`);
      }
      const stage = pool.kernelGate!;
      assert.ok(
        stage.stats.refuted >= 1,
        "the gate refuted nothing: the kernel-skipping proof reached it and was paid",
      );
      const perGate = stage.stats.runMs / Math.max(1, stage.stats.runs);
      const perCheck = stage.costs.meanCheckMs;
      process.stderr.write(
        `kernel gate on the embedded Lean: ${perGate.toFixed(0)} ms per gate run (${stage.stats.runs} runs; the self-test not counted), ${perCheck.toFixed(0)} ms per check: ${(perGate / Math.max(1e-3, perCheck)).toFixed(2)}x a check\n`,
      );
    } finally {
      await pool.stop();
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test(
  "embedded Lean: the gate's compile server runs each compile in a fresh child; one past its deadline is killed and reported, a dead server is started again",
  { skip },
  async () => {
    const root = builtWorkspace(LEAN!);
    const tool = ensureNativeReplayTool(LEAN!);
    assert.equal(tool.kind, "ok");
    if (tool.kind !== "ok") return;
    const env = { ...process.env, LEAN_PATH: join(root, ".lake", "build", "lib", "lean") };
    const zygote = new CompileZygote([tool.path, "--compile-server"], { cwd: root, env, cpuSeconds: 0 });
    const dir = mkdtempSync(join(root, "run-"));
    const args = (name: string) => [
      "--json",
      "-o",
      join(dir, `${name}.olean`),
      join("GatePrelude", "Tasks.lean"),
    ];
    try {
      const ok = await zygote.run(args("a"), dir, 60_000);
      assert.deepEqual([ok?.kind, ok?.kind === "exited" && ok.code], ["exited", 0], JSON.stringify(ok));
      assert.ok(existsSync(join(dir, "a.olean")));
      const late = await zygote.run(args("b"), dir, 1);
      assert.equal(late?.kind, "timeout", JSON.stringify(late));
      zygote.stop();
      const again = await zygote.run(args("c"), dir, 60_000);
      assert.deepEqual(
        [again?.kind, again?.kind === "exited" && again.code],
        ["exited", 0],
        JSON.stringify(again),
      );
    } finally {
      zygote.stop();
      rmSync(root, { recursive: true, force: true });
    }
  },
);
