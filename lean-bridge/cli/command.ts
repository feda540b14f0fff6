/**
 * The registry shape of `fim-rlvr` subcommands. Each command declares its options once, with their help
 * text and defaults: the same table feeds Node's strict argument parser and the `--help` page, so the two
 * can never spell an option differently. Adding a command is one `CliCommand` value and one line in
 * main.ts's `COMMANDS` list.
 */
import { parseArgs } from "node:util";
import { UsageError } from "./usage";

export interface OptionDef {
  type: "string" | "boolean";
  /** Placeholder for the value in help (`N`, `FILE`, `binary|partial`); string options only. */
  value?: string;
  /** One line (or a few) saying what the option does. */
  help: string;
  /** The default, as the user would type it; shown as "(default: …)". */
  default?: string;
  /** Shown under "Advanced options" instead of "Options" (test and tuning knobs). */
  advanced?: boolean;
  /** A one-letter alias (`-n` for `--samples`), where a contract names the short form. */
  short?: string;
}

export type OptionDefs = Readonly<Record<string, OptionDef>>;

/** Values parsed from argv: strings for string options, booleans for flags, absent when not given. */
export type ParsedValues = Record<string, string | boolean | undefined>;

export interface ParsedArgs {
  values: ParsedValues;
  positionals: string[];
}

export interface CliCommand {
  name: string;
  /** One line for the overview (`fim-rlvr --help`). */
  summary: string;
  /** What follows `fim-rlvr NAME` in the synopsis, e.g. "WORKSPACE --out DIR [options]". */
  synopsis: string;
  /** A few sentences after the synopsis: what the command does, what it writes, exit codes. */
  description: string;
  options: OptionDefs;
  /** Positional arguments, if the command takes any (otherwise a positional is a usage error). */
  positionals?: { name: string; help: string; max: number };
  /** At least one complete command line a user can copy. */
  examples: string[];
  run(args: ParsedArgs): Promise<number>;
}

const HELP_OPTION: OptionDef = { type: "boolean", help: "Show this help and exit." };

/** The string/boolean value of an option, typed for the common cases. */
export function stringOption(values: ParsedValues, name: string): string | undefined {
  const v = values[name];
  return typeof v === "string" ? v : undefined;
}

export function flagOption(values: ParsedValues, name: string): boolean {
  return values[name] === true;
}

export type ParseOutcome = { kind: "help" } | { kind: "args"; args: ParsedArgs };

/**
 * Parses argv strictly against the command's table (unknown options and stray positionals are usage
 * errors). `--help`/`-h` anywhere before `--` wins over everything else, including missing values.
 */
export function parseCommandArgs(command: CliCommand, argv: string[]): ParseOutcome {
  const dashDash = argv.indexOf("--");
  const flags = dashDash === -1 ? argv : argv.slice(0, dashDash);
  if (flags.includes("--help") || flags.includes("-h")) return { kind: "help" };
  const options: Record<string, { type: "string" | "boolean"; short?: string }> = {};
  for (const [name, def] of Object.entries(command.options))
    options[name] = def.short ? { type: def.type, short: def.short } : { type: def.type };
  let parsed: { values: Record<string, unknown>; positionals: string[] };
  try {
    parsed = parseArgs({
      args: joinNegativeValues(argv, command.options),
      options,
      strict: true,
      allowPositionals: true,
    });
  } catch (error) {
    throw new UsageError(parseErrorMessage(error, command));
  }
  const max = command.positionals?.max ?? 0;
  if (parsed.positionals.length > max)
    throw new UsageError(
      max === 0
        ? `unexpected argument "${parsed.positionals[0]}" (this command takes only options)`
        : `too many arguments: ${parsed.positionals.join(" ")} (at most ${max}: ${command.positionals!.name})`,
    );
  return { kind: "args", args: { values: parsed.values as ParsedValues, positionals: parsed.positionals } };
}

/**
 * `--steps -3` as `--steps=-3`: Node's parser reads a value that starts with a dash as a missing value ("argument
 * is ambiguous"), so a negative number would get a parser message where `--steps=-3` gets the option's own check.
 * Only numbers are joined: `--candidate -x` still asks for the `=` form, since `-x` may be a mistyped option.
 */
function joinNegativeValues(argv: string[], defs: OptionDefs): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") return [...out, ...argv.slice(i)];
    const next = argv[i + 1];
    const def = arg.startsWith("--") ? defs[arg.slice(2)] : undefined;
    if (def?.type === "string" && next !== undefined && /^-(\d|\.\d)/.test(next)) {
      out.push(`${arg}=${next}`);
      i++;
    } else out.push(arg);
  }
  return out;
}

