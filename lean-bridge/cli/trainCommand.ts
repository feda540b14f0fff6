/**
 * `fim-rlvr train WORKSPACE|DATASET_DIR …` (a public interface: its flags are spelled as README.md
 * documents them). It is thin: the training host (lean-bridge/train/session.ts) does the work, the
 * progress reporter draws it, and this file turns outcomes into messages and exit codes (0 done, 130 after
 * Ctrl-C with a checkpoint, 1 for a failed run or a start-up error, 2 for bad usage).
 */
import { existsSync } from "node:fs";
import { relative, resolve } from "node:path";
import { ALGORITHM_NAMES } from "../protocol/trainer";
import { buildTrainConfig } from "../train/config";
import { splitFractionsProblem, type SplitFractions } from "../dataset/split";
import { folderTargetProblem, isDatasetDir, type MiningSplit } from "../train/dataset";
import { claimRunFolder, discardUnstarted, givenRunFolder } from "../train/runFolder";
import { passAtOneSummary } from "../train/passAtOneSummary";
import { progressReporter } from "../train/progress";
import { startTraining, type TrainerLauncher, type TrainingOutcome } from "../train/session";
import { defaultSlots } from "../verifiers/startVerifier";
import { type CliCommand, type ParsedValues, flagOption, stringOption } from "./command";
import { isStatementFile, statementTarget } from "./importCommand";
import { invocation, shellQuote } from "./invocation";
import { SERVER_OPTIONS, WORKERS_OPTION, chooseVerifier } from "./pool";
import { UsageError, parseCount, requireExisting } from "./usage";

/** `--split-seed` and `--split-fractions` as the miner takes them; usage errors for anything else. */
export function miningSplit(values: ParsedValues): MiningSplit {
  const seed = stringOption(values, "split-seed");
  const fractionsText = stringOption(values, "split-fractions");
  const out: { seed?: number; fractions?: SplitFractions } = {};
  if (seed !== undefined) out.seed = parseCount("--split-seed", seed, 0, 0);
  if (fractionsText !== undefined) {
    const parts = fractionsText.split(",").map((p) => Number(p.trim()));
    const fractions = { train: parts[0]!, validation: parts[1]!, test: parts[2]! };
    const problem = parts.length === 3 ? splitFractionsProblem(fractions) : "give three numbers";
    if (problem) throw new UsageError(`--split-fractions ${fractionsText}: ${problem} (e.g. 0.6,0.15,0.25)`);
    out.fractions = fractions;
  }
  return out;
}

function launcherChoice(values: ParsedValues): TrainerLauncher {
  const kind = stringOption(values, "launcher") ?? "single";
  const processes = stringOption(values, "num-processes");
  const configFile = stringOption(values, "accelerate-config");
  if (kind !== "single" && kind !== "accelerate")
    throw new UsageError(`--launcher must be single or accelerate, got "${kind}"`);
  if (kind === "single") {
    if (processes !== undefined || configFile !== undefined)
      throw new UsageError("--num-processes and --accelerate-config need --launcher accelerate");
    return { kind: "single" };
  }
  const numProcesses = processes === undefined ? undefined : parseCount("--num-processes", processes, 1, 1);
  if (configFile !== undefined && !existsSync(configFile))
    throw new UsageError(
      `--accelerate-config ${configFile} does not exist; write one with \`accelerate config --config_file ${configFile}\``,
    );
  return {
    kind: "accelerate",
    ...(numProcesses !== undefined ? { numProcesses } : {}),
    ...(configFile !== undefined ? { configFile: resolve(configFile) } : {}),
  };
}

function reportOutcome(outcome: TrainingOutcome, resumeCommand: string, baseline: boolean | string): number {
  const out = process.stderr;
  switch (outcome.kind) {
    case "completed":
      process.stdout.write(`${passAtOneSummary(outcome.evals, baseline)}\n`);
      out.write(`fim-rlvr train: done. Run folder: ${outcome.runDir}\n  report: ${outcome.reportPath}\n`);
      return 0;
    case "stopped":
      out.write(
        `fim-rlvr train: stopped${outcome.checkpoint ? `; checkpoint ${outcome.checkpoint}` : " (no checkpoint was written)"}\n` +
          `  report: ${outcome.reportPath}\n  continue with: ${resumeCommand}\n`,
      );
      return 130;
    case "failed":
      out.write(`fim-rlvr train: ${outcome.message}\n${outcome.hint ? `  ${outcome.hint}\n` : ""}`);
      return 1;
  }
}

