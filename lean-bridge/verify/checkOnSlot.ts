/**
 * Runs ONE check on a slot: puts the check document into the slot (open, or an incremental change of the
 * text already there), waits for every diagnostic of that version under the check's deadline, classifies
 * what Lean said, and, for an outcome that could earn reward, asks Lean for the facts the reward rests on:
 * its list of the document's declarations (nothing the candidate introduced) and the goals before and after
 * the candidate (the measure of partial progress). The pool decides, from the returned aftermath, what becomes of
 * the slot.
 */
import { DocumentSymbolRequest, FoldingRangeRequest } from "vscode-languageserver-protocol";
import type { LeanServer } from "../server/leanServer";
import { incrementalChange } from "../text/edits";
import type { CheckDocument } from "./checkDocument";
import { classify } from "./classify";
import { goalsAroundCandidate } from "./goals";
import { goalsClosedShare } from "./rewards";
import { checkFoldingView, checkLeanView } from "./leanView";
import type { Slot } from "./scheduler";
import type { VerdictOutcome } from "./verdict";

export interface SlotCheckContext {
  server: LeanServer;
  timeoutMs: number;
  allowedAxioms: readonly string[];
  /** Accept the axioms of native computation (the policy's `allowNative`). */
  allowNative?: boolean;
}

/**
 * keep: the slot's document is current and reusable; recycle: close it (Lean ends its worker) so the next
 * check opens it afresh; server-lost: the server is gone, every slot's document with it.
 */
export type SlotAftermath = "keep" | "recycle" | "server-lost";

export interface SlotCheck {
  outcome: VerdictOutcome;
  aftermath: SlotAftermath;
}

export async function checkOnSlot(ctx: SlotCheckContext, slot: Slot, doc: CheckDocument): Promise<SlotCheck> {
  const { server } = ctx;
  const lost = (reason: string): SlotCheck => ({
    outcome: { kind: "crashed", reason: `${reason}${stderrTail(server.stderr)}`, diagnostics: [] },
    aftermath: "server-lost",
  });
  let version: number;
  if (slot.text === undefined || !server.isOpen(slot.uri)) {
    const opened = await server.openDocument(slot.uri, doc.text);
    if (opened.kind === "closed") return lost(opened.reason);
    version = opened.version;
  } else {
    const change = incrementalChange(slot.text, doc.text);
    if (change) {
      const changed = await server.changeDocument(slot.uri, [change]);
      if (changed.kind === "closed") return lost(changed.reason);
      version = changed.version;
    } else version = server.versionOf(slot.uri);
  }
  slot.text = doc.text;
  // One deadline for the whole check: the diagnostics and the questions Lean answers after them.
  const deadline = performance.now() + ctx.timeoutMs;
  const timedOut: SlotCheck = {
    outcome: { kind: "timeout", timeoutMs: ctx.timeoutMs, diagnostics: [] },
    aftermath: "recycle",
  };
  const result = await server.waitForDiagnostics(slot.uri, version, ctx.timeoutMs);
  switch (result.kind) {
    case "ready": {
      const outcome = classify(
        doc,
        result.diagnostics,
        result.fatal,
        ctx.allowedAxioms,
        ctx.allowNative === true,
      );
      // A broken or stale environment: the next check opens the document afresh (a new worker loads the
      // header again), rather than asking a worker that holds stale imports.
      if (outcome.kind === "environment") return { outcome, aftermath: "recycle" };
      const confirmed = await confirmWithLean(server, slot.uri, doc, outcome, deadline);
      if (confirmed.kind === "lost") return lost(confirmed.reason);
      if (confirmed.kind === "timeout") return timedOut;
      return { outcome: confirmed.outcome, aftermath: "keep" };
    }
    case "timeout":
      return timedOut;
    case "crashed":
      return { outcome: { kind: "crashed", reason: result.reason, diagnostics: [] }, aftermath: "recycle" };
    case "closed":
      return lost(result.reason);
  }
}

/** The last lines of the server's stderr, for a crash report. */
export function stderrTail(stderr: string): string {
  const t = stderr.trim().split("\n").slice(-5).join("\n");
  return t ? `\nserver stderr (last lines):\n${t}` : "";
}

type Confirmed =
  | { kind: "ok"; outcome: VerdictOutcome }
  | { kind: "lost"; reason: string }
  /** Lean did not answer within the check's deadline: a timeout verdict (never cached, never rewarded). */
  | { kind: "timeout" };

/**
 * Only outcomes that can earn reward need Lean's confirmation: a proof, or unsolved goals after a candidate
 * that left fewer goals than Lean showed at the hole (partial credit; the goals are asked first, so a
 * candidate without progress costs no further question). An answer Lean does not give, or gives in an
 * unexpected shape, turns such an outcome into `failed` (fail closed), never into reward.
 */
async function confirmWithLean(
  server: LeanServer,
  uri: string,
  doc: CheckDocument,
  outcome: VerdictOutcome,
  deadline: number,
): Promise<Confirmed> {
  const left = () => Math.max(1, deadline - performance.now());
  let confirmed = outcome;
  if (outcome.kind === "incomplete" && outcome.reason === "unsolved-goals") {
    const goals = await goalsAroundCandidate(server, uri, doc, left);
    if (goals.kind !== "ok") return goals;
    confirmed = {
      ...outcome,
      ...(goals.atHole !== undefined ? { goalsAtHole: goals.atHole } : {}),
      ...(goals.afterCandidate !== undefined ? { goalsAfterCandidate: goals.afterCandidate } : {}),
    };
    if (goalsClosedShare(goals.atHole, goals.afterCandidate) === 0) return { kind: "ok", outcome: confirmed };
  } else if (outcome.kind !== "proved") return { kind: "ok", outcome };
  const failClosed = (reason: string): Confirmed => ({
    kind: "ok",
    outcome: {
      kind: "failed",
      reason: `${reason} (the verifier fails closed)`,
      diagnostics: outcome.diagnostics,
    },
  });
  const symbols = await server.request(DocumentSymbolRequest.type, { textDocument: { uri } }, left());
  if (symbols.kind === "closed") return { kind: "lost", reason: symbols.reason };
  if (symbols.kind === "timeout") return { kind: "timeout" };
  if (symbols.kind === "error")
    return failClosed(`Lean refused to list the document's declarations: ${symbols.message || symbols.code}`);
  const view = checkLeanView(doc, symbols.result);
  if (view.kind === "unexpected") return failClosed(view.reason);
  if (!doc.listedBySymbols) {
    const folding = await server.request(FoldingRangeRequest.type, { textDocument: { uri } }, left());
    if (folding.kind === "closed") return { kind: "lost", reason: folding.reason };
    if (folding.kind === "timeout") return { kind: "timeout" };
    if (folding.kind === "error")
      return failClosed(
        `Lean refused to list the document's folding ranges: ${folding.message || folding.code}`,
      );
    const lines = checkFoldingView(doc, folding.result);
    if (lines.kind === "unexpected") return failClosed(lines.reason);
  }
  return { kind: "ok", outcome: confirmed };
}
