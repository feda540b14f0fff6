/**
 * The `fim-rlvr` command line. Every subcommand is one `CliCommand` (see command.ts) listed in `COMMANDS`;
 * its option table drives both the parser and its `--help` page. Usage errors exit 2.
 */
import { verifyBatchCommand } from "./batchCommand";
import { type CliCommand, commandHelp, overviewHelp, parseCommandArgs } from "./command";
import { evalCommand } from "./evalCommand";
import { exportCommand } from "./exportCommand";
import { exportModelCommand } from "./exportModelCommand";
import { filterCommand } from "./filterCommand";
import { importCommand } from "./importCommand";
import { serveCommand } from "./serveCommand";
import { simulatorCommand } from "./simulatorCommand";
import { algorithmsCommand } from "./algorithmsCommand";
import { trainCommand } from "./trainCommand";
import { UsageError } from "./usage";
import { verifyCommand } from "./verifyCommands";

/** The subcommands, in the order `fim-rlvr --help` lists them. Register a new command by adding it here. */
export const COMMANDS: CliCommand[] = [
  verifyCommand,
  verifyBatchCommand,
  exportCommand,
  importCommand,
  serveCommand,
  simulatorCommand,
  trainCommand,
  algorithmsCommand,
  exportModelCommand,
  evalCommand,
  filterCommand,
];

/** Set by the bundler from package.json (esbuild `define`); "dev" when run from source. */
declare const FIM_RLVR_VERSION: string | undefined;
export const VERSION = typeof FIM_RLVR_VERSION === "string" ? FIM_RLVR_VERSION : "dev";

function find(name: string): CliCommand | undefined {
  return COMMANDS.find((c) => c.name === name);
}

function unknownCommand(name: string): number {
  process.stderr.write(
    `fim-rlvr: unknown command "${name}" (commands: ${COMMANDS.map((c) => c.name).join(", ")})\n` +
      "Run `fim-rlvr --help` for usage.\n",
  );
  return 2;
}

export async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined) {
    process.stderr.write(overviewHelp(COMMANDS, VERSION) + "\n");
    return 2;
  }
  if (name === "--version" || name === "-V" || name === "version") {
    process.stdout.write(`fim-rlvr ${VERSION}\n`);
    return 0;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    const topic = rest[0];
    if (topic === undefined || topic === "--help" || topic === "-h") {
      process.stdout.write(overviewHelp(COMMANDS, VERSION) + "\n");
      return 0;
    }
    const command = find(topic);
    if (!command) return unknownCommand(topic);
    process.stdout.write(commandHelp(command) + "\n");
    return 0;
  }
  if (name.startsWith("-")) {
    process.stderr.write(
      `fim-rlvr: unknown option ${name}; the command comes first.\nRun \`fim-rlvr --help\` for usage.\n`,
    );
    return 2;
  }
  const command = find(name);
  if (!command) return unknownCommand(name);
  try {
    const parsed = parseCommandArgs(command, rest);
    if (parsed.kind === "help") {
      process.stdout.write(commandHelp(command) + "\n");
      return 0;
    }
    return await command.run(parsed.args);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`fim-rlvr ${name}: ${error.message}\nRun \`fim-rlvr help ${name}\` for usage.\n`);
      return 2;
    }
    process.stderr.write(
      `fim-rlvr ${name}: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n` +
        "This is a bug in fim-rlvr; please report it with the command line and this message.\n",
    );
    return 1;
  }
}

// Run only as the program (the bundle's entry), not when a test imports the command table.
if (require.main === module)
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`fim-rlvr: ${String(error)}\n`);
      process.exitCode = 1;
    },
  );
