/**
 * bench:verify's real-Lean section: what a check costs on the embedded Lean 4.35.0 (real elaboration, no simulated
 * costs), against where the hole stands in its file. Generated prelude workspaces on the project's own library
 * (lean-prelude/): N one-tactic theorems, the hole in the last (or the first) of them; every check a distinct
 * candidate, so nothing comes from the verdict cache.
 *
 * Compared, for each shape: the pool checking the whole file up to the hole (Lean re-walks every command snapshot
 * above an edit), the pool in the prefix-import form (the declarations above come from a module compiled once:
 * verify/prefixForm.ts), and a fresh `lean` process per check on the same check document. Then the pool's
 * throughput with 1 and 2 workers, and a hole at the end and at the start of one long tactic proof (Lean's
 * tactic snapshots). Figures are medians of the checks after the first (which opens the document).
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Range } from "vscode-languageserver-protocol";
import { locateEmbeddedLean } from "../lean-bridge/embedded/install";
import { embeddedEnv } from "../lean-bridge/embedded/launch";
import { startVerifier } from "../lean-bridge/verifiers/startVerifier";
import type { VerifierPool } from "../lean-bridge/verify/pool";
import { REPO } from "../test/helpers";

interface Shape {
  declarations: number;
  at: "end" | "start";
}

const CANDIDATES = 9;

/** `exact ⟨hp, hq⟩` with k pairs of parentheses around `hp`: the same proof, a different text each time. */
function candidate(k: number): string {
  return `exact ⟨${"(".repeat(k)}hp${")".repeat(k)}, hq⟩`;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] ?? NaN;
}

/** A workspace holding the prelude library and one file; returns the hole of the chosen theorem. */
function workspace(shape: Shape): { root: string; hole: Range } {
  const root = mkdtempSync(join(tmpdir(), "fim-bench-reallean-"));
  cpSync(join(REPO, "lean-prelude", "FimPrelude"), join(root, "FimPrelude"), { recursive: true });
  cpSync(join(REPO, "lean-prelude", "FimPrelude.lean"), join(root, "FimPrelude.lean"));
  const lines = ["prelude", "import FimPrelude", ""];
  let hole: Range | undefined;
  const target = shape.at === "end" ? shape.declarations - 1 : 0;
  for (let i = 0; i < shape.declarations; i++) {
    lines.push(`theorem t${i} (p q : Prop) (hp : p) (hq : q) : p ∧ q := by`);
    const proof = "  exact ⟨hp, hq⟩";
    if (i === target)
      hole = {
        start: { line: lines.length, character: 2 },
        end: { line: lines.length, character: proof.length },
      };
    lines.push(proof, "");
  }
  writeFileSync(join(root, "Many.lean"), lines.join("\n"));
  return { root, hole: hole! };
}

/** A file with one theorem whose tactic proof has `steps` lines; the hole is its last line or its first. */
function longProof(steps: number, at: "end" | "start"): { root: string; hole: Range } {
  const root = mkdtempSync(join(tmpdir(), "fim-bench-reallean-"));
  cpSync(join(REPO, "lean-prelude", "FimPrelude"), join(root, "FimPrelude"), { recursive: true });
  cpSync(join(REPO, "lean-prelude", "FimPrelude.lean"), join(root, "FimPrelude.lean"));
  const lines = [
    "prelude",
    "import FimPrelude",
    "",
    "theorem long (p q : Prop) (hp : p) (hq : q) : p ∧ q := by",
  ];
  const first = lines.length;
  for (let i = 0; i < steps; i++) lines.push(`  have h${i} : p := hp`);
  // The last step uses the first, so neither is a hole the proof closes without.
  const proof = "  exact ⟨h0, hq⟩";
  const last = lines.length;
  lines.push(proof, "");
  writeFileSync(join(root, "Long.lean"), lines.join("\n"));
  const line = at === "end" ? last : first;
  const width = at === "end" ? proof.length : `  have h0 : p := hp`.length;
  return { root, hole: { start: { line, character: 2 }, end: { line, character: width } } };
}

async function pool(root: string, slots: number, prefixMinDeclarations: number): Promise<VerifierPool> {
  const started = await startVerifier(root, {
    kind: "lean",
    lean: "embedded",
    slots,
    timeoutMs: 120_000,
    sandbox: false,
    kernelGate: { kind: "off" },
    prefixMinDeclarations,
  });
  if (started.kind !== "ok") throw new Error(`${started.message}\n${started.hint}`);
  return started.pool as VerifierPool;
}

