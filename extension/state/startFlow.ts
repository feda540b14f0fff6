/**
 * Planning a training run from the command palette: which Lean project, which algorithm, which model,
 * which verifier and Python, and where the run goes. Pure over a small UI interface (the VS Code adapter is
 * extension/trainingController.ts), so every branch is unit-tested with a fake UI.
 */
import { join } from "node:path";
import type { AlgorithmName, TrainConfig } from "../../lean-bridge/protocol/trainer";
import { latestCheckpoint } from "../../lean-bridge/train/checkpoints";
import { savedRunConfig } from "../../lean-bridge/train/config";
import type { TrainingOptions } from "../../lean-bridge/train/session";
import { defaultRunsPath } from "../../lean-bridge/util/projectLayout";
import type { VerifierSpec } from "../../lean-bridge/verifiers/startVerifier";
import { ALGORITHM_CHOICES } from "./algorithms";
import { chooseProject, type ProjectFs } from "./leanProject";

export const ELAN_URL = "https://github.com/leanprover/elan#installation";
export const INSTALL_LEAN = "Install Instructions";
export const USE_SIMULATOR = "Use the Simulator";
export const MANAGE_TRUST = "Manage Workspace Trust";

export interface PickItem<T> {
  label: string;
  description?: string;
  detail?: string;
  value: T;
}

export interface StartUi {
  pick<T>(title: string, items: PickItem<T>[]): Promise<T | undefined>;
  pickFolder(title: string): Promise<string | undefined>;
  /** Non-modal messages; they resolve to the action the user chose (undefined when dismissed). */
  warn(message: string, ...actions: string[]): Promise<string | undefined>;
  error(message: string, ...actions: string[]): Promise<string | undefined>;
  openUrl(url: string): void;
  manageTrust(): void;
  log(message: string): void;
}

/** The `fimRlvr.*` settings the flow reads (package.json documents each). */
export interface TrainSettings {
  verifierMode: "auto" | "lean" | "simulator";
  serverCommand: string[];
  /** `fimRlvr.verifier.kimina`: a Kimina Lean Server's URL; when set, it verifies (empty: not used). */
  kiminaUrl?: string;
  model: string;
  algorithm: AlgorithmName;
  algoConfig: Record<string, unknown>;
  /** Further TrainConfig keys (snake_case, as in `--config FILE`); the named settings take precedence. */
  extraConfig: Record<string, unknown>;
  groupSize: number | null;
  steps: number | null;
  outputDir: string;
  reward: "binary" | "partial";
  /** Verifier slots (null: the host's default, up to 4, one per core). */
  verifierSlots: number | null;
  /** Time limit of one verification, in milliseconds. */
  verifierTimeoutMs: number;
  /** Memory all Lean workers together may use, MB (null: three quarters of this machine's). */
  memoryBudgetMb: number | null;
}

export type PythonChoice =
  { kind: "python-extension"; path: string } | { kind: "setting"; path: string } | { kind: "managed" };

/** The Python extension's interpreter when there is one, else the setting, else the managed environment. */
export function choosePython(fromExtension: string | undefined, setting: string): PythonChoice {
  if (fromExtension) return { kind: "python-extension", path: fromExtension };
  if (setting.trim()) return { kind: "setting", path: setting.trim() };
  return { kind: "managed" };
}

export interface LastRun {
  runDir: string;
  project: string;
}

export interface StartEnv {
  activeFile: string | undefined;
  workspaceFolders: string[];
  trusted: boolean;
  fs: ProjectFs & { readText(path: string): string | undefined };
  /** Whether Lean's `lake` can be run (PATH or ~/.elan/bin). */
  lakeFound: boolean;
  python: PythonChoice;
  lastRun: LastRun | undefined;
  now: Date;
  settings: TrainSettings;
}

export type StartPlan =
  | { kind: "ready"; project: string; options: TrainingOptions; summary: string }
  | { kind: "cancelled" }
  | { kind: "refused"; reason: "untrusted" | "no-project" | "no-lean" | "no-checkpoint" };

