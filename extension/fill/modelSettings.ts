/**
 * Which model "Fill Hole with Model" and "Evaluate Model on Workspace" use, from the `fimRlvr.fill.*` settings: the
 * last training run's ONNX export, a local ONNX folder, or an OpenAI-compatible endpoint whose key lives in
 * SecretStorage ("FIM-RLVR: Set Model API Key"), never in settings.json.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import * as vscode from "vscode";
import {
  FIM_FAMILIES,
  PROMPT_STYLE_NAMES,
  parseModelSpec,
  type BackendOptions,
  type FimFamily,
  type ModelSpec,
  type PromptStyleName,
  type SamplingSettings,
} from "../../lean-bridge/models/backend";
import { lastRunOnnxExport } from "../../lean-bridge/fill/lastRunExport";
import { defaultRunsPath } from "../../lean-bridge/util/projectLayout";

export const API_KEY_SECRET = "fimRlvr.fill.endpointApiKey";
/** Workspace state: the ONNX folder "Export for the editor" wrote last, which the "lastRun" model uses first. */
export const EDITOR_EXPORT_KEY = "fimRlvr.fill.editorExport";

export interface EditorExportChoice {
  dir: string;
  runDir: string;
  step: number;
}

/** The export "Export for the editor" chose, while its model is still there. */
export function chosenEditorExport(state: vscode.Memento | undefined): EditorExportChoice | undefined {
  const chosen = state?.get<EditorExportChoice>(EDITOR_EXPORT_KEY);
  return chosen && typeof chosen.dir === "string" && existsSync(join(chosen.dir, "onnx", "model.onnx"))
    ? chosen
    : undefined;
}

export interface FillModel {
  spec: ModelSpec;
  /** The spec as text, for messages and `eval --model`. */
  specText: string;
  backend: BackendOptions;
  n: number;
  sampling: Omit<SamplingSettings, "seed">;
  /** Everything above but the key, as the cache's model part. */
  cacheKey: unknown;
}

export type FillModelResult =
  { kind: "ok"; model: FillModel } | { kind: "error"; message: string; action?: "settings" };

function section(): vscode.WorkspaceConfiguration {
  return vscode.workspace.getConfiguration("fimRlvr");
}

function positive(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : fallback;
}

/** The runs folder training writes into for this project (fimRlvr.trainer.outputDir, else .fim-rlvr/runs). */
export function runsFolder(project: string): string {
  return section().get<string>("trainer.outputDir", "").trim() || defaultRunsPath(project);
}

/** `state`: the workspace state, where "Export for the editor" records the export it made. */
export async function fillModel(
  secrets: vscode.SecretStorage,
  project: string,
  state?: vscode.Memento,
): Promise<FillModelResult> {
  const c = section();
  const source = c.get<string>("fill.model", "lastRun");
  let specText: string;
  if (source === "endpoint") {
    const baseUrl = c.get<string>("fill.endpoint.baseUrl", "").trim();
    const model = c.get<string>("fill.endpoint.model", "").trim();
    if (!baseUrl || !model)
      return {
        kind: "error",
        message:
          "Set fimRlvr.fill.endpoint.baseUrl (e.g. http://127.0.0.1:8000/v1) and fimRlvr.fill.endpoint.model to use an endpoint.",
        action: "settings",
      };
    specText = `openai:${baseUrl}#${model}`;
  } else if (source === "onnxFolder") {
    const folder = c.get<string>("fill.onnxFolder", "").trim();
    if (!folder)
      return {
        kind: "error",
        message: "Set fimRlvr.fill.onnxFolder to a folder written by `fim-rlvr export-model --format onnx`.",
        action: "settings",
      };
    specText = `onnx:${folder}`;
  } else {
    // The export "Export for the editor" made, else the newest export under the runs folder.
    const found = chosenEditorExport(state) ?? lastRunOnnxExport(runsFolder(project));
    if ("kind" in found && found.kind === "none")
      return { kind: "error", message: found.message, action: "settings" };
    specText = `onnx:${found.dir}`;
  }
  const spec = parseModelSpec(specText);
  if (spec.kind === "error") return { kind: "error", message: spec.message, action: "settings" };
  const style = c.get<string>("fill.promptStyle", "auto");
  const family = c.get<string>("fill.fimFamily", "");
  const tokenizer = c.get<string>("fill.tokenizerFolder", "").trim();
  const apiKey = spec.spec.kind === "openai" ? await secrets.get(API_KEY_SECRET) : undefined;
  const prompt = {
    style: (PROMPT_STYLE_NAMES as readonly string[]).includes(style) ? (style as PromptStyleName) : "auto",
    showGoal: false,
    maxPromptTokens: positive(c.get("fill.maxPromptTokens"), 256),
    ...((FIM_FAMILIES as readonly string[]).includes(family) ? { fimFamily: family as FimFamily } : {}),
  } as const;
  const sampling = {
    temperature: Math.max(0, c.get<number>("fill.temperature", 0.4)),
    topP: 1,
    maxNewTokens: positive(c.get("fill.maxNewTokens"), 128),
  };
  const n = Math.min(64, Math.round(positive(c.get("fill.samples"), 4)));
  return {
    kind: "ok",
    model: {
      spec: spec.spec,
      specText,
      backend: {
        prompt,
        ...(apiKey ? { apiKey } : {}),
        ...(tokenizer ? { tokenizerDir: tokenizer } : {}),
        // Lean needs its cores: a local model gets two threads.
        threads: 2,
      },
      n,
      sampling,
      cacheKey: { specText, prompt, tokenizer, n, sampling },
    },
  };
}

/** "FIM-RLVR: Set Model API Key": the endpoint's key into SecretStorage (an empty answer deletes it). */
export async function setApiKey(secrets: vscode.SecretStorage): Promise<void> {
  const key = await vscode.window.showInputBox({
    title: "FIM-RLVR: API key of the model endpoint",
    prompt: "Kept in VS Code's secret storage, never in settings.json. Leave empty to remove the stored key.",
    password: true,
    ignoreFocusOut: true,
  });
  if (key === undefined) return;
  if (key.trim()) {
    await secrets.store(API_KEY_SECRET, key.trim());
    void vscode.window.showInformationMessage(
      "FIM-RLVR: the endpoint's API key is stored in the secret storage.",
    );
  } else {
    await secrets.delete(API_KEY_SECRET);
    void vscode.window.showInformationMessage("FIM-RLVR: the stored API key was removed.");
  }
}
