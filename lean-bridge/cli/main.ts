/** The `fim-rlvr` command line: dispatches to a subcommand and turns usage errors into exit code 2. */
import { parseArgs } from "node:util";
import { loadOracle } from "../simulator/reference";
import { runSimulator } from "../simulator/server";
import { USAGE, UsageError, parsePositiveInt } from "./usage";
import { verifyBatchCommand, verifyCommand } from "./verifyCommands";
import { exportCommand } from "./exportCommand";

async function simulatorCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      oracle: { type: "string" },
      "header-ms": { type: "string" },
      "decl-ms": { type: "string" },
      faults: { type: "boolean" },
    },
    strict: false,
  });
  const oracle = loadOracle(typeof values.oracle === "string" ? values.oracle : undefined);
  if (oracle.kind === "error") throw new UsageError(`--oracle: ${oracle.message}`);
  runSimulator(process.stdin, process.stdout, {
    cwd: process.cwd(),
    oracle: oracle.oracle,
    headerMs: parsePositiveInt("--header-ms", values["header-ms"] as string | undefined, 0),
    declMs: parsePositiveInt("--decl-ms", values["decl-ms"] as string | undefined, 0),
    faults: values.faults === true,
  });
  return new Promise<number>(() => undefined); // Runs until its input closes or `exit` arrives.
}

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  verify: verifyCommand,
  "verify-batch": verifyBatchCommand,
  export: exportCommand,
  simulator: simulatorCommand,
};

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(USAGE + "\n");
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`fim-rlvr: unknown command "${name}"\n\n${USAGE}\n`);
    return 2;
  }
  try {
    return await command(rest);
  } catch (error) {
    if (
      error instanceof UsageError ||
      (error instanceof TypeError && "code" in error && String(error.code).startsWith("ERR_PARSE_ARGS"))
    ) {
      process.stderr.write(`fim-rlvr ${name}: ${error.message}\nRun \`fim-rlvr --help\` for usage.\n`);
      return 2;
    }
    process.stderr.write(
      `fim-rlvr ${name}: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    return 1;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    process.stderr.write(`fim-rlvr: ${String(error)}\n`);
    process.exitCode = 1;
  },
);