async function refuseUntrusted(ui: StartUi): Promise<StartPlan> {
  const choice = await ui.error(
    "FIM-RLVR cannot train in a workspace you have not trusted: verifying runs Lean on the workspace's own code. " +
      "Trust the workspace to continue.",
    MANAGE_TRUST,
  );
  if (choice === MANAGE_TRUST) ui.manageTrust();
  return { kind: "refused", reason: "untrusted" };
}

/** The verifier for this run; Lean when `lake` is there, the simulator otherwise (said loudly). */
async function chooseVerifier(env: StartEnv, ui: StartUi): Promise<TrainingOptions["verifier"] | undefined> {
  const { verifierMode, serverCommand } = env.settings;
  const kimina = env.settings.kiminaUrl?.trim();
  if (kimina) {
    if (/^https?:\/\/\S+$/.test(kimina)) return { kind: "kimina", url: kimina };
    await ui.error(
      `The setting fimRlvr.verifier.kimina is "${kimina}", which is not an http(s) URL. Set it to your Kimina ` +
        "Lean Server's address (e.g. http://127.0.0.1:8000), or clear it to verify with Lean.",
    );
    return undefined;
  }
  if (verifierMode === "simulator") return { kind: "simulator" };
  if (serverCommand.length) return { kind: "lean", serverCommand };
  if (env.lakeFound) return { kind: "lean" };
  const missing =
    "Lean's `lake` was not found (not on PATH, not in ~/.elan/bin, no fimRlvr.verifier.lakePath).";
  if (verifierMode === "auto") {
    ui.log(`${missing} Using the simulator (not Lean).`);
    void ui
      .warn(
        `${missing} This run uses the simulator (not Lean): it accepts only the workspace's own proofs, so rewards ` +
          "are a dry run. Install Lean with elan for real rewards.",
        INSTALL_LEAN,
      )
      .then((choice) => choice === INSTALL_LEAN && ui.openUrl(ELAN_URL));
    return { kind: "simulator" };
  }
  const choice = await ui.error(
    `${missing} Install Lean with elan (then reload the window), or train with the simulator (not Lean) as a dry run.`,
    USE_SIMULATOR,
    INSTALL_LEAN,
  );
  if (choice === USE_SIMULATOR) return { kind: "simulator" };
  if (choice === INSTALL_LEAN) ui.openUrl(ELAN_URL);
  return undefined;
}

/** The verifier's limits from the fimRlvr.verifier settings (unset ones keep the verifier's defaults). */
function verifierLimits(settings: TrainSettings): Omit<VerifierSpec, "kind"> {
  return {
    timeoutMs: settings.verifierTimeoutMs,
    ...(settings.verifierSlots !== null ? { slots: settings.verifierSlots } : {}),
    ...(settings.memoryBudgetMb !== null ? { memoryBudgetMb: settings.memoryBudgetMb } : {}),
  };
}

function runsParent(project: string, env: StartEnv): string {
  return env.settings.outputDir.trim() || defaultRunsPath(project);
}

/** A checkpoint's model folder when it is one a new run can start from (a full model: config.json). */
function checkpointModel(runDir: string, fs: StartEnv["fs"]): string | undefined {
  const checkpoint = latestCheckpoint(runDir, fs);
  const model = checkpoint && join(checkpoint, "model");
  return model && fs.exists(join(model, "config.json")) ? model : undefined;
}

/**
 * The model of the last run: the run this workspace remembers, else the newest run folder of the project's
 * runs folder (runs started from the CLI or another window count too) whose checkpoint holds a full model (a
 * LoRA checkpoint holds an adapter, which is no model folder to start from).
 */
export function lastRunModel(project: string, env: StartEnv): { runDir: string; model: string } | undefined {
  const remembered = env.lastRun && checkpointModel(env.lastRun.runDir, env.fs);
  if (env.lastRun && remembered) return { runDir: env.lastRun.runDir, model: remembered };
  const parent = runsParent(project, env);
  // Run folders are named by their start time (ISO, sortable): newest last.
  for (const name of env.fs.subfolders(parent).sort().reverse()) {
    const model = checkpointModel(join(parent, name), env.fs);
    if (model) return { runDir: join(parent, name), model };
  }
  return undefined;
}

