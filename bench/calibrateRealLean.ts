/**
 * `npm run bench:verify -- calibrate`: measures on the embedded Lean 4.35.0 the costs the benchmarks' models charge
 * (the simulator's `--header-ms`, `--decl-ms` and `--edit-ms`, the kernel gate's model, the LeanInteract and Kimina
 * models of bench/replModel.ts), fits them, and writes them to bench/realLeanCosts.json, the one file those models
 * read (bench/realLeanCosts.ts). The workload is the real-Lean section's: a prelude workspace on the project's own
 * library (lean-prelude/) and files of one-tactic theorems.
 *
 * Measured, each the fastest of several runs (`fastest`):
 * - a fresh `lean` process on a file holding only `prelude` (the process's start), on the header alone (`import
 *   FimPrelude`: the start and the header), and on files of 100 and 400 theorems (their slope: a declaration's
 *   cost in a fresh process, what the kernel gate's compile and a REPL's first elaboration pay);
 * - Lean's language server, spoken to directly (no bridge): a header-only document opened (a worker's start and
 *   its header), an edit at the last theorem of files of 10 and 200 (the intercept: an edit's fixed cost; the
 *   slope: Lean's walk over the command snapshots above an edit), an edit at the first theorem of the same files
 *   (every theorem elaborated again: the slope is a declaration's cost in the server);
 * - the pool on one worker (the bridge included): a check in the prefix-import form at 200 theorems above, and the
 *   kernel gate's run for a proved candidate at 10 and 200 theorems above.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Range } from "vscode-languageserver-protocol";
import { embeddedEnv } from "../lean-bridge/embedded/launch";
import { prepareEmbedded } from "../lean-bridge/embedded/choose";
import { LeanServer, type LaunchSpec } from "../lean-bridge/server/leanServer";
import { startVerifier } from "../lean-bridge/verifiers/startVerifier";
import type { VerifierPool } from "../lean-bridge/verify/pool";
import { REPO } from "../test/helpers";
import {
  CALIBRATION_COMMAND,
  CALIBRATION_PATH,
  validateCalibration,
  type Calibration,
  type Figure,
} from "./realLeanCosts";

const THEOREM = (i: number) => `theorem t${i} (p q : Prop) (hp : p) (hq : q) : p ∧ q := by`;
const PROOF = "  exact ⟨hp, hq⟩";
/** The same proof with k pairs of parentheses around `hp`: a different text, the same elaboration. */
const proofWith = (k: number) => `  exact ⟨${"(".repeat(k)}hp${")".repeat(k)}, hq⟩`;

const HEADER = ["prelude", "import FimPrelude", ""];

/**
 * What the embedded Lean cannot measure, kept from ../shared/LEAN_PROTOCOL.md and labelled as such: it has no
 * Mathlib, so Mathlib's import header is the figure recorded there for `lake serve`.
 */
const LEAN_PROTOCOL_FIGURES: Calibration["notMeasured"] = {
  mathlibHeaderMs: {
    ms: 8000,
    source:
      "../shared/LEAN_PROTOCOL.md: `import Mathlib` ~8 s per worker (leanclient's figure, `lake serve`); not measured here, the embedded Lean has no Mathlib",
  },
};
const LIMITS = { memoryMb: 4096, cpuSeconds: 0, sandbox: false };
const TIMEOUT_MS = 120_000;

/**
 * The fastest of several runs: on a shared machine other work only ever adds time, so the fastest run is the
 * figure that reproduces (a median moves with the load).
 */
function fastest(xs: number[]): number {
  return xs.length > 0 ? Math.min(...xs) : NaN;
}

/** Least-squares line through (x, y) points: intercept and slope. */
export function fitLine(points: readonly [number, number][]): { intercept: number; slope: number } {
  const n = points.length;
  const mx = points.reduce((a, [x]) => a + x, 0) / n;
  const my = points.reduce((a, [, y]) => a + y, 0) / n;
  let sxy = 0;
  let sxx = 0;
  for (const [x, y] of points) {
    sxy += (x - mx) * (y - my);
    sxx += (x - mx) * (x - mx);
  }
  const slope = sxx === 0 ? 0 : sxy / sxx;
  return { intercept: my - slope * mx, slope };
}

const round = (ms: number) => Math.round(ms * 100) / 100;

function theorems(n: number): string {
  const lines = [...HEADER];
  for (let i = 0; i < n; i++) lines.push(THEOREM(i), PROOF, "");
  return lines.join("\n");
}

/** The line of theorem i's proof in `theorems(n)`. */
const proofLine = (i: number) => HEADER.length + 3 * i + 1;

