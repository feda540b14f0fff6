/**
 * The goals of the hole's own tactic block, before and after the candidate, as Lean reports them: the measure
 * of partial progress. Both are read the same way, from a probe: a version of the check document with Lean's
 * `done` tactic (the sentinel) at the hole's column, in place of the candidate (the goals at the hole) or on
 * the line after it, the candidate wrapped in `( … )` (the goals after it). `done` logs the goals left in its own block as one error tagged
 * `Tactic.unsolvedGoals`, placed on itself, admits them and ends the block (src/Lean/Elab/Tactic/Basic.lean:
 * `done` → `Term.reportUnsolvedGoals gs; throwAbortTactic`), so the rest of the proof never runs.
 *
 * Why not `$/lean/plainGoal` at the candidate's last token: `InfoTree.goalsAt?` answers with the innermost
 * nested block there, so `have _t : True := by exact True.intro` read "no goals" (LEAN_FIDELITY.md §2). A
 * sentinel that ends up anywhere but the hole's block (inside a block the candidate opened, or taken as an
 * argument by the candidate's last tactic and run per goal) reports no error on itself, or several, and then
 * no count is read: no partial credit (fail closed). The goals at the hole come from the document with the
 * sentinel alone, independent of any candidate, cached per server and hole.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import { LeanDiagnosticTag, type LeanDiagnostic } from "../protocol/lean";
import type { LeanServer } from "../server/leanServer";
import { incrementalChange } from "../text/edits";
import { LineIndex } from "../text/positions";
import type { CheckDocument } from "./checkDocument";
import type { Slot } from "./scheduler";

/** Lean's `done`: reports the goals of its block where it stands, or nothing when there are none. */
export const SENTINEL = "done";

const atHoleCaches = new WeakMap<LeanServer, LRUCache<string, number>>();

export type GoalCount =
  /** undefined: Lean gave no count that can be trusted (no partial credit; the verdict stands). */
  | { kind: "ok"; count: number | undefined }
  | { kind: "lost"; reason: string }
  /** Lean did not answer before the check's deadline. */
  | { kind: "timeout" };

export type GoalsAround =
  | { kind: "ok"; atHole: number | undefined; afterCandidate: number | undefined }
  | { kind: "lost"; reason: string }
  | { kind: "timeout" };

/** A probe document: the text, and where its sentinel starts. */
export interface Probe {
  text: string;
  sentinelAt: number;
}

/** The check document with the sentinel in place of the candidate: the goals at the hole, no candidate involved. */
export function neutralProbe(doc: CheckDocument): Probe {
  return {
    text: doc.text.slice(0, doc.candidateStart) + SENTINEL + doc.text.slice(doc.candidateEnd),
    sentinelAt: doc.candidateStart,
  };
}

/**
 * The check document with the candidate in parentheses, `(` and `)` each on its own line at the hole's
 * column, and the sentinel on the line after them. Lean's `(tacs)` tactic runs `tacs` on the goals as they
 * are (src/Init/Tactics.lean: `syntax (name := paren) "(" withoutPosition(tacticSeq) ")"`), so the goals
 * after it are the candidate's. Without the parentheses a candidate ending in a tactic that takes a tactic
 * sequence (`focus`, `case _ =>`, `next =>`, Mathlib's `on_goal 1 =>`: plain `tacticSeq`, whose first
 * tactic may stand on the next line at any column) took the sentinel as its own first tactic, and it then
 * counted the one goal that tactic focuses on: partial credit for doing nothing. `)` ends any sequence the
 * candidate left open, which is then a parse error, not a count.
 */
export function afterCandidateProbe(doc: CheckDocument): Probe {
  const indent = " ".repeat(doc.holeColumn);
  const head =
    doc.text.slice(0, doc.candidateStart) +
    `(\n${indent}` +
    doc.text.slice(doc.candidateStart, doc.candidateEnd) +
    `\n${indent})\n${indent}`;
  return { text: head + SENTINEL + doc.text.slice(doc.candidateEnd), sentinelAt: head.length };
}