function runFolder(project: string, env: StartEnv): string {
  const parent = runsParent(project, env);
  const base = join(
    parent,
    env.now
      .toISOString()
      .replace(/\.\d+Z$/, "")
      .replace(/:/g, "-"),
  );
  // Two runs started within one second get distinct folders.
  let folder = base;
  for (let k = 2; env.fs.exists(folder); k++) folder = `${base}-${k}`;
  return folder;
}

async function pickModel(project: string, env: StartEnv, ui: StartUi): Promise<string | null | undefined> {
  type Choice = { kind: "value"; model: string | null } | { kind: "browse" };
  const items: PickItem<Choice>[] = [];
  if (env.settings.model.trim())
    items.push({
      label: "$(gear) Model from settings",
      description: env.settings.model,
      value: { kind: "value", model: env.settings.model.trim() },
    });
  items.push({
    label: "$(package) Embedded tiny model",
    description: "built locally from a config, no download; a smoke test of the pipeline",
    value: { kind: "value", model: null },
  });
  const last = lastRunModel(project, env);
  if (last)
    items.push({
      label: "$(history) The last run's model",
      description: last.model,
      detail: "continue training what the last run learned, as a new run",
      value: { kind: "value", model: last.model },
    });
  items.push({
    label: "$(folder-opened) A local model folder…",
    description: "a Hugging Face model saved on disk",
    value: { kind: "browse" },
  });
  const choice = await ui.pick("FIM-RLVR: which model?", items);
  if (!choice) return undefined;
  if (choice.kind === "value") return choice.model;
  return ui.pickFolder("Train this model");
}

export function trainConfig(
  settings: TrainSettings,
  algorithm: AlgorithmName,
  model: string | null,
): TrainConfig {
  return {
    ...(settings.extraConfig as TrainConfig),
    algorithm,
    algo_config: settings.algoConfig,
    model,
    ...(settings.steps !== null ? { steps: settings.steps } : {}),
    ...(settings.groupSize !== null ? { group_size: settings.groupSize } : {}),
  };
}

/**
 * Choices given up front (the Start command's optional argument, for keybindings and automation): each one
 * given skips its picker.
 */
export interface StartPreset {
  project?: string;
  algorithm?: AlgorithmName;
  /** null: the embedded tiny model. */
  model?: string | null;
  /** Optimiser steps for this run (instead of the setting). */
  steps?: number;
}

/** The Start command's argument, checked (it comes from keybindings or other extensions). */
export function asPreset(value: unknown): StartPreset {
  if (!value || typeof value !== "object") return {};
  const v = value as Record<string, unknown>;
  const algorithm = ALGORITHM_CHOICES.find((a) => a.name === v.algorithm)?.name;
  return {
    ...(typeof v.project === "string" ? { project: v.project } : {}),
    ...(algorithm ? { algorithm } : {}),
    ...(v.model === null || typeof v.model === "string" ? { model: v.model } : {}),
    ...(typeof v.steps === "number" && Number.isInteger(v.steps) && v.steps > 0 ? { steps: v.steps } : {}),
  };
}