/** A prelude workspace holding the project's library, built as the verifier builds it. */
async function builtWorkspace(): Promise<{
  root: string;
  lean: string;
  versionText: string;
  launch: LaunchSpec;
}> {
  const root = mkdtempSync(join(tmpdir(), "fim-calibrate-"));
  cpSync(join(REPO, "lean-prelude", "FimPrelude"), join(root, "FimPrelude"), { recursive: true });
  cpSync(join(REPO, "lean-prelude", "FimPrelude.lean"), join(root, "FimPrelude.lean"));
  const started = await prepareEmbedded(root, "embedded", LIMITS);
  if (started.kind !== "ready")
    throw new Error(
      `the embedded Lean could not start: ${"reason" in started ? started.reason : started.message}`,
    );
  return { root, lean: started.lean, versionText: started.versionText, launch: started.launch };
}

/**
 * Fastest ms of `lean FILE` on each text, a fresh process each time; the files take turns, so a burst of other
 * work falls on all of them alike. The files are removed afterwards: a pool started later would build them.
 */
function freshProcesses(
  lean: string,
  root: string,
  texts: Record<string, string>,
  runs = 9,
): Record<string, number> {
  const env = embeddedEnv(root);
  const names = Object.keys(texts);
  for (const name of names) writeFileSync(join(root, name), texts[name]!);
  const ms = new Map<string, number[]>(names.map((n) => [n, []]));
  // Each round starts at another file: a run just after the largest file's is slower (its process's memory
  // is still being given back), and no file should always be the one that follows it.
  for (let k = 0; k < runs; k++)
    for (const name of [...names.slice(k % names.length), ...names.slice(0, k % names.length)]) {
      const t0 = performance.now();
      const r = spawnSync(lean, [name], { cwd: root, env, encoding: "utf8", timeout: TIMEOUT_MS });
      if (r.status !== 0) throw new Error(`lean ${name}: ${r.stdout}${r.stderr}`);
      ms.get(name)!.push(performance.now() - t0);
    }
  for (const name of names) rmSync(join(root, name));
  return Object.fromEntries(names.map((n) => [n, fastest(ms.get(n)!)]));
}

async function ready(server: LeanServer, uri: string, version: number): Promise<void> {
  const answer = await server.waitForDiagnostics(uri, version, TIMEOUT_MS);
  if (answer.kind !== "ready") throw new Error(`waiting for ${uri}: ${answer.kind}`);
  const errors = answer.diagnostics.filter((d) => (d.severity ?? 1) === 1);
  if (errors.length > 0) throw new Error(`${uri}: ${errors[0]!.message}`);
}

/** Fastest ms from opening a document to its last diagnostic, each time a new document (a new worker). */
async function serverOpen(server: LeanServer, root: string, text: string, runs: number): Promise<number> {
  const ms: number[] = [];
  for (let k = 0; k < runs; k++) {
    const uri = pathToFileURL(join(root, `Open${k}.lean`)).href;
    const t0 = performance.now();
    const opened = await server.openDocument(uri, text);
    if (opened.kind !== "ok") throw new Error(opened.reason);
    await ready(server, uri, opened.version);
    ms.push(performance.now() - t0);
    await server.closeDocument(uri);
  }
  return fastest(ms);
}

/** Fastest ms of an edit of theorem `at`'s proof in an open document of n theorems, to its last diagnostic. */
async function serverEdit(
  server: LeanServer,
  root: string,
  n: number,
  at: number,
  runs: number,
): Promise<number> {
  const uri = pathToFileURL(join(root, `Edit${n}_${at}.lean`)).href;
  const opened = await server.openDocument(uri, theorems(n));
  if (opened.kind !== "ok") throw new Error(opened.reason);
  await ready(server, uri, opened.version);
  const line = proofLine(at);
  let previous = PROOF;
  const ms: number[] = [];
  for (let k = 1; k <= runs; k++) {
    const next = proofWith(k);
    const range: Range = { start: { line, character: 0 }, end: { line, character: previous.length } };
    const t0 = performance.now();
    const changed = await server.changeDocument(uri, [{ range, text: next }]);
    if (changed.kind !== "ok") throw new Error(changed.reason);
    await ready(server, uri, changed.version);
    ms.push(performance.now() - t0);
    previous = next;
  }
  await server.closeDocument(uri);
  return fastest(ms);
}

async function pool(root: string, gate: boolean, prefixMinDeclarations: number): Promise<VerifierPool> {
  const started = await startVerifier(root, {
    kind: "lean",
    lean: "embedded",
    slots: 1,
    timeoutMs: TIMEOUT_MS,
    sandbox: false,
    kernelGate: gate ? { kind: "all" } : { kind: "off" },
    prefixMinDeclarations,
  });
  if (started.kind !== "ok") throw new Error(`${started.message}\n${started.hint}`);
  return started.pool as VerifierPool;
}

