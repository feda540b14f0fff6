/**
 * The simulator's model of Lean's incremental elaboration (Lean's command snapshots): a document's commands
 * with what each reported, which of them an edit leaves reusable, and the re-elaboration of the rest at the
 * simulated cost per declaration.
 */
import type { Command, ParsedFile } from "../lean/commands";
import type { LeanDiagnostic } from "../protocol/lean";
import { judgeCommand, type JudgeContext, type JudgedDeclaration } from "./judge";

export interface Waiter {
  id: number | string;
  version: number;
}

export interface CommandResult {
  start: number;
  end: number;
  /** Where the next command starts (the end of this command's trailing whitespace and comments). */
  extendedEnd: number;
  diagnostics: LeanDiagnostic[];
  judged: [string, JudgedDeclaration][];
}

export interface SimDocument {
  uri: string;
  version: number;
  text: string;
  file: ParsedFile;
  /** Version whose diagnostics have all been sent. */
  doneVersion: number;
  results: CommandResult[];
  crashed: boolean;
  workerStarted: boolean;
  generation: number;
  waiters: Waiter[];
}

export interface ReusePlan {
  /** Where each command's successor starts (a command owns its trailing whitespace and comments). */
  nextStart: Map<number, number>;
  /** Snapshots the edit left intact. */
  reused: CommandResult[];
  /** Commands to elaborate again. */
  fresh: Set<Command>;
  /** Offset of the first command elaborated again (the document's end when none). */
  from: number;
}

/**
 * Which snapshots survive an edit that begins at `firstChange`. Trailing whitespace and comments belong to a
 * command (Lean keeps them as its last token's trailing info), so a command is reused only if the change
 * begins after the next command starts.
 */
export function planReuse(doc: SimDocument, firstChange: number): ReusePlan {
  const commands = doc.file.commands;
  const nextStart = new Map<number, number>();
  commands.forEach((c, k) => nextStart.set(c.start, commands[k + 1]?.start ?? Number.MAX_SAFE_INTEGER));
  const reused = doc.results.filter((r) => r.extendedEnd <= firstChange);
  const fresh = commands.filter(
    (c) => (nextStart.get(c.start) ?? 0) > firstChange || !reused.some((r) => r.start === c.start),
  );
  return { nextStart, reused, fresh: new Set(fresh), from: fresh[0]?.start ?? doc.text.length };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Every command's result in document order: reused snapshots as they were, the others judged again, each
 * declaration costing `declMs`. Undefined when the document changed meanwhile (`stale`).
 */
export async function elaborate(
  doc: SimDocument,
  plan: ReusePlan,
  ctx: JudgeContext,
  cost: { declMs: number; stale: () => boolean; onElaborate: () => void },
): Promise<CommandResult[] | undefined> {
  const results: CommandResult[] = [];
  const reusedByStart = new Map(plan.reused.map((r) => [r.start, r]));
  for (const command of doc.file.commands) {
    const keep = plan.fresh.has(command) ? undefined : reusedByStart.get(command.start);
    if (keep) {
      // A reused snapshot: its diagnostics and names stand, at no cost.
      for (const [name, result] of keep.judged) ctx.judged.set(name, result);
      results.push(keep);
      continue;
    }
    if (command.declaration) {
      cost.onElaborate();
      if (cost.declMs > 0) {
        await sleep(cost.declMs);
        if (cost.stale()) return undefined;
      }
    }
    ctx.recorded = [];
    const diagnostics = judgeCommand(ctx, command);
    results.push({
      start: command.start,
      end: command.end,
      extendedEnd: plan.nextStart.get(command.start) ?? doc.text.length,
      diagnostics,
      judged: ctx.recorded,
    });
  }
  return results;
}