export async function planStart(env: StartEnv, ui: StartUi, preset: StartPreset = {}): Promise<StartPlan> {
  if (!env.trusted) return refuseUntrusted(ui);
  const choice: ReturnType<typeof chooseProject> = preset.project
    ? { kind: "one", project: preset.project }
    : chooseProject(env.activeFile, env.workspaceFolders, env.fs);
  let project: string | undefined;
  if (choice.kind === "none") {
    await ui.error(
      "FIM-RLVR found no Lean project (a folder with a lean-toolchain file) in this workspace. Open a Lean 4 project folder and run Start again.",
    );
    return { kind: "refused", reason: "no-project" };
  }
  if (choice.kind === "one") project = choice.project;
  else
    project = await ui.pick(
      "FIM-RLVR: which Lean project?",
      choice.projects.map((p) => ({ label: p, value: p })),
    );
  if (!project) return { kind: "cancelled" };

  const preferred = env.settings.algorithm;
  const ordered = [...ALGORITHM_CHOICES].sort(
    (a, b) => Number(b.name === preferred) - Number(a.name === preferred),
  );
  const algorithm =
    preset.algorithm ??
    (await ui.pick(
      "FIM-RLVR: which algorithm?",
      ordered.map((a) => ({
        label: a.label,
        description:
          a.name === preferred ? `${a.name} · your default (setting fimRlvr.trainer.algorithm)` : a.name,
        detail: a.description,
        value: a.name,
      })),
    ));
  if (!algorithm) return { kind: "cancelled" };
  const model = preset.model !== undefined ? preset.model : await pickModel(project, env, ui);
  if (model === undefined) return { kind: "cancelled" };
  const verifier = await chooseVerifier(env, ui);
  if (!verifier) return { kind: "refused", reason: "no-lean" };

  const options: TrainingOptions = {
    target: project,
    runDir: runFolder(project, env),
    config: trainConfig(
      preset.steps ? { ...env.settings, steps: preset.steps } : env.settings,
      algorithm,
      model,
    ),
    reward: env.settings.reward,
    verifier: { ...verifier, ...verifierLimits(env.settings) },
    resume: false,
    ...(env.python.kind === "managed" ? {} : { python: env.python.path }),
  };
  return { kind: "ready", project, options, summary: describe(options, env.python) };
}

/**
 * The options the run was started with: its config.json, as the trainer wrote it (TrainConfig keys only; the
 * trainer's own records there are dropped, see savedRunConfig). A missing or broken file falls back to the
 * current settings, said in the log.
 */
function resumedConfig(env: StartEnv, ui: StartUi, runDir: string): TrainConfig {
  const path = join(runDir, "config.json");
  const text = env.fs.readText(path);
  const saved = text === undefined ? undefined : savedRunConfig(text);
  if (saved?.kind === "ok") return saved.config;
  ui.log(
    `${path} ${saved ? `is unusable (${saved.message})` : "is missing"}; resuming with the current settings.`,
  );
  return trainConfig(env.settings, env.settings.algorithm, env.settings.model.trim() || null);
}

/** Resume the last run from its newest checkpoint, with the configuration it was started with. */
export async function planResume(env: StartEnv, ui: StartUi): Promise<StartPlan> {
  if (!env.trusted) return refuseUntrusted(ui);
  const last = env.lastRun;
  if (!last || !latestCheckpoint(last.runDir, env.fs)) {
    await ui.error(
      "FIM-RLVR has no run with a checkpoint to resume. Start a run first (FIM-RLVR: Start FIM-RLVR Training).",
    );
    return { kind: "refused", reason: "no-checkpoint" };
  }
  const verifier = await chooseVerifier(env, ui);
  if (!verifier) return { kind: "refused", reason: "no-lean" };
  const config = resumedConfig(env, ui, last.runDir);
  const options: TrainingOptions = {
    target: last.project,
    runDir: last.runDir,
    config,
    reward: env.settings.reward,
    verifier: { ...verifier, ...verifierLimits(env.settings) },
    resume: true,
    ...(env.python.kind === "managed" ? {} : { python: env.python.path }),
  };
  return { kind: "ready", project: last.project, options, summary: describe(options, env.python) };
}

function describe(options: TrainingOptions, python: PythonChoice): string {
  const py =
    python.kind === "managed" ? "the managed virtual environment" : `${python.path} (${python.kind})`;
  const verifier =
    options.verifier.kind === "simulator"
      ? "the simulator (not Lean)"
      : options.verifier.kind === "kimina"
        ? "a Kimina Lean Server"
        : "Lean";
  return (
    `${options.resume ? "Resuming" : "Training"} ${options.config.algorithm ?? "grpo"} on ${options.target} ` +
    `(model: ${options.config.model ?? "embedded tiny"}; verifier: ${verifier}; Python: ${py}) into ${options.runDir}`
  );
}
