/** Reads the `fimRlvr.*` settings (documented with their defaults in package.json). */
import { homedir } from "node:os";
import * as vscode from "vscode";
import type { AlgorithmName } from "../lean-bridge/protocol/trainer";
import { leanToolchain, type LeanToolchain } from "./state/leanToolchain";
import type { TrainSettings } from "./state/startFlow";

function section(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("fimRlvr");
}

function nullableInt(value: unknown): number | null {
  return typeof value === "number" && Number.isInteger(value) && value > 0 ? value : null;
}

export function trainSettings(): TrainSettings {
  const c = section();
  const serverCommand = c.get<unknown>("verifier.serverCommand");
  const algoConfig = c.get<unknown>("trainer.algoConfig");
  const extraConfig = c.get<unknown>("trainer.config");
  return {
    verifierMode: c.get<TrainSettings["verifierMode"]>("verifier.mode", "auto"),
    serverCommand: Array.isArray(serverCommand)
      ? serverCommand.filter((s): s is string => typeof s === "string")
      : [],
    kiminaUrl: c.get<string>("verifier.kimina", ""),
    model: c.get<string>("trainer.model", ""),
    algorithm: c.get<AlgorithmName>("trainer.algorithm", "grpo"),
    algoConfig:
      algoConfig && typeof algoConfig === "object" && !Array.isArray(algoConfig)
        ? (algoConfig as Record<string, unknown>)
        : {},
    extraConfig:
      extraConfig && typeof extraConfig === "object" && !Array.isArray(extraConfig)
        ? (extraConfig as Record<string, unknown>)
        : {},
    groupSize: nullableInt(c.get("trainer.groupSize")),
    steps: nullableInt(c.get("trainer.steps")),
    outputDir: c.get<string>("trainer.outputDir", ""),
    reward: c.get<TrainSettings["reward"]>("trainer.reward", "binary"),
    verifierSlots: nullableInt(c.get("verifier.poolSize")),
    verifierTimeoutMs: nullableInt(c.get("verifier.timeoutMs")) ?? 60_000,
    // 0 (the default) means "three quarters of this machine's memory", the pool's own default.
    memoryBudgetMb: nullableInt(c.get("verifier.memoryBudgetMb")),
  };
}

export function pythonSetting(): string {
  return section().get<string>("trainer.python", "");
}

/**
 * Lean's toolchain as the user set it up (state/leanToolchain.ts): our `fimRlvr.verifier.lakePath`, the Lean 4
 * extension's `lean4.envPathExtensions` and `lean4.toolchainPath`, PATH, elan's ~/.elan/bin. The environment it
 * gives is a copy for the processes FIM-RLVR starts; the extension host's shared PATH is never changed.
 */
export function leanToolchainHere(): LeanToolchain {
  const lean4 = vscode.workspace.getConfiguration("lean4");
  const extensions = lean4.get<unknown>("envPathExtensions", []);
  return leanToolchain(
    {
      lakePath: section().get<string>("verifier.lakePath", ""),
      envPathExtensions: Array.isArray(extensions)
        ? extensions.filter((e): e is string => typeof e === "string")
        : [],
      toolchainPath: lean4.get<string>("toolchainPath", ""),
    },
    {
      base: process.env,
      home: homedir(),
      ...(vscode.workspace.workspaceFolders?.[0]
        ? { workspaceRoot: vscode.workspace.workspaceFolders[0].uri.fsPath }
        : {}),
    },
  );
}

/** The `lake` binary the verifier will run, if any (see leanToolchainHere). */
export function findLake(): string | undefined {
  return leanToolchainHere().lake;
}
