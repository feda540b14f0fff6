/** `fim-rlvr simulator`: the Lean server simulator on stdin/stdout (a test double and dry run, not Lean). */
import { WORKSPACE_ORACLE, resolveOracle } from "../simulator/reference";
import { runSimulator } from "../simulator/server";
import { type CliCommand, flagOption, stringOption } from "./command";
import { UsageError, parseCount } from "./usage";

export const simulatorCommand: CliCommand = {
  name: "simulator",
  summary: "Run the Lean server simulator on stdin/stdout (dry run, not Lean)",
  synopsis: "[options]",
  description: [
    "Speaks the Lean server's protocol (LSP + Lean's extensions) on stdin/stdout, with a cost model. It accepts",
    "a proof only when it equals the workspace's own proof (modulo whitespace and comments) or an alternative",
    `listed in --oracle (default: the workspace's own ${WORKSPACE_ORACLE}, when it has one; its verdicts name it).`,
    "Give it to --server of any command, or use --simulator there. Runs until its input closes or `exit` arrives.",
  ].join("\n"),
  options: {
    oracle: {
      type: "string",
      value: "FILE",
      help: 'Accepted alternatives and axioms: {"alternatives": {"Ns.name": ["by omega"]}, "axioms": {…}}.',
      default: `${WORKSPACE_ORACLE} in the workspace, if any`,
    },
    "header-ms": {
      type: "string",
      value: "N",
      help: "Simulated time to load a document's imports.",
      default: "0",
    },
    "decl-ms": {
      type: "string",
      value: "N",
      help: "Simulated time to elaborate one declaration.",
      default: "0",
    },
    "edit-ms": {
      type: "string",
      value: "N",
      help: "Simulated fixed time of a document change, besides the declarations it elaborates.",
      default: "0",
    },
    faults: {
      type: "boolean",
      help: "Honour sim:crash, sim:hang, sim:exit, sim:malformed, sim:throw markers (tests only).",
      advanced: true,
    },
  },
  examples: [
    "fim-rlvr simulator --oracle oracle.json --decl-ms 200   # speaks LSP on stdin/stdout",
    'fim-rlvr verify-batch --project lean-env --input in.jsonl --out out.jsonl --server "fim-rlvr simulator --decl-ms 50"',
  ],
  run({ values }) {
    const explicit = stringOption(values, "oracle");
    const oracle = resolveOracle(process.cwd(), explicit);
    if (oracle.kind === "error")
      throw new UsageError(
        `${explicit ? "--oracle" : `the workspace's ${WORKSPACE_ORACLE}`}: ${oracle.message} (fix or remove it)`,
      );
    runSimulator(process.stdin, process.stdout, {
      cwd: process.cwd(),
      oracle: oracle.resolved.oracle,
      ...(oracle.resolved.source ? { oracleSource: oracle.resolved.source } : {}),
      headerMs: parseCount("--header-ms", stringOption(values, "header-ms"), 0),
      declMs: parseCount("--decl-ms", stringOption(values, "decl-ms"), 0),
      editMs: parseCount("--edit-ms", stringOption(values, "edit-ms"), 0),
      faults: flagOption(values, "faults"),
    });
    return new Promise<number>(() => undefined); // Runs until its input closes or `exit` arrives.
  },
};
