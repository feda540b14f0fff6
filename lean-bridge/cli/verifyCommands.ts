/** `fim-rlvr verify`: one candidate in one hole, checked by Lean (or the simulator). */
import { existsSync, statSync } from "node:fs";
import { resolve } from "node:path";
import { readSource } from "../dataset/workspace";
import { type CliCommand, flagOption, stringOption } from "./command";
import { stopOnInterrupt } from "./interrupt";
import { SERVER_OPTIONS, openPool, requireProject } from "./pool";
import { UsageError, parseHole } from "./usage";
import { describe, rewardMode, verdictJson } from "./verdictOutput";

/** Files above this size are not source a user would verify a hole in; the check says so rather than hang. */
const MAX_SOURCE_BYTES = 64 * 1024 * 1024;

/** Refuses files that are not Lean source, saying what was found (Lean would report nothing useful). */
export function requireLeanSource(projectRoot: string, file: string): void {
  const path = resolve(projectRoot, file);
  if (!existsSync(path)) throw new UsageError(`--file ${file}: no such file in ${projectRoot}`);
  if (!statSync(path).isFile()) throw new UsageError(`--file ${file}: not a file`);
  if (!file.endsWith(".lean"))
    throw new UsageError(`--file ${file}: not a Lean source file (expected a .lean file)`);
  const read = readSource(projectRoot, path, MAX_SOURCE_BYTES);
  if (read.kind === "skipped")
    throw new UsageError(`--file ${file}: not Lean source: ${read.skipped.reason}`);
}

export const verifyCommand: CliCommand = {
  name: "verify",
  summary: "Check one candidate proof in one hole of a Lean file",
  synopsis: "--project DIR --file REL.lean --hole L:C-L:C --candidate TEXT [options]",
  description: [
    "Replaces the hole (an LSP range) in the file by the candidate and asks the Lean server whether the",
    "declaration is now proved. Prints the verdict (proved, failed, incomplete, rejected, timeout, crashed)",
    "with its reward and the verifier that made it. Exit 0 for any verdict, 2 for bad usage, 130 on Ctrl-C.",
  ].join("\n"),
  options: {
    project: { type: "string", value: "DIR", help: "Root of the Lean project (where lean-toolchain is)." },
    file: { type: "string", value: "REL.lean", help: "The Lean file, relative to --project." },
    hole: {
      type: "string",
      value: "L:C-L:C",
      help: "The hole: 0-based line:character start and end (characters in UTF-16 code units).",
    },
    candidate: { type: "string", value: "TEXT", help: "The proof text to put in the hole." },
    json: { type: "boolean", help: "Print the verdict as one JSON object instead of text." },
    ...SERVER_OPTIONS,
  },
  examples: [
    "fim-rlvr verify --project lean-env --file FimExamples/Arith.lean --hole 8:2-8:7 --candidate omega --simulator",
  ],
  async run({ values }) {
    const projectRoot = requireProject(stringOption(values, "project"));
    const file = stringOption(values, "file");
    const holeText = stringOption(values, "hole");
    const candidate = stringOption(values, "candidate");
    if (!file) throw new UsageError("--file REL.lean is required: the file, relative to --project");
    if (!holeText) throw new UsageError("--hole L:C-L:C is required (0-based line:character, UTF-16)");
    if (candidate === undefined)
      throw new UsageError("--candidate TEXT is required: the proof text to put in the hole");
    requireLeanSource(projectRoot, file);
    const hole = parseHole(holeText);
    const mode = rewardMode(stringOption(values, "reward"));
    const pool = await openPool(projectRoot, values, 1);
    const guard = stopOnInterrupt("verify", pool);
    process.stderr.write(`verify: checking ${file} ${holeText} — verifier: ${pool.identity.label}\n`);
    try {
      const verdict = await pool.verify({ file, hole }, candidate);
      if (guard.interrupted) return 130;
      if (verdict.kind === "rejected" && verdict.rule === "bad-task") throw new UsageError(verdict.reason);
      const json = verdictJson(verdict, mode);
      process.stdout.write(
        flagOption(values, "json")
          ? JSON.stringify(json) + "\n"
          : describe(verdict, json.reward as number) + "\n",
      );
      return 0;
    } finally {
      guard.release();
      await pool.stop();
    }
  },
};