/** The hole of the last theorem of a file of n. */
function lastHole(n: number): Range {
  const line = proofLine(n - 1);
  return { start: { line, character: 2 }, end: { line, character: PROOF.length } };
}

/** Fastest ms of a pool check in the prefix form at the last of n theorems (the module compiled first). */
async function prefixCheck(root: string, n: number, runs: number): Promise<number> {
  writeFileSync(join(root, "Prefix.lean"), theorems(n));
  const p = await pool(root, false, 0);
  try {
    const task = { file: "Prefix.lean", hole: lastHole(n) };
    await p.verify(task, proofWith(100).trim());
    await p.prefixes?.settled();
    const ms: number[] = [];
    for (let k = 0; k < runs; k++) {
      const t0 = performance.now();
      const v = await p.verify(task, proofWith(k + 20).trim());
      if (v.kind !== "proved") throw new Error(`expected proved, got ${JSON.stringify(v)}`);
      ms.push(performance.now() - t0);
    }
    return fastest(ms);
  } finally {
    await p.stop();
  }
}

/** Fastest ms of the kernel gate's run for a proved candidate at the last of n theorems. */
async function gateRun(root: string, n: number, runs: number): Promise<number> {
  const file = `Gate${n}.lean`;
  writeFileSync(join(root, file), theorems(n));
  const p = await pool(root, true, 0);
  try {
    const task = { file, hole: lastHole(n) };
    await p.verify(task, proofWith(100).trim());
    await p.prefixes?.settled();
    const ms: number[] = [];
    for (let k = 0; k < runs; k++) {
      const before = p.kernelGate!.stats.runMs;
      const v = await p.verify(task, proofWith(k + 20).trim());
      if (v.kind !== "proved" || v.confirmedBy !== "kernel-replay")
        throw new Error(`expected a proof the gate confirms, got ${JSON.stringify(v)}`);
      ms.push(p.kernelGate!.stats.runMs - before);
    }
    return fastest(ms);
  } finally {
    await p.stop();
  }
}

function line(label: string, value: string): void {
  process.stdout.write(`${label.padEnd(62)} ${value}\n`);
}

const figure = (ms: number, measured: string): Figure => ({ ms: round(ms), measured });

