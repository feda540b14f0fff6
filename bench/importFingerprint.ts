/**
 * What the imports' fingerprint (lean-bridge/verify/importFingerprint.ts) costs on a Mathlib-sized tree: a
 * generated `.lake` of FILES module files (default 8000, about Mathlib's module count) of BYTES each (default
 * 64 KiB; Mathlib's average `.olean` is larger, so the start's hashing scales with the bytes, the sweep does
 * not), eight to a folder. Prints the start (walk and hash), one sweep (the cost a paying verdict waits for),
 * and 16 callers asking together (they share sweeps).
 *
 *   npm run bench:imports            FILES=8000 BYTES=65536 by default
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ImportFingerprint } from "../lean-bridge/verify/importFingerprint";

const FILES = Number(process.env.FILES ?? 8000);
const BYTES = Number(process.env.BYTES ?? 65536);
const SWEEPS = 20;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "fim-bench-imports-"));
  try {
    const lib = join(root, ".lake", "packages", "mathlib", ".lake", "build", "lib", "lean", "Mathlib");
    const body = Buffer.alloc(BYTES, 7);
    for (let k = 0; k < FILES; k++) {
      const folder = join(lib, `A${Math.floor(k / 512)}`, `B${Math.floor(k / 8) % 64}`);
      if (k % 8 === 0) mkdirSync(folder, { recursive: true });
      body.writeUInt32LE(k, 0);
      writeFileSync(join(folder, `M${k}.olean`), body);
    }
    let t = performance.now();
    const print = ImportFingerprint.take(root);
    const takeMs = performance.now() - t;
    const sweepMs: number[] = [];
    for (let k = 0; k < SWEEPS; k++) {
      t = performance.now();
      const r = await print.checkedSince(t);
      sweepMs.push(performance.now() - t);
      if (r.kind !== "unchanged") throw new Error(`a sweep found a change in an untouched tree: ${r.kind}`);
    }
    const before = print.sweeps;
    t = performance.now();
    await Promise.all(Array.from({ length: 16 }, () => print.checkedSince(performance.now())));
    const togetherMs = performance.now() - t;
    const mb = (FILES * BYTES) / 2 ** 20;
    console.log(`imports: ${print.fileCount} files, ${mb.toFixed(0)} MiB`);
    console.log(
      `start (walk + SHA-256 of every file): ${takeMs.toFixed(0)} ms (${(mb / (takeMs / 1000)).toFixed(0)} MiB/s)`,
    );
    console.log(
      `one sweep (stat of every file and folder), median of ${SWEEPS}: ${median(sweepMs).toFixed(1)} ms`,
    );
    console.log(`16 callers together: ${togetherMs.toFixed(1)} ms, ${print.sweeps - before} sweep(s)`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

void main();
