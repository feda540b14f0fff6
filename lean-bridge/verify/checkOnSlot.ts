/**
 * Runs ONE check on a slot: puts the check document into the slot (open, or an incremental change of the
 * text already there), waits for every diagnostic of that version under the check's deadline, and
 * classifies what Lean said. The pool decides, from the returned aftermath, what becomes of the slot.
 */
import type { LeanServer } from "../server/leanServer";
import { incrementalChange } from "../text/edits";
import type { CheckDocument } from "./checkDocument";
import { classify } from "./classify";
import type { Slot } from "./scheduler";
import type { VerdictOutcome } from "./verdict";

export interface SlotCheckContext {
  server: LeanServer;
  timeoutMs: number;
  allowedAxioms: readonly string[];
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
  const result = await server.waitForDiagnostics(slot.uri, version, ctx.timeoutMs);
  switch (result.kind) {
    case "ready":
      return {
        outcome: classify(doc, result.diagnostics, result.fatal, ctx.allowedAxioms),
        aftermath: "keep",
      };
    case "timeout":
      return {
        outcome: { kind: "timeout", timeoutMs: ctx.timeoutMs, diagnostics: [] },
        aftermath: "recycle",
      };
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
