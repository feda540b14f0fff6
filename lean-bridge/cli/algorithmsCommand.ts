/** `fim-rlvr algorithms`: the trainer's own list of RL algorithms, with their papers' defaults. */
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { managedVenvDir } from "../train/python";
import { defaultTrainerRoot } from "../train/session";
import { type CliCommand, flagOption, stringOption } from "./command";

interface AlgorithmInfo {
  name: string;
  paper?: string;
  description: string;
  defaults: Record<string, unknown>;
  differs_from_grpo?: Record<string, unknown>;
  /** What a run on the embedded model uses instead of the paper's defaults, and where that is set. */
  embedded_model?: Record<string, unknown>;
  embedded_model_source?: string | null;
}

export const algorithmsCommand: CliCommand = {
  name: "algorithms",
  summary: "List the RL algorithms with a one-line description and their defaults",
  synopsis: "[--python PATH] [--json]",
  description: [
    "Asks the trainer (python -m fim_rlvr.algorithms --json) for each algorithm's description and its",
    "paper's defaults, so the list is the one the trainer runs. Needs the trainer's Python: --python, or the",
    "managed environment that `fim-rlvr train` creates on first use.",
  ].join("\n"),
  options: {
    python: {
      type: "string",
      value: "PATH",
      help: "Python interpreter with the trainer's dependencies.",
      default: "the managed venv",
    },
    json: { type: "boolean", help: "Print the trainer's JSON as is." },
  },
  examples: ["fim-rlvr algorithms", "fim-rlvr algorithms --python trainer/.venv/bin/python --json"],
  async run({ values }) {
    const trainerRoot = defaultTrainerRoot();
    let python = stringOption(values, "python");
    if (!python) {
      const managed = join(managedVenvDir(trainerRoot), "bin", "python");
      if (!existsSync(managed)) {
        process.stderr.write(
          "fim-rlvr algorithms: no trainer Python yet. Pass --python PATH (an interpreter with torch, e.g. after\n" +
            "`pip install torch==2.13.0 transformers tokenizers pyyaml python-lsp-jsonrpc`), or run `fim-rlvr train` once:\n" +
            `it creates the managed environment in ${managedVenvDir(trainerRoot)}.\n`,
        );
        return 1;
      }
      python = managed;
    }
    const ran = spawnSync(python, ["-m", "fim_rlvr.algorithms", "--json"], {
      encoding: "utf8",
      env: { ...process.env, PYTHONPATH: [trainerRoot, process.env.PYTHONPATH].filter(Boolean).join(":") },
      timeout: 120_000,
    });
    if (ran.status !== 0) {
      const hint = ran.error ? "\n  Give a Python 3.10+ interpreter with --python." : "";
      process.stderr.write(
        `fim-rlvr algorithms: running ${python} -m fim_rlvr.algorithms failed (${ran.error?.message ?? `exit code ${ran.status}`})` +
          `${ran.stderr ? `:\n${ran.stderr.trim().split("\n").slice(-8).join("\n")}` : ""}${hint}\n`,
      );
      return 1;
    }
    if (flagOption(values, "json")) {
      process.stdout.write(ran.stdout);
      return 0;
    }
    let list: AlgorithmInfo[];
    try {
      list = JSON.parse(ran.stdout) as AlgorithmInfo[];
    } catch {
      process.stderr.write(
        "fim-rlvr algorithms: the trainer's answer was not JSON; run with --json to see it\n",
      );
      return 1;
    }
    const width = Math.max(...list.map((a) => a.name.length)) + 2;
    const lines = list.flatMap((a) => {
      // The clip range and KL weight of every objective, what its paper changes, and options its line names.
      const shown = new Set(["epsilon", "epsilon_high", "beta", ...Object.keys(a.differs_from_grpo ?? {})]);
      for (const key of Object.keys(a.defaults)) if (a.description.includes(key)) shown.add(key);
      const defaults = [...shown]
        .filter((k) => k in a.defaults && a.defaults[k] !== null)
        .map((k) => `${k}=${JSON.stringify(a.defaults[k])}`)
        .join(", ");
      const embedded = Object.entries(a.embedded_model ?? {})
        .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
        .join(", ");
      return [
        `${a.name.padEnd(width)}${a.description}`,
        ...(a.paper ? [`${" ".repeat(width)}paper: ${a.paper}`] : []),
        `${" ".repeat(width)}defaults: ${defaults}`,
        ...(embedded
          ? [
              `${" ".repeat(width)}on the embedded model (the quick start): ${embedded}, set in`,
              `${" ".repeat(width)}  ${a.embedded_model_source ?? "the trainer"}; a --model run uses the paper's`,
            ]
          : []),
      ];
    });
    process.stdout.write(
      lines.join("\n") +
        "\n\nChoose with `fim-rlvr train … --algorithm NAME`; override defaults with --algo-config JSON.\n",
    );
    return 0;
  },
};