/**
 * What `--project DIR` means for this target: a dataset folder's project (returned), a statement file's (handled
 * by statementTarget), or, for a workspace, nothing but the workspace itself (anything else is a usage error).
 */
function projectForTarget(target: string, project: string | undefined): string | undefined {
  if (project === undefined || isStatementFile(target)) return undefined;
  if (!existsSync(project)) throw new UsageError(`--project ${project}: no such folder`);
  if (isDatasetDir(target)) return resolve(project);
  if (resolve(project) !== resolve(target))
    throw new UsageError(
      `--project ${project}: a workspace target is mined and checked in itself; drop --project, or give a dataset folder or a statement file with it`,
    );
  return undefined;
}

/**
 * The project a target's candidates are checked in, where it is known before anything starts: it decides
 * whether the embedded Lean can judge them where no `lake` is on PATH. A workspace target is its own project;
 * a dataset folder's is `--project` (its report.json's workspace is read later, once the dataset loads).
 */
export function projectCheckedIn(target: string, project: string | undefined): string | undefined {
  if (isStatementFile(target)) return project === undefined ? undefined : resolve(project);
  if (isDatasetDir(target)) return project === undefined ? undefined : resolve(project);
  return resolve(target);
}

export const trainCommand: CliCommand = {
  name: "train",
  summary: "Train a model with GRPO-family RL on a workspace's holes, rewarded by Lean",
  synopsis: "WORKSPACE|DATASET_DIR [options]",
  description: [
    "Mines the workspace into a dataset (or reads a dataset folder), starts the verifier and the Python",
    "trainer, and trains: a held-out pass@1 before, an SFT warm start (on by default for the embedded tiny",
    "model), then RL. Writes RUN_DIR/metrics.jsonl, samples.jsonl, eval.json, checkpoints/ and report.html.",
    "Verifies with Lean when `lake` is on PATH, else with the embedded Lean 4.35.0 where it can judge every",
    "file (a prelude workspace such as lean-env-prelude; npm run setup:lean installs it), otherwise with the",
    "simulator (said loudly). Ctrl-C writes a checkpoint and exits 130; --resume continues from it. Exit 0",
    "when training completes, 1 when it fails.",
  ].join("\n"),
  positionals: {
    name: "WORKSPACE|DATASET_DIR",
    help: "A Lean workspace, or a folder written by `fim-rlvr export`.",
    max: 1,
  },
  options: {
    algorithm: {
      type: "string",
      value: ALGORITHM_NAMES.join("|"),
      help: "The RL objective (see `fim-rlvr algorithms`).",
      default: "grpo",
    },
    "algo-config": {
      type: "string",
      value: "JSON",
      help: 'Algorithm options with TRL names, e.g. \'{"epsilon": 0.2, "beta": 0}\'.',
    },
    config: {
      type: "string",
      value: "FILE",
      help: "TrainConfig as YAML or JSON (snake_case keys); flags override it.",
    },
    model: {
      type: "string",
      value: "PATH",
      help: "A Hugging Face causal LM folder.",
      default: "an embedded tiny model built locally",
    },
    steps: { type: "string", value: "N", help: "RL optimiser steps.", default: "the trainer's" },
    "group-size": {
      type: "string",
      value: "G",
      help: "Completions per prompt (a GRPO group).",
      default: "the trainer's",
    },
    "batch-size": {
      type: "string",
      value: "B",
      help: "Groups per optimiser step.",
      default: "the trainer's",
    },
    seed: {
      type: "string",
      value: "S",
      help: "Seed of data order, sampling and initialisation.",
      default: "0",
    },
    project: {
      type: "string",
      value: "DIR",
      help: "The Lean project the candidates are checked in: for a statement file (JSONL/Parquet), the project it is imported into first (required); for a dataset folder, the project its files come from (default: the workspace its report.json names). A workspace target is its own project.",
    },
    "split-seed": {
      type: "string",
      value: "S",
      help: "Seed of the held-out draw when a workspace target is mined (bench:seeds gives each seed its own draw).",
      default: "0",
    },
    "split-fractions": {
      type: "string",
      value: "TRAIN,VALIDATION,TEST",
      help: "Shares of tasks per split when a workspace target is mined, e.g. 0.6,0.15,0.25.",
      default: "0.8,0.1,0.1",
    },
    out: { type: "string", value: "RUN_DIR", help: "The run folder.", default: "runs/<timestamp>" },
    resume: { type: "boolean", help: "Continue the run in --out from its last checkpoint." },
    python: {
      type: "string",
      value: "PATH",
      help: "Python interpreter with torch, transformers and tokenizers.",
      default: "a managed venv, created on first use",
    },
    "lora-r": {
      type: "string",
      value: "R",
      help: "Train a LoRA adapter of rank R (peft) instead of every weight.",
      default: "full fine-tuning",
    },
    "lora-alpha": { type: "string", value: "A", help: "LoRA alpha.", default: "2 × R" },
    "lora-targets": {
      type: "string",
      value: "NAMES",
      help: "Comma-separated module names LoRA adapts, e.g. q_proj,v_proj.",
      default: "every linear layer",
    },
    "load-in-4bit": {
      type: "boolean",
      help: "QLoRA: the base model in 4-bit NF4 (bitsandbytes, CUDA; needs --lora-r).",
    },
    launcher: {
      type: "string",
      value: "single|accelerate",
      help: "How trainer processes start: one process, or `accelerate launch` (DDP, or DeepSpeed ZeRO-2 by config).",
      default: "single",
    },
    "num-processes": {
      type: "string",
      value: "N",
      help: "Trainer processes for --launcher accelerate (one per GPU).",
      default: "accelerate's config, else 1",
    },
    baseline: {
      type: "string",
      value: "sft|sft_data|rft",
      help: "Instead of RL, a compute-matched baseline from the same warm start: sft continues SFT for as many sequences through forward/backward passes as the RL steps train on; sft_data does the same on the reference proofs plus the fixed portfolio's proofs of the training open goals, checked by the run's verifier (data-matched SFT); rft (expert iteration) samples and checks what RL would and fine-tunes on its own verified proofs.",
    },
    compare: {
      type: "string",
      value: "sft,rft,sft_data|none",
      help: "The compute-matched baselines to run after RL, each from the SFT warm start's weights, evaluated beside RL (eval.json baseline-sft, baseline-rft, baseline-sft_data).",
      default: "sft for the embedded model, none for --model",
    },
    "accelerate-config": {
      type: "string",
      value: "FILE",
      help: "An accelerate config (from `accelerate config`; examples for DDP, DeepSpeed and multi-node in docs/SCALING.md).",
    },
    workers: { ...WORKERS_OPTION, default: "up to 4, one per core" },
    ...SERVER_OPTIONS,
  },
  examples: [
    "fim-rlvr train lean-env",
    "fim-rlvr train out/dataset --algorithm dapo --steps 50 --simulator --out runs/dapo",
    "fim-rlvr train lean-env --out runs/dapo --resume",
    "fim-rlvr train lean-env --baseline sft --out runs/sft-baseline",
    "fim-rlvr train lean-env --compare sft,rft --seed 1",
    "fim-rlvr train lean-env --policy policy.json --timeout-ms 30000 --workers 8",
  ],
  async run({ values, positionals }) {
    const target = positionals[0];
    if (!target)
      throw new UsageError(
        "give the Lean workspace or dataset folder to train on, e.g. `fim-rlvr train lean-env`",
      );
    const targets =
      "a Lean workspace, a dataset folder written by `fim-rlvr export`, or a statement file (JSONL/Parquet) with --project";
    requireExisting(target, targets);
    const wrongFolder = folderTargetProblem(target);
    if (wrongFolder !== undefined) throw new UsageError(`${wrongFolder}; give ${targets}`);
    const reward = stringOption(values, "reward") ?? "binary";
    if (reward !== "binary" && reward !== "partial")
      throw new UsageError(`--reward must be binary or partial, got "${reward}"`);
    const resume = flagOption(values, "resume");
    const outFlag = stringOption(values, "out");
    if (resume && !outFlag) throw new UsageError("--resume needs --out RUN_DIR: the run folder to continue");
    const built = buildTrainConfig({
      config: stringOption(values, "config"),
      algorithm: stringOption(values, "algorithm"),
      algoConfig: stringOption(values, "algo-config"),
      model: stringOption(values, "model"),
      steps: stringOption(values, "steps"),
      groupSize: stringOption(values, "group-size"),
      batchSize: stringOption(values, "batch-size"),
      seed: stringOption(values, "seed"),
      loraR: stringOption(values, "lora-r"),
      loraAlpha: stringOption(values, "lora-alpha"),
      loraTargets: stringOption(values, "lora-targets"),
      loadIn4bit: flagOption(values, "load-in-4bit"),
      baseline: stringOption(values, "baseline"),
      compare: stringOption(values, "compare"),
    });
    if (built.kind === "error") throw new UsageError(built.message);
    const launcher = launcherChoice(values);
    const workers = stringOption(values, "workers");
    const python = stringOption(values, "python");
    const projectFlag = stringOption(values, "project");
    const datasetProject = projectForTarget(target, projectFlag);
    const checkedIn = projectCheckedIn(target, projectFlag);
    const { spec: verifier } = chooseVerifier(
      values,
      workers === undefined ? defaultSlots() : parseCount("--workers", workers, 1, 1),
      "rewards",
      process.env,
      checkedIn,
    );
    // Last, after every usage check: a folder made here is this run's (removed again if it fails to start).
    const folder = outFlag !== undefined ? givenRunFolder(outFlag) : claimRunFolder("runs");
    const runDir = folder.path;
    const imported = await statementTarget(target, projectFlag, runDir, resume, verifier);
    if (imported.kind === "error") {
      discardUnstarted(folder);
      process.stderr.write(`fim-rlvr train: ${imported.message}\n`);
      return 1;
    }

    const progress = progressReporter();
    const abort = new AbortController();
    let interrupts = 0;
    let stopSession: (() => Promise<void>) | undefined;
    const onSignal = () => {
      interrupts++;
      if (interrupts > 1) {
        process.stderr.write(
          "\nfim-rlvr train: interrupted again; exiting without waiting for the checkpoint\n",
        );
        process.exit(130);
      }
      progress.finish();
      process.stderr.write(
        "\nfim-rlvr train: interrupted; asking the trainer to checkpoint and stop (Ctrl-C again to quit at once)\n",
      );
      abort.abort();
      void stopSession?.();
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    try {
      const started = await startTraining(
        {
          target: imported.target,
          ...(datasetProject ? { project: datasetProject } : {}),
          runDir,
          config: built.config,
          reward,
          verifier,
          resume,
          launcher,
          ...(python ? { python } : {}),
          split: miningSplit(values),
          signal: abort.signal,
        },
        progress,
      );
      if (started.kind === "error") {
        progress.finish();
        discardUnstarted(folder);
        if (abort.signal.aborted) {
          process.stderr.write("fim-rlvr train: interrupted before training started; nothing was trained\n");
          return 130;
        }
        process.stderr.write(
          `fim-rlvr train: ${started.message}\n${started.hint ? `  ${started.hint}\n` : ""}`,
        );
        return 1;
      }
      stopSession = () => started.session.stop();
      if (abort.signal.aborted) void stopSession();
      const outcome = await started.session.done;
      progress.finish();
      const rel = relative(process.cwd(), runDir) || ".";
      const argv = process.argv.slice(2).filter((a) => a !== "--resume");
      const resumeCommand = `${invocation()} ${argv.map(shellQuote).join(" ")}${outFlag ? "" : ` --out ${shellQuote(rel)}`} --resume`;
      return reportOutcome(outcome, resumeCommand, built.config.baseline ?? false);
    } finally {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    }
  },
};
