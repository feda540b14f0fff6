/** `fim-rlvr serve` (dist/cli.js) as a child process, read as a user reads it: the lines up to "Ctrl-C". */
import { spawn, type ChildProcess } from "node:child_process";
import { join } from "node:path";
import { createInterface } from "node:readline";
import type { ServiceAddress } from "../../lean-bridge/serve/connection";
import { REPO } from "../helpers";

const CLI = join(REPO, "dist", "cli.js");

export interface Served {
  child: ChildProcess;
  /** What serve printed on stdout up to (and with) its "Ctrl-C to stop" line. */
  lines: string[];
  /** The address after "listening on", as printed; undefined when none was. */
  printedAddress: string | undefined;
  /** The exit code, once it has exited. */
  exited: Promise<number | null>;
}

/** Starts `serve ARGS` and reads its stdout until it says how to stop it (or ends). Kill `child` when done. */
export async function startServe(args: string[], env: NodeJS.ProcessEnv = process.env): Promise<Served> {
  const child = spawn(process.execPath, [CLI, "serve", ...args], { stdio: ["ignore", "pipe", "pipe"], env });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const lines: string[] = [];
  let printedAddress: string | undefined;
  for await (const line of createInterface({ input: child.stdout! })) {
    lines.push(line);
    printedAddress ??= /listening on (\S+)/.exec(line)?.[1];
    if (line.includes("Ctrl-C")) break;
  }
  return { child, lines, printedAddress, exited };
}

/** The `HOST:PORT` that serve prints after "listening on" (formatAddress), as a client's address. */
export function servedAddress(printed: string): ServiceAddress {
  const colon = printed.lastIndexOf(":");
  return {
    host: printed.slice(0, colon).replace(/^\[(.*)\]$/, "$1"),
    port: Number(printed.slice(colon + 1)),
  };
}