function countGoals(message: string): number {
  return Math.max(1, message.match(/⊢/g)?.length ?? 0);
}

/**
 * The goals the sentinel reported: exactly one error starting at it, tagged unsolved goals, gives its count.
 * No error there (no goals, or the sentinel ran in a block the candidate opened) or several (it ran once per
 * goal, as an argument of the candidate's last tactic) give no count.
 */
export function sentinelCount(
  probe: Probe,
  declarationStart: number,
  diagnostics: readonly LeanDiagnostic[],
): number | undefined {
  const index = new LineIndex(probe.text);
  const sentinel = index.positionAt(probe.sentinelAt);
  const declLine = index.positionAt(declarationStart).line;
  const at = (d: LeanDiagnostic) =>
    d.range.start.line === sentinel.line && d.range.start.character === sentinel.character;
  const tagged = (d: LeanDiagnostic) => (d.leanTags ?? []).includes(LeanDiagnosticTag.unsolvedGoals);
  const reports = diagnostics.filter(
    (d) => (d.severity ?? 1) === 1 && d.range.start.line >= declLine && at(d),
  );
  if (reports.length === 1 && reports[0] && tagged(reports[0])) return countGoals(reports[0].message);
  return undefined;
}

/** Puts a probe into the slot, waits for Lean's diagnostics of it, and reads the sentinel's count. */
async function probeCount(
  server: LeanServer,
  slot: Slot,
  doc: CheckDocument,
  probe: Probe,
  deadlineMs: number,
): Promise<GoalCount> {
  const change = incrementalChange(slot.text ?? "", probe.text);
  let version = server.versionOf(slot.uri);
  if (change) {
    const changed = await server.changeDocument(slot.uri, [change]);
    if (changed.kind === "closed") return { kind: "lost", reason: changed.reason };
    version = changed.version;
  }
  slot.text = probe.text;
  const result = await server.waitForDiagnostics(slot.uri, version, deadlineMs);
  if (result.kind === "closed") return { kind: "lost", reason: result.reason };
  if (result.kind === "timeout") return { kind: "timeout" };
  // A crashed worker on a probe: no count (the verdict of the check itself stands).
  if (result.kind === "crashed") return { kind: "ok", count: undefined };
  return { kind: "ok", count: sentinelCount(probe, doc.declarationStart, result.diagnostics) };
}

/**
 * The goals at the hole (from the neutral probe, cached) and right after the candidate (from its probe).
 * The slot holds the last probe afterwards; the next check sends only the difference from it.
 */
export async function goalsAroundCandidate(
  server: LeanServer,
  slot: Slot,
  doc: CheckDocument,
  /** Milliseconds left of the check's deadline, asked before each question. */
  left: () => number,
): Promise<GoalsAround> {
  let cache = atHoleCaches.get(server);
  if (!cache) {
    cache = new LRUCache<string, number>({ max: 4096 });
    atHoleCaches.set(server, cache);
  }
  // Everything but the candidate: the same for every candidate of this hole.
  const key = createHash("sha256")
    .update(doc.text.slice(0, doc.candidateStart))
    .update("\0")
    .update(doc.text.slice(doc.candidateEnd))
    .digest("hex");
  let atHole = cache.get(key);
  if (atHole === undefined) {
    const neutral = await probeCount(server, slot, doc, neutralProbe(doc), left());
    if (neutral.kind !== "ok") return neutral;
    atHole = neutral.count;
    if (atHole !== undefined) cache.set(key, atHole);
  }
  if (atHole === undefined) return { kind: "ok", atHole, afterCandidate: undefined };
  const after = await probeCount(server, slot, doc, afterCandidateProbe(doc), left());
  if (after.kind !== "ok") return after;
  return { kind: "ok", atHole, afterCandidate: after.count };
}
