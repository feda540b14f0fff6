/**
 * The goals Lean shows around a candidate, read with `$/lean/plainGoal`: at the hole's start (before the
 * candidate's first tactic; the same for every candidate of a hole, so cached per server and hole) and at
 * the candidate's end (after its last tactic, before the rest of the proof runs). Partial credit compares
 * the two, so work done by the proof's own later steps is never credited to the candidate.
 */
import { createHash } from "node:crypto";
import { LRUCache } from "lru-cache";
import type { Position } from "vscode-languageserver-protocol";
import { PlainGoalRequest } from "../protocol/lean";
import type { LeanServer } from "../server/leanServer";
import { LineIndex } from "../text/positions";
import type { CheckDocument } from "./checkDocument";

const atHoleCaches = new WeakMap<LeanServer, LRUCache<string, number>>();

export type GoalsAround =
  | { kind: "ok"; atHole: number | undefined; afterCandidate: number | undefined }
  | { kind: "lost"; reason: string }
  /** Lean did not answer before the check's deadline. */
  | { kind: "timeout" };

type Count =
  { kind: "ok"; count: number | undefined } | { kind: "lost"; reason: string } | { kind: "timeout" };

async function goalCount(
  server: LeanServer,
  uri: string,
  position: Position,
  deadlineMs: number,
): Promise<Count> {
  const answer = await server.request(PlainGoalRequest, { textDocument: { uri }, position }, deadlineMs);
  if (answer.kind === "closed") return { kind: "lost", reason: answer.reason };
  if (answer.kind === "timeout") return { kind: "timeout" };
  // An error, or no goal there: unknown, which earns no partial credit (the verdict itself stands).
  if (answer.kind !== "ok" || answer.result === null || !Array.isArray(answer.result.goals))
    return { kind: "ok", count: undefined };
  return { kind: "ok", count: answer.result.goals.length };
}

export async function goalsAroundCandidate(
  server: LeanServer,
  uri: string,
  doc: CheckDocument,
  /** Milliseconds left of the check's deadline, asked before each question. */
  left: () => number,
): Promise<GoalsAround> {
  let cache = atHoleCaches.get(server);
  if (!cache) {
    cache = new LRUCache<string, number>({ max: 4096 });
    atHoleCaches.set(server, cache);
  }
  const index = new LineIndex(doc.text);
  const key = createHash("sha256").update(doc.prefix).digest("hex");
  let atHole = cache.get(key);
  if (atHole === undefined) {
    const start = await goalCount(server, uri, index.positionAt(doc.candidateStart), left());
    if (start.kind !== "ok") return start;
    atHole = start.count;
    if (atHole !== undefined) cache.set(key, atHole);
  }
  const end = await goalCount(server, uri, index.positionAt(doc.candidateEnd), left());
  if (end.kind !== "ok") return end;
  return { kind: "ok", atHole, afterCandidate: end.count };
}
