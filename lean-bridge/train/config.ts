/**
 * The run's TrainConfig from the command line: `--config FILE` (YAML or JSON, the trainer's snake_case keys)
 * first, then the flags on top, `--algo-config JSON` merged into `algo_config`. Key names and values are checked
 * against the protocol schema here (configCheck.ts), so a typo or a bad value fails before anything starts; the
 * trainer checks them again, as it owns their meaning (and the algorithm options' values).
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import schema from "../protocol/trainer.schema.json";
import {
  ALGORITHM_NAMES,
  type AlgorithmName,
  type BaselineArm,
  type TrainConfigWire,
} from "../protocol/trainer";
import { readWholeNumber } from "../util/wholeNumber";
import { unreadableReason } from "../util/unreadable";
import { checkAlgorithmOptions, checkGroupSize, checkTrainConfig } from "./configCheck";

export const TRAIN_CONFIG_KEYS: readonly string[] = Object.keys(schema.$defs.TrainConfig.properties);

/** The compute-matched baseline arms, from the schema's BaselineArm. */
export const BASELINE_ARMS: readonly BaselineArm[] = schema.$defs.BaselineArm.enum as BaselineArm[];

function isBaselineArm(name: string): name is BaselineArm {
  return (BASELINE_ARMS as readonly string[]).includes(name);
}

export interface ConfigFlags {
  config?: string;
  algorithm?: string;
  algoConfig?: string;
  model?: string;
  steps?: string;
  groupSize?: string;
  batchSize?: string;
  seed?: string;
  loraR?: string;
  loraAlpha?: string;
  /** Comma-separated module names. */
  loraTargets?: string;
  loadIn4bit?: boolean;
  /** `--baseline sft|rft|sft_data`: a compute-matched baseline instead of RL. */
  baseline?: string;
  /** `--compare sft,rft,sft_data|none`: the compute-matched baselines run after RL. */
  compare?: string;
}

