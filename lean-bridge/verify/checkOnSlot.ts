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
import { checkFoldingView, checkLeanView } from "./leanView";
import type { Slot } from "./scheduler";
import type { VerdictCause, VerdictOutcome } from "./verdict";
import { LineIndex } from "../text/positions";

export interface SlotCheckContext {
  server: LeanServer;
  timeoutMs: number;
  allowedAxioms: readonly string[];
  /** Accept the axioms of native computation (the policy's `allowNative`). */
  allowNative?: boolean;
  /** Whether this Lean has the legacy native axioms (classify.ts, `legacyNativeAxiomsExist`); default true. */
  legacyNativeExists?: boolean;
  /**
   * Ask Lean for the goals around the candidate when it leaves goals (partial credit); default true. The
   * verifier's own no-op probe needs only whether Lean proves it, so it skips these questions.
   */
  measureGoals?: boolean;
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
  // The pool retries a lost server or a crashed worker once on a fresh one before charging the candidate.
  const lost = (reason: string): SlotCheck => ({
    outcome: {
      kind: "crashed",
      reason: `${reason}${stderrTail(server.stderr)}`,
      cause: "infrastructure",
      diagnostics: [],
    },
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
  const timedOut = (cause: VerdictCause): SlotCheck => ({
    outcome: { kind: "timeout", timeoutMs: ctx.timeoutMs, cause, diagnostics: [] },
    aftermath: "recycle",
  });
  // Charged to the candidate only if it crashes a fresh worker too (the pool retries once).
  const workerCrashed = (reason: string): SlotCheck => ({
    outcome: { kind: "crashed", reason, cause: "infrastructure", diagnostics: [] },
    aftermath: "recycle",
  });
  const result = await server.waitForDiagnostics(slot.uri, version, ctx.timeoutMs);
  switch (result.kind) {
    case "ready": {
      const outcome = classify(
        doc,
        result.diagnostics,
        result.fatal,
        ctx.allowedAxioms,
        ctx.allowNative === true,
        ctx.legacyNativeExists !== false,
      );
      // A broken or stale environment: the next check opens the document afresh (a new worker loads the
      // header again), rather than asking a worker that holds stale imports.
      if (outcome.kind === "environment") return { outcome, aftermath: "recycle" };
      const confirmed = await confirmWithLean(
        server,
        slot,
        doc,
        outcome,
        deadline,
        ctx.measureGoals !== false,
      );
      if (confirmed.kind === "lost") return lost(confirmed.reason);
      // Lean had elaborated the candidate; what ran out of time was the candidate's own work.
      if (confirmed.kind === "timeout") return timedOut("candidate");
      return { outcome: confirmed.outcome, aftermath: "keep" };
    }
    case "timeout":
      // Lean said it stopped this version (fatal) yet never answered the wait: its worker died before the wait
      // reached it, and Lean holds such a wait until the next edit. A crash, then, which the pool retries and
      // charges to the candidate if it comes back; never a timeout of the infrastructure, which is masked.
      if (server.stoppedFatally(slot.uri, version)) return workerCrashed(WAIT_LOST_TO_CRASH);
      return timedOut(timeoutCause(server, slot.uri, version, doc));
    case "crashed":
      return workerCrashed(result.reason);
    case "closed":
      return lost(result.reason);
  }
}

const WAIT_LOST_TO_CRASH =
  "the Lean worker for this document stopped with a fatal error and never answered (it crashed before Lean received the wait for its diagnostics)";

/**
 * Whose time a timeout spent, from Lean's last `$/lean/fileProgress`: the candidate's when Lean was at the
 * checked declaration or past it (a `sleep`, a slow tactic: a failure the candidate chose); the
 * infrastructure's when Lean had not reached it (imports or the declarations above still loading, or no
 * word from Lean at all), which no candidate can cause, because nothing of it is elaborated before.
 */
export function timeoutCause(
  server: LeanServer,
  uri: string,
  version: number,
  doc: CheckDocument,
): VerdictCause {
  const progress = server.progressOf(uri, version);
  if (progress.kind === "none") return "infrastructure";
  if (progress.kind === "done") return "candidate";
  const declLine = new LineIndex(doc.text).positionAt(doc.declarationStart).line;
  return progress.fromLine >= declLine ? "candidate" : "infrastructure";
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
  slot: Slot,
  doc: CheckDocument,
  outcome: VerdictOutcome,
  deadline: number,
  measureGoals: boolean,
): Promise<Confirmed> {
  const uri = slot.uri;
  const left = () => Math.max(1, deadline - performance.now());
  let confirmed = outcome;
  if (outcome.kind === "incomplete" && outcome.reason === "unsolved-goals") {
    // Without the goal counts no partial credit is paid (rewards.ts): the outcome stands as Lean gave it.
    if (!measureGoals) return { kind: "ok", outcome };
    // Lean's list of declarations is read from the check document itself, so it is asked before the probes.
    const view = await leanView(server, uri, doc, left);
    if (view.kind !== "ok") return view;
    if (view.failed) return failClosed(outcome, view.failed);
    const goals = await goalsAroundCandidate(server, slot, doc, left);
    if (goals.kind !== "ok") return goals;
    confirmed = {
      ...outcome,
      ...(goals.atHole !== undefined ? { goalsAtHole: goals.atHole } : {}),
      ...(goals.afterCandidate !== undefined ? { goalsAfterCandidate: goals.afterCandidate } : {}),
    };
    return { kind: "ok", outcome: confirmed };
  }
  if (outcome.kind !== "proved") return { kind: "ok", outcome };
  const view = await leanView(server, uri, doc, left);
  if (view.kind !== "ok") return view;
  if (view.failed) return failClosed(outcome, view.failed);
  return { kind: "ok", outcome: confirmed };
}

function failClosed(outcome: VerdictOutcome, reason: string): Confirmed {
  return {
    kind: "ok",
    outcome: {
      kind: "failed",
      reason: `${reason} (the verifier fails closed)`,
      diagnostics: outcome.diagnostics,
    },
  };
}

/** Lean's list of the document's declarations, checked: `failed` says why it is not what the proof needs. */
async function leanView(
  server: LeanServer,
  uri: string,
  doc: CheckDocument,
  left: () => number,
): Promise<{ kind: "ok"; failed?: string } | { kind: "lost"; reason: string } | { kind: "timeout" }> {
  const symbols = await server.request(DocumentSymbolRequest.type, { textDocument: { uri } }, left());
  if (symbols.kind === "closed") return { kind: "lost", reason: symbols.reason };
  if (symbols.kind === "timeout") return { kind: "timeout" };
  if (symbols.kind === "error")
    return {
      kind: "ok",
      failed: `Lean refused to list the document's declarations: ${symbols.message || symbols.code}`,
    };
  const view = checkLeanView(doc, symbols.result);
  if (view.kind === "unexpected") return { kind: "ok", failed: view.reason };
  if (!doc.listedBySymbols) {
    // Lean never lists a declaration wrapped in `… in` (or made by another macro): its folding range confirms
    // where the command ends instead, at line granularity.
    const folding = await server.request(FoldingRangeRequest.type, { textDocument: { uri } }, left());
    if (folding.kind === "closed") return { kind: "lost", reason: folding.reason };
    if (folding.kind === "timeout") return { kind: "timeout" };
    if (folding.kind === "error")
      return {
        kind: "ok",
        failed: `Lean refused to list the document's folding ranges: ${folding.message || folding.code}`,
      };
    const lines = checkFoldingView(doc, folding.result);
    if (lines.kind === "unexpected") return { kind: "ok", failed: lines.reason };
  }
  return { kind: "ok" };
}
