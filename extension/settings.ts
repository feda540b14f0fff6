/** Reads the `fimRlvr.*` settings (documented with their defaults in package.json). */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, dirname, join } from "node:path";
import * as vscode from "vscode";
import type { AlgorithmName } from "../lean-bridge/protocol/trainer";
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
 * Finds Lean's `lake`: the `fimRlvr.verifier.lakePath` setting, PATH, or elan's ~/.elan/bin. The folder
 * found is put first on this extension host's PATH so the verifier (which runs `lake serve`) uses it.
 */
export function findLake(): string | undefined {
  const configured = section().get<string>("verifier.lakePath", "").trim();
  const candidates = [
    ...(configured ? [configured] : []),
    ...(process.env.PATH ?? "")
      .split(delimiter)
      .filter(Boolean)
      .map((dir) => join(dir, "lake")),
    join(homedir(), ".elan", "bin", "lake"),
  ];
  const lake = candidates.find((path) => existsSync(path));
  if (lake && !(process.env.PATH ?? "").split(delimiter).includes(dirname(lake)))
    process.env.PATH = `${dirname(lake)}${delimiter}${process.env.PATH ?? ""}`;
  return lake;
}