export type ConfigResult = { kind: "ok"; config: TrainConfigWire } | { kind: "error"; message: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function readConfigFile(path: string): ConfigResult {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    return { kind: "error", message: unreadableConfig(path, error) };
  }
  let raw: unknown;
  try {
    raw = path.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    return {
      kind: "error",
      message: `--config ${path} is not valid ${path.endsWith(".json") ? "JSON" : "YAML"}: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (raw === null || raw === undefined) return { kind: "ok", config: {} };
  if (!isPlainObject(raw))
    return { kind: "error", message: `--config ${path} must hold a mapping of option names to values` };
  const unknown = Object.keys(raw).filter((k) => !TRAIN_CONFIG_KEYS.includes(k));
  if (unknown.length > 0)
    return {
      kind: "error",
      message: `--config ${path}: unknown key(s) ${unknown.join(", ")}; valid keys: ${TRAIN_CONFIG_KEYS.join(", ")}`,
    };
  const config = withCompareWords(raw);
  const checked = checkTrainConfig(config, `--config ${path}`);
  if (checked.kind === "error") return checked;
  return { kind: "ok", config: config as TrainConfigWire };
}

/** Why a config file could not be read, in words, with what to give instead (not Node's ENOENT line). */
function unreadableConfig(path: string, error: unknown): string {
  const what = unreadableReason(error);
  return `--config ${path}: ${what}; give a TrainConfig file in YAML or JSON with the trainer's snake_case keys (e.g. a run.yaml holding \`steps: 50\`)`;
}

/**
 * `compare` as the command line spells it (`none`, `sft,rft`) is accepted in a file too, read as the list the
 * schema wants; anything else is left for the schema check to refuse.
 */
function withCompareWords(raw: Record<string, unknown>): Record<string, unknown> {
  const compare = raw.compare;
  if (typeof compare !== "string") return raw;
  const arms = compare === "none" ? [] : compare.split(",").map((a) => a.trim());
  return { ...raw, compare: arms };
}

export function buildTrainConfig(flags: ConfigFlags): ConfigResult {
  const base = flags.config
    ? readConfigFile(flags.config)
    : { kind: "ok" as const, config: {} as TrainConfigWire };
  if (base.kind === "error") return base;
  const config: TrainConfigWire = { ...base.config };
  if (flags.algorithm !== undefined) {
    if (!ALGORITHM_NAMES.includes(flags.algorithm as AlgorithmName))
      return {
        kind: "error",
        message: `--algorithm must be one of ${ALGORITHM_NAMES.join(", ")}, got "${flags.algorithm}" (see \`fim-rlvr algorithms\`)`,
      };
    config.algorithm = flags.algorithm as AlgorithmName;
  }
  if (flags.algoConfig !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(flags.algoConfig);
    } catch (error) {
      return {
        kind: "error",
        message: `--algo-config is not valid JSON: ${error instanceof Error ? error.message : String(error)} (e.g. --algo-config '{"epsilon": 0.1, "beta": 0}')`,
      };
    }
    if (!isPlainObject(parsed))
      return { kind: "error", message: `--algo-config must be a JSON object, e.g. '{"epsilon": 0.1}'` };
    const options = checkAlgorithmOptions(parsed, "--algo-config");
    if (options.kind === "error") return options;
    config.algo_config = { ...(config.algo_config ?? {}), ...parsed };
  }
  if (flags.model !== undefined) config.model = flags.model;
  const numbers: [keyof TrainConfigWire, string, string | undefined, number][] = [
    ["steps", "--steps", flags.steps, 0],
    ["group_size", "--group-size", flags.groupSize, 1],
    ["batch_size", "--batch-size", flags.batchSize, 1],
    ["seed", "--seed", flags.seed, 0],
    ["lora_r", "--lora-r", flags.loraR, 1],
    ["lora_alpha", "--lora-alpha", flags.loraAlpha, 1],
  ];
  for (const [key, flag, text, min] of numbers) {
    if (text === undefined) continue;
    const n = readWholeNumber(flag, text, min);
    if (n.kind === "error") return n;
    (config as Record<string, unknown>)[key] = n.value;
  }
  const group = checkGroupSize(config.group_size, "--group-size", "--group-size 4");
  if (group.kind === "error") return group;
  // TRL's name for the group size: where both are given they must agree (the trainer refuses them otherwise).
  const generations = config.algo_config?.num_generations;
  if (
    typeof generations === "number" &&
    typeof config.group_size === "number" &&
    generations !== config.group_size
  )
    return {
      kind: "error",
      message: `algo_config num_generations (${generations}) differs from group_size (${config.group_size}); they are one setting (TRL's name and ours): give --group-size ${generations} and leave num_generations out`,
    };
  if (flags.loraTargets !== undefined) {
    const targets = flags.loraTargets
      .split(",")
      .map((t) => t.trim())
      .filter(Boolean);
    if (targets.length === 0)
      return {
        kind: "error",
        message: `--lora-targets must name modules, comma-separated, e.g. q_proj,k_proj,v_proj,o_proj`,
      };
    config.lora_targets = targets;
  }
  if (flags.loadIn4bit) config.load_in_4bit = true;
  if (flags.baseline !== undefined) {
    if (!isBaselineArm(flags.baseline))
      return {
        kind: "error",
        message: `--baseline must be sft (the compute-matched SFT baseline), sft_data (data-matched SFT: the portfolio's proofs of the open goals too) or rft (expert iteration), got "${flags.baseline}"`,
      };
    config.baseline = flags.baseline;
  }
  if (flags.compare !== undefined) {
    const arms = flags.compare === "none" ? [] : flags.compare.split(",").map((a) => a.trim());
    const bad = arms.filter((a) => !isBaselineArm(a));
    if (bad.length || (flags.compare !== "none" && !arms.length))
      return {
        kind: "error",
        message: `--compare takes a comma-separated list of ${BASELINE_ARMS.join(", ")} (e.g. sft,rft,sft_data), or none (the compute-matched baselines run after RL), got "${flags.compare}"`,
      };
    config.compare = arms.filter(isBaselineArm);
  }
  // Combinations that cannot work are refused before anything is mined or started (the trainer checks them too).
  if (config.lora_r === undefined || config.lora_r === null) {
    if (config.load_in_4bit)
      return {
        kind: "error",
        message: "--load-in-4bit (QLoRA) trains a LoRA adapter on the 4-bit model: give --lora-r R as well",
      };
    if (flags.loraAlpha !== undefined || flags.loraTargets !== undefined)
      return {
        kind: "error",
        message: "--lora-alpha and --lora-targets need --lora-r R (the LoRA rank) to train an adapter",
      };
  }
  return { kind: "ok", config };
}

/**
 * The TrainConfig a run was started with, read back from the config.json the trainer wrote in its run folder
 * (to resume it from the editor). That file holds the resolved TrainConfig plus records of the trainer's own
 * (algo_config_resolved, verifier, prompt_style_resolved, and whatever a later trainer adds): only the TrainConfig keys
 * of the protocol schema go back, as `fim-rlvr train … --resume` passes only options the user gave.
 */
export function savedRunConfig(text: string): ConfigResult {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    return {
      kind: "error",
      message: `not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
    };
  }
  if (!isPlainObject(raw)) return { kind: "error", message: "not a JSON object of trainer options" };
  const config = Object.fromEntries(Object.entries(raw).filter(([key]) => TRAIN_CONFIG_KEYS.includes(key)));
  return { kind: "ok", config: config as TrainConfigWire };
}