/** Node's parser messages name the problem; add what to do about it. */
function parseErrorMessage(error: unknown, command: CliCommand): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = error instanceof Error && "code" in error ? String(error.code) : "";
  const unknown = /Unknown option '([^']+)'/.exec(message);
  if (unknown) {
    const known = Object.keys(command.options).map((o) => `--${o}`);
    const near = known.filter((k) => closeTo(k, unknown[1]!));
    return `unknown option ${unknown[1]}${near.length ? ` (did you mean ${near.join(" or ")}?)` : ""}`;
  }
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE")
    return message.replace(/^Option '([^']+)'.*argument missing$/, "option $1 needs a value");
  return message;
}

/** Whether two option names are a likely typo of each other (shared prefix or edit distance ≤ 2). */
function closeTo(a: string, b: string): boolean {
  if (a.startsWith(b) || b.startsWith(a)) return Math.min(a.length, b.length) >= 4;
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      d[i]![j] = Math.min(
        d[i - 1]![j]! + 1,
        d[i]![j - 1]! + 1,
        d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
  return d[a.length]![b.length]! <= 2;
}

/** Help pages wrap at this width, like git's and cargo's. */
const WIDTH = 100;

function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  for (const paragraph of text.split("\n")) {
    let line = "";
    for (const word of paragraph.split(" ")) {
      if (line && line.length + 1 + word.length > width) {
        lines.push(line);
        line = word;
      } else line = line ? `${line} ${word}` : word;
    }
    lines.push(line);
  }
  return lines;
}

function optionHead(name: string, def: OptionDef): string {
  return `  ${def.short ? `-${def.short}, ` : ""}--${name}${def.type === "string" ? ` ${def.value ?? "VALUE"}` : ""}`;
}

function optionLines(defs: [string, OptionDef][], width: number): string[] {
  const pad = " ".repeat(width);
  return defs.map(([name, def]) => {
    const head = optionHead(name, def);
    const text = def.help + (def.default !== undefined ? ` (default: ${def.default})` : "");
    const [first, ...rest] = wrap(text, WIDTH - width);
    const firstLine = head.length + 2 > width ? `${head}\n${pad}${first}` : head.padEnd(width) + first;
    return [firstLine, ...rest.map((r) => pad + r)].join("\n");
  });
}

/** The `fim-rlvr help NAME` page. */
export function commandHelp(command: CliCommand): string {
  const entries = Object.entries({ ...command.options, help: HELP_OPTION });
  const main = entries.filter(([, d]) => !d.advanced);
  const advanced = entries.filter(([, d]) => d.advanced);
  const width = Math.min(30, Math.max(...entries.map(([n, d]) => optionHead(n, d).length)) + 2);
  const parts = [
    `Usage: fim-rlvr ${command.name} ${command.synopsis}`,
    "",
    command.description,
    ...(command.positionals
      ? ["", "Arguments:", `  ${command.positionals.name}  ${command.positionals.help}`]
      : []),
    "",
    "Options:",
    ...optionLines(main, width),
    ...(advanced.length ? ["", "Advanced options:", ...optionLines(advanced, width)] : []),
    "",
    command.examples.length > 1 ? "Examples:" : "Example:",
    ...command.examples.map((e) => `  ${e}`),
  ];
  return parts.join("\n");
}

/** The overview page (`fim-rlvr --help`). */
export function overviewHelp(commands: readonly CliCommand[], version: string): string {
  const width = Math.max(...commands.map((c) => c.name.length)) + 2;
  return [
    `fim-rlvr ${version} — fill-in-the-middle RL data and verification for Lean 4`,
    "",
    "Usage: fim-rlvr COMMAND [options]",
    "       fim-rlvr help COMMAND     (or fim-rlvr COMMAND --help)",
    "       fim-rlvr --version",
    "",
    "Commands:",
    ...commands.map((c) => `  ${c.name.padEnd(width)}${c.summary}`),
    "",
    "Holes are LSP positions: 0-based line, character counted in UTF-16 code units.",
    "Without --server or --simulator, Lean is started with `lake serve` from PATH; without lake, with the",
    "embedded Lean 4.35.0 where it can judge every file of the project (prelude files; --lean embedded asks for it).",
    "The simulator is a stand-in for Lean (dry run); verdicts always name the verifier that made them.",
  ].join("\n");
}