/** Median ms of a check, one candidate after another on one worker (the first opens the document). */
async function perCheck(
  p: VerifierPool,
  file: string,
  hole: Range,
  texts: (k: number) => string,
): Promise<number> {
  const ms: number[] = [];
  for (let k = 0; k < CANDIDATES; k++) {
    const t0 = performance.now();
    const v = await p.verify({ file, hole }, texts(k));
    if (v.kind !== "proved") throw new Error(`expected proved, got ${JSON.stringify(v)}`);
    if (k > 0) ms.push(performance.now() - t0);
  }
  return median(ms);
}

/** Median ms of a fresh `lean` on the whole check document (the file up to the hole's declaration). */
function freshProcess(lean: string, root: string, shape: Shape): number {
  const text = spawnSync("cat", [join(root, "Many.lean")], { encoding: "utf8" }).stdout;
  const lines = text.split("\n");
  const cut = shape.at === "end" ? lines.length : 6;
  writeFileSync(join(root, "Check.lean"), lines.slice(0, cut).join("\n"));
  const env = embeddedEnv(root);
  const ms: number[] = [];
  for (let k = 0; k < 5; k++) {
    const t0 = performance.now();
    const r = spawnSync(lean, ["Check.lean"], { cwd: root, env, encoding: "utf8", timeout: 120_000 });
    if (r.status !== 0) throw new Error(`lean Check.lean: ${r.stdout}${r.stderr}`);
    ms.push(performance.now() - t0);
  }
  return median(ms);
}

function line(label: string, value: string): void {
  process.stdout.write(`${label.padEnd(62)} ${value}\n`);
}

export async function realLean(): Promise<void> {
  const located = locateEmbeddedLean();
  if (located.kind !== "found") {
    process.stdout.write(`\n(real Lean) skipped: ${located.reason}\n`);
    return;
  }
  process.stdout.write(
    "\n(real Lean) per-check cost on the embedded Lean 4.35.0 (real elaboration), one worker, median ms\n",
  );
  line("   declarations above the hole / where", "whole file | prefix import | fresh lean process");
  for (const shape of [
    { declarations: 10, at: "end" },
    { declarations: 100, at: "end" },
    { declarations: 500, at: "end" },
    { declarations: 500, at: "start" },
  ] as Shape[]) {
    const ws = workspace(shape);
    try {
      const whole = await pool(ws.root, 1, Number.POSITIVE_INFINITY);
      const wholeMs = await perCheck(whole, "Many.lean", ws.hole, candidate);
      await whole.stop();
      const imported = await pool(ws.root, 1, 0);
      // The module compiles in the background; the checks after it stand on it.
      await imported.verify({ file: "Many.lean", hole: ws.hole }, candidate(100));
      await imported.prefixes?.settled();
      const importMs = await perCheck(imported, "Many.lean", ws.hole, (k) => candidate(k + 20));
      await imported.stop();
      const freshMs = freshProcess(located.lean, ws.root, shape);
      line(
        `   ${shape.declarations} ${shape.declarations === 1 ? "declaration" : "declarations"}, hole in the ${shape.at === "end" ? "last" : "first"}`,
        `${wholeMs.toFixed(0)} | ${importMs.toFixed(0)} | ${freshMs.toFixed(0)}`,
      );
    } finally {
      rmSync(ws.root, { recursive: true, force: true });
    }
  }
  // Throughput with 1 and 2 workers on the deep hole, prefix form (16 distinct candidates).
  const deep = workspace({ declarations: 500, at: "end" });
  try {
    for (const slots of [1, 2]) {
      const p = await pool(deep.root, slots, 0);
      await p.verify({ file: "Many.lean", hole: deep.hole }, candidate(200));
      await p.prefixes?.settled();
      const t0 = performance.now();
      const vs = await p.verifyMany(
        Array.from({ length: 16 }, (_, k) => ({
          task: { file: "Many.lean", hole: deep.hole },
          candidate: candidate(k + 40),
        })),
      );
      const s = (performance.now() - t0) / 1000;
      await p.stop();
      line(
        `   500 declarations, hole in the last, ${slots} worker${slots > 1 ? "s" : ""} (prefix import)`,
        `${(vs.length / s).toFixed(1)} checks/s`,
      );
    }
  } finally {
    rmSync(deep.root, { recursive: true, force: true });
  }
  // Inside one long tactic proof: does Lean's reuse of tactic snapshots above the edit pay?
  for (const at of ["end", "start"] as const) {
    const lp = longProof(300, at);
    try {
      const p = await pool(lp.root, 1, 0);
      const texts =
        at === "end" ? candidate : (k: number) => `have h0 : p := ${"(".repeat(k)}hp${")".repeat(k)}`;
      const ms = await perCheck(p, "Long.lean", lp.hole, texts);
      await p.stop();
      line(
        `   one 300-line tactic proof, hole at its ${at === "end" ? "last" : "first"} line`,
        `${ms.toFixed(0)} ms`,
      );
    } finally {
      rmSync(lp.root, { recursive: true, force: true });
    }
  }
}
