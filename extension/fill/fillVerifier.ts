/**
 * The verifier Fill Hole checks candidates with: one pool per Lean project, started on first use in the user's
 * real project and kept for the next fill (Lean reuses the file's snapshots), stopped with the extension. Lean when
 * `lake` is found (or the configured server command), the simulator otherwise, named as such everywhere.
 */
import * as vscode from "vscode";
import { startVerifier } from "../../lean-bridge/verifiers/startVerifier";
import type { Verifier } from "../../lean-bridge/verify/verifier";
import { log } from "../log";
import { findLake, trainSettings } from "../settings";

export type PoolResult = { kind: "ok"; pool: Verifier } | { kind: "error"; message: string };

export class FillVerifiers implements vscode.Disposable {
  private readonly started = new Map<string, Promise<PoolResult>>();

  async pool(project: string): Promise<PoolResult> {
    let starting = this.started.get(project);
    if (!starting) {
      starting = this.start(project);
      this.started.set(project, starting);
    }
    const result = await starting;
    if (result.kind === "error") {
      // A failed start is tried again next time (the user may have fixed the project).
      this.started.delete(project);
      return result;
    }
    return result;
  }

  private async start(project: string): Promise<PoolResult> {
    const settings = trainSettings();
    const useSimulator =
      settings.verifierMode === "simulator" ||
      (settings.verifierMode === "auto" && !settings.serverCommand.length && findLake() === undefined);
    const choice = useSimulator
      ? { kind: "simulator" as const }
      : settings.serverCommand.length
        ? { kind: "lean" as const, serverCommand: settings.serverCommand }
        : { kind: "lean" as const };
    if (settings.verifierMode === "lean" && !settings.serverCommand.length && findLake() === undefined)
      return {
        kind: "error",
        message:
          "Lean's `lake` was not found (PATH, ~/.elan/bin, fimRlvr.verifier.lakePath). Install Lean with elan, or set fimRlvr.verifier.mode to auto.",
      };
    log.info(
      `Fill Hole: starting the verifier in ${project} (${useSimulator ? "simulator (not Lean)" : "Lean"}).`,
    );
    const started = await startVerifier(project, {
      ...choice,
      slots: Math.max(1, settings.verifierSlots ?? 2),
      timeoutMs: settings.verifierTimeoutMs,
      ...(settings.memoryBudgetMb !== null ? { memoryBudgetMb: settings.memoryBudgetMb } : {}),
      // A proof inserted into the user's file is a result: the kernel gate confirms every one.
      kernelGate: { kind: "all" },
    });
    return started.kind === "ok" ? started : { kind: "error", message: `${started.message} ${started.hint}` };
  }

  dispose(): void {
    for (const starting of this.started.values())
      void starting.then((s) => (s.kind === "ok" ? s.pool.stop() : undefined));
    this.started.clear();
  }
}
