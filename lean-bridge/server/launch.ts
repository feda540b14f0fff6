/**
 * How a Lean server is started: the default `lake serve` with the flags verification needs, a user's own
 * command line, or the simulator. Resource limits and the sandbox (sandbox.ts) wrap whatever command is chosen.
 */
import { existsSync, readFileSync, realpathSync } from "node:fs";
import { basename, delimiter, join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { LaunchSpec } from "./leanServer";
import { sandboxed } from "./sandbox";

export interface Limits {
  /** Lean's `-M` (MB) for the default command. */
  memoryMb: number;
  /** RLIMIT_CPU in seconds for the server and its workers (through `prlimit`), 0 for none. */
  cpuSeconds: number;
  /** Run inside the sandbox (sandbox.ts) when `bwrap` is installed. */
  sandbox: boolean;
}

export const DEFAULT_LIMITS: Limits = { memoryMb: 8192, cpuSeconds: 0, sandbox: true };

export type ServerChoice =
  | { kind: "lake" }
  | { kind: "command"; commandLine: string }
  | { kind: "simulator"; oracle?: string; extraArgs?: string[] };

export type LaunchResult =
  /** `warning`: what the caller must say before it goes on (the sandbox asked for and not there). */
  { kind: "ok"; spec: LaunchSpec; warning?: string } | { kind: "error"; message: string };

/** Said when the sandbox is on but bubblewrap is missing: candidates' code then runs with the verifier's rights. */
export const SANDBOX_MISSING_WARNING =
  "fim-rlvr: WARNING: bubblewrap (`bwrap`) is not installed, so Lean runs WITHOUT the sandbox: code a candidate " +
  "runs at elaboration time can write the workspace's .olean files and the kernel gate's files, signal the " +
  "verifier and use the network. Install it (apt-get install bubblewrap), or pass --no-sandbox to say you mean it.";

export function which(program: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (program.includes("/")) return existsSync(program) ? program : undefined;
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, program);
    if (existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Splits a command line like a POSIX shell does for words and quotes (no expansions). */
export function splitCommandLine(line: string): string[] {
  const words: string[] = [];
  let current = "";
  let inWord = false;
  let quote: '"' | "'" | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (quote) {
      if (c === quote) quote = undefined;
      else if (c === "\\" && quote === '"' && i + 1 < line.length) current += line[++i];
      else current += c;
    } else if (c === '"' || c === "'") {
      quote = c;
      inWord = true;
    } else if (c === "\\" && i + 1 < line.length) {
      current += line[++i];
      inWord = true;
    } else if (/\s/.test(c)) {
      if (inWord) words.push(current);
      current = "";
      inWord = false;
    } else {
      current += c;
      inWord = true;
    }
  }
  if (inWord) words.push(current);
  return words;
}

/** The command that runs the `simulator` subcommand: this very program when it is the bundled CLI. */
export function simulatorCommand(): string[] {
  const self = typeof __filename === "string" ? __filename : "";
  if (basename(self) === "cli.js") return [process.execPath, self, "simulator"];
  const root = packageRoot(self);
  const source = join(root, "lean-bridge", "cli", "main.ts");
  const bundled = join(root, "dist", "cli.js");
  // Run from TypeScript sources (tests) through tsx; from any other bundle, through the built CLI.
  // tsx is named by path: `--import tsx` would resolve from the server's cwd, the Lean project.
  const tsx = join(root, "node_modules", "tsx", "dist", "loader.mjs");
  if (self.endsWith(".ts") && existsSync(source) && existsSync(tsx))
    return [process.execPath, "--import", pathToFileURL(tsx).href, source, "simulator"];
  return [process.execPath, existsSync(bundled) ? bundled : source, "simulator"];
}

/**
 * The folder holding this package's package.json, searched upwards from `from`: the source checkout (it has
 * lean-bridge/) or an installed extension (the .vsix ships dist/cli.js, not the sources).
 */
export function packageRoot(from: string): string {
  let dir = resolve(from, "..");
  for (let k = 0; k < 8; k++) {
    const isPackage = existsSync(join(dir, "lean-bridge")) || existsSync(join(dir, "dist", "cli.js"));
    if (existsSync(join(dir, "package.json")) && isPackage) return dir;
    dir = resolve(dir, "..");
  }
  return process.cwd();
}

/** How to install Lean, as README.md's "With real Lean" says it (one place for every message that needs it). */
export const INSTALL_LEAN =
  "curl -sSfL https://raw.githubusercontent.com/leanprover/elan/master/elan-init.sh | sh -s -- -y --default-toolchain none";

export const LEAN_MISSING_MESSAGE =
  "Lean was not found: `lake` is not on PATH.\n" +
  `Install Lean with elan: ${INSTALL_LEAN}\n` +
  "then open a new shell (or `source ~/.elan/env`), or pass --simulator to use the Lean server simulator (dry run, not Lean).";

/**
 * Lean's server waits `server.reportDelayMs` (200 ms by default; an option only the command line can set)
 * before it publishes what a file worker has found, so that an editor does not flicker while its user types. A
 * verifier only ever waits for those reports, so every Lean server command it runs, a user's `--server`
 * included, sets the delay to 0. A command that is not `lean --server` or `lake serve` (a wrapper script, the
 * simulator) is left as it is: its flags cannot be known. A delay the command sets itself is kept.
 */
export const IMMEDIATE_REPORTS_FLAG = "-Dserver.reportDelayMs=0";

export function withImmediateReports(command: readonly string[]): string[] {
  if (command.some((word) => word.startsWith("-Dserver.reportDelayMs"))) return [...command];
  const program = basename(command[0] ?? "");
  if (program === "lean" && command.includes("--server")) return [...command, IMMEDIATE_REPORTS_FLAG];
  if (program === "lake" && command[1] === "serve")
    // `lake serve` passes the words after `--` on to `lean --server`.
    return command.includes("--")
      ? [...command, IMMEDIATE_REPORTS_FLAG]
      : [...command, "--", IMMEDIATE_REPORTS_FLAG];
  return [...command];
}

export function buildLaunch(
  choice: ServerChoice,
  projectRoot: string,
  limits: Limits = DEFAULT_LIMITS,
  env: NodeJS.ProcessEnv = process.env,
): LaunchResult {
  let command: string[];
  switch (choice.kind) {
    case "lake": {
      if (!which("lake", env)) return { kind: "error", message: LEAN_MISSING_MESSAGE };
      // Flags after `--` go to `lean --server`, whose watchdog passes them on to every file worker.
      command = ["lake", "serve", "--", IMMEDIATE_REPORTS_FLAG, `-M${limits.memoryMb}`];
      break;
    }
    case "command":
      command = splitCommandLine(choice.commandLine);
      if (command.length === 0) return { kind: "error", message: "--server was given an empty command line" };
      if (!which(command[0]!, env) && command[0] !== "fim-rlvr")
        return { kind: "error", message: `--server: \`${command[0]}\` was not found on PATH` };
      if (command[0] === "fim-rlvr" && !which("fim-rlvr", env))
        command = [...simulatorCommand().slice(0, -1), ...command.slice(1)];
      command = withImmediateReports(command);
      break;
    case "simulator":
      command = [
        ...simulatorCommand(),
        ...(choice.oracle ? ["--oracle", choice.oracle] : []),
        ...(choice.extraArgs ?? []),
      ];
      break;
  }
  const wrapped = limited(command, projectRoot, limits, env);
  return {
    kind: "ok",
    spec: { command: wrapped.command, cwd: projectRoot, env },
    ...(wrapped.warning ? { warning: wrapped.warning } : {}),
  };
}

/**
 * A server command under the CPU limit (when `prlimit` exists) and inside the sandbox (when `bwrap` does);
 * `warning`: the sandbox was asked for and bubblewrap is missing. `extraReadable`: folders the sandbox must show
 * (read-only) besides the project, the toolchain and this package.
 */
export function limited(
  command: string[],
  projectRoot: string,
  limits: Limits,
  env: NodeJS.ProcessEnv = process.env,
  extraReadable: readonly string[] = [],
): { command: string[]; warning?: string } {
  if (limits.cpuSeconds > 0 && which("prlimit", env))
    command = ["prlimit", `--cpu=${limits.cpuSeconds}`, "--", ...command];
  if (!limits.sandbox) return { command };
  if (!which("bwrap", env)) return { command, warning: SANDBOX_MISSING_WARNING };
  // The server and its workers write nothing: the check documents travel over LSP, never to disk. This
  // package is shown to it wherever it lives (the simulator, and `fim-rlvr` as a server, run from it), and so
  // is a Lean the caller names that lives in a hidden folder (the embedded Lean's install under the home).
  const self = packageRoot(typeof __filename === "string" ? __filename : process.cwd());
  const modules = join(self, "node_modules");
  const readable = [self, ...(existsSync(modules) ? [realpathSync(modules)] : []), ...extraReadable];
  return { command: sandboxed(command, projectRoot, { env, readable }) };
}

/** The toolchain a project pins, e.g. "leanprover/lean4:v4.24.0", if any. */
export function readToolchain(projectRoot: string): string | undefined {
  try {
    return readFileSync(join(projectRoot, "lean-toolchain"), "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}