export async function calibrate(): Promise<void> {
  process.stdout.write("\n(calibrate) the models' costs, measured on the embedded Lean (real elaboration)\n");
  const loadBefore = loadavg();
  const { root, lean, versionText, launch } = await builtWorkspace();
  try {
    const fresh = freshProcesses(lean, root, {
      "Start.lean": "prelude\n",
      "Header.lean": HEADER.join("\n"),
      "Fresh100.lean": theorems(100),
      "Fresh400.lean": theorems(400),
    });
    const start = fresh["Start.lean"]!;
    const header = fresh["Header.lean"]!;
    const fresh100 = fresh["Fresh100.lean"]!;
    const fresh400 = fresh["Fresh400.lean"]!;
    const freshFit = fitLine([
      [0, header],
      [100, fresh100],
      [400, fresh400],
    ]);
    line(
      "   fresh lean: prelude alone | header | 100 | 400 theorems",
      [start, header, fresh100, fresh400].map((x) => x.toFixed(0)).join(" | ") + " ms",
    );

    const started = await LeanServer.start(launch);
    if (started.kind !== "started") throw new Error(started.message);
    const server = started.server;
    let open: number, last10: number, last200: number, first10: number, first200: number;
    try {
      open = await serverOpen(server, root, HEADER.join("\n"), 5);
      last10 = await serverEdit(server, root, 10, 9, 7);
      last200 = await serverEdit(server, root, 200, 199, 7);
      first10 = await serverEdit(server, root, 10, 0, 5);
      first200 = await serverEdit(server, root, 200, 0, 5);
    } finally {
      await server.stop();
    }
    line("   server: header-only document opened", `${open.toFixed(0)} ms`);
    line(
      "   server: edit at the last of 10 | 200 theorems",
      `${last10.toFixed(1)} | ${last200.toFixed(1)} ms`,
    );
    line(
      "   server: edit at the first of 10 | 200 theorems",
      `${first10.toFixed(1)} | ${first200.toFixed(1)} ms`,
    );
    const serverDecl = (first200 - first10) / 190;
    const aboveFit = fitLine([
      [9, last10],
      [199, last200],
    ]);
    // The intercept is an edit with nothing above it, its one declaration included; a negative remainder would be
    // noise, never a cost.
    const editFixed = Math.max(0, aboveFit.intercept - serverDecl);

    const prefix200 = await prefixCheck(root, 200, 7);
    const gate10 = await gateRun(root, 10, 5);
    const gate200 = await gateRun(root, 200, 5);
    line("   pool: prefix-form check at the last of 200 theorems", `${prefix200.toFixed(1)} ms`);
    line(
      "   pool: kernel gate's run, last of 10 | 200 theorems",
      `${gate10.toFixed(0)} | ${gate200.toFixed(0)} ms`,
    );

    const gateSlope = (gate200 - gate10) / 190;
    const calibration: Calibration = {
      schema: 1,
      lean: versionText.split("\n")[0]!,
      leanRelease: versionText.match(/version (\d+\.\d+\.\d+)/)?.[1] ?? "unknown",
      runtime: "embedded",
      workspace:
        "a prelude workspace on lean-prelude/ (FimPrelude); files of one-tactic theorems `exact ⟨hp, hq⟩`",
      method:
        "each figure the fastest of 5 to 9 runs (other work on a shared machine only adds time), or a fit of such figures",
      measuredAt: new Date().toISOString(),
      command: CALIBRATION_COMMAND,
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? "unknown",
        memoryGiB: Math.round(totalmem() / 2 ** 30),
        platform: `${process.platform} ${process.arch}`,
        loadAverageBefore: loadBefore.map((x) => round(x)),
        loadAverageAfter: loadavg().map((x) => round(x)),
      },
      costs: {
        processStartMs: figure(start, "fresh `lean` on a file holding only `prelude`"),
        freshHeaderMs: figure(
          header - start,
          "fresh `lean` on the header alone (`import FimPrelude`) less the process's start",
        ),
        freshDeclarationMs: figure(
          freshFit.slope,
          "slope of fresh `lean` over files of 0, 100 and 400 theorems (least squares)",
        ),
        serverHeaderMs: figure(
          open,
          "the server: a header-only document opened to its last diagnostic (a worker's start and its header)",
        ),
        serverDeclarationMs: figure(
          serverDecl,
          "the server: an edit at the first of 200 theorems less one at the first of 10, per theorem elaborated again",
        ),
        editMs: figure(
          editFixed,
          "the server: an edit at the last theorem, intercept at 0 above (10 and 200 theorems), less one declaration",
        ),
        editPerDeclarationAboveMs: figure(
          aboveFit.slope,
          "the server: slope of an edit at the last theorem over the theorems above it (10 and 200)",
        ),
        prefixCheckMs: figure(
          prefix200,
          "the pool, 1 worker, bridge included: a check in the prefix-import form at the last of 200 theorems",
        ),
        kernelGateMs: figure(
          gate10,
          "the pool's kernel gate (native replay), a proved candidate at the last of 10 theorems",
        ),
        kernelGatePerDeclarationAboveMs: figure(
          Math.max(0, gateSlope),
          `the kernel gate's run at the last of 200 theorems less at the last of 10, per theorem above${gateSlope < 0 ? ` (measured ${gateSlope.toFixed(2)}: none beyond the noise, recorded as 0)` : ""}`,
        ),
      },
      notMeasured: LEAN_PROTOCOL_FIGURES,
    };
    // Figures that contradict each other (a header cheaper than none) are a machine too busy to measure on: the
    // committed file stays as it was.
    const checked = validateCalibration(calibration);
    if (checked.kind === "invalid")
      throw new Error(
        `the measurements are inconsistent (${checked.problems.join("; ")}), most likely other work on the machine (load ${loadavg()[0]!.toFixed(1)}); ${CALIBRATION_PATH} is unchanged: run ${CALIBRATION_COMMAND} again on a quieter machine`,
      );
    const tmp = `${CALIBRATION_PATH}.tmp-${process.pid}`;
    writeFileSync(tmp, JSON.stringify(calibration, null, 2) + "\n");
    renameSync(tmp, CALIBRATION_PATH);
    process.stdout.write(`   written to ${CALIBRATION_PATH}\n`);
    const load = Math.max(loadBefore[0]!, loadavg()[0]!);
    // Even the fastest run waits for a core when more work than cores is running: the figures are then upper bounds.
    if (load > cpus().length)
      process.stdout.write(
        `   the machine was loaded (load average up to ${load.toFixed(1)} on ${cpus().length} cores): these figures are upper bounds; calibrate again on a quieter machine for tighter ones\n`,
      );
    for (const [name, f] of Object.entries(calibration.costs)) line(`   ${name}`, `${f.ms} ms`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
