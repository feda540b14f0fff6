/**
 * Battery cases over one file given as text: each candidate for a hole of the file runs through the
 * lean-like server (leanLike.ts) and through the simulator, and must be proved (a legitimate proof) or earn
 * nothing (an attack: rejected or failed, never proved, never a masked outcome). The simulator accepts a proof
 * only when it matches a reference proof token for token, so each must-prove case is given to it as an
 * oracle alternative for its declaration: what it then shows is that nothing before Lean (the policy, the
 * check document) refuses the legitimate text.
 */
import assert from "node:assert/strict";
import type { Range } from "vscode-languageserver-protocol";
import { parseFile } from "../../lean-bridge/lean/commands";
import { isMaskedVerdict } from "../../lean-bridge/protocol/trainer";
import { reindent } from "../../lean-bridge/verify/placeCandidate";
import type { VerifyTask } from "../../lean-bridge/verify/verifier";
import { rewardOf } from "../../lean-bridge/verify/rewards";
import type { Verdict } from "../../lean-bridge/verify/verdict";
import { LineIndex } from "../../lean-bridge/text/positions";
import { inMemory, poolOver } from "../harness";
import { leanLike } from "./leanLike";

export interface FileCase {
  name: string;
  hole: Range;
  candidate: string;
  /** A legitimate proof that must be proved, or an attack that must earn nothing. */
  proved: boolean;
  /**
   * Whether the lean-like server can stand for Lean on it. It has no name resolution or types: where Lean
   * fails a candidate for what it names (an unknown identifier), its model of tactics may close the goal.
   */
  leanLike?: false;
}

/** The verdict earns nothing in either reward mode, and is not an outcome training masks. */
export function unrewarded(v: Verdict, label: string): void {
  assert.notEqual(v.kind, "proved", `${label}: ${JSON.stringify(v)}`);
  assert.notEqual(v.kind, "environment", `${label}: ${JSON.stringify(v)}`);
  assert.equal(isMaskedVerdict(v), false, `${label}: a masked outcome ${JSON.stringify(v)}`);
  assert.equal(rewardOf(v, "binary").reward, 0, label);
  assert.equal(rewardOf(v, "partial").reward, 0, `${label}: partial ${JSON.stringify(v)}`);
}

function judge(v: Verdict, c: FileCase, where: string): void {
  const label = `${where}: ${c.name}`;
  if (!c.proved) return unrewarded(v, label);
  assert.equal(v.kind, "proved", `${label}: ${JSON.stringify(v)}`);
  if (v.kind === "proved") assert.equal(v.axiomsChecked, true, label);
}

/** The range of the first `piece` after `after` in `text` (a hole written out in full). */
export function holeAt(text: string, piece: string, after: string): Range {
  const from = text.indexOf(":= by", text.indexOf(after));
  const start = text.indexOf(piece, from);
  assert.ok(from >= 0 && start >= 0, `no ${JSON.stringify(piece)} after ${JSON.stringify(after)}`);
  return new LineIndex(text).rangeAt(start, start + piece.length);
}

/**
 * The simulator's oracle for the must-prove cases: each declaration's body with the candidate in its hole,
 * under the declaration's full name.
 */
function alternatives(text: string, cases: FileCase[]): Record<string, string[]> {
  const index = new LineIndex(text);
  const out: Record<string, string[]> = {};
  for (const c of cases.filter((k) => k.proved)) {
    const start = index.offsetAt(c.hole.start);
    // Placed as the check document places it: later lines at the hole's column.
    const placed = reindent(c.candidate, c.hole.start.character).text;
    const filled = text.slice(0, start) + placed + text.slice(index.offsetAt(c.hole.end));
    const decl = parseFile(filled)
      .commands.map((k) => k.declaration)
      .find((d) => d && d.start <= start && start < d.end);
    assert.ok(decl?.fullName && decl.bodyStart !== undefined, `${c.name}: no declaration around the hole`);
    (out[decl.fullName] ??= []).push(filled.slice(decl.bodyStart, decl.end));
  }
  return out;
}

export async function throughLeanLike(file: string, text: string, cases: FileCase[]): Promise<void> {
  const lean = await leanLike();
  try {
    const pool = poolOver(lean.server);
    for (const c of cases.filter((k) => k.leanLike !== false)) {
      const task: VerifyTask = { file, text, hole: c.hole };
      judge(await pool.verify(task, c.candidate), c, "lean-like");
    }
  } finally {
    await lean.close();
  }
}

export async function throughSimulator(file: string, text: string, cases: FileCase[]): Promise<void> {
  const h = await inMemory({ oracle: { alternatives: alternatives(text, cases) } });
  try {
    for (const c of cases) {
      const task: VerifyTask = { file, text, hole: c.hole };
      judge(await h.pool.verify(task, c.candidate), c, "simulator");
    }
  } finally {
    await h.close();
  }
}
