/**
 * Processes a candidate left behind in the verifier's sandbox. Code that runs at elaboration time (a
 * metaprogram, an `eval`-like elaborator with IO) can start processes from a Lean file worker; one that outlives
 * its check could kill or slow the checks after it (a sibling sample's), which then fail through no fault of
 * their own. Two things keep that from happening:
 *  - each file worker runs in a PID namespace of its own (`workerIsolationScript`, installed as Lean's
 *    `LEAN_WORKER_PATH`): what it starts cannot see or signal the server or another worker, and it dies with
 *    the worker, which is that namespace's first process (so orphans are re-parented to the worker, not away);
 *  - after each check its worker's descendants are killed (`sweepWorker`): a file worker starts no process of
 *    its own once its header is processed (Lake's `lake setup-file` runs before elaboration), so anything
 *    below it then is a candidate's.
 * Linux only (/proc); elsewhere the sweep finds nothing.
 */
import { readFileSync, readdirSync } from "node:fs";

interface ProcessEntry {
  pid: number;
  ppid: number;
}

/** Every process /proc shows, with its parent (an entry that vanished meanwhile is skipped). */
function processTable(): ProcessEntry[] {
  let names: string[];
  try {
    names = readdirSync("/proc");
  } catch {
    return [];
  }
  const out: ProcessEntry[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // The command name (field 2) is in parentheses and may hold spaces or parentheses: fields after the last ")".
      const after = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.push({ pid: Number(name), ppid: Number(after[1]) });
    } catch {
      // The process ended between readdir and read.
    }
  }
  return out;
}

/** A process's command line, or undefined once it has ended. */
function commandLine(pid: number): string[] | undefined {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    if (argv[argv.length - 1] === "") argv.pop();
    return argv;
  } catch {
    return undefined;
  }
}

/** The descendants of `root` in `table`, nearest first. */
function descendants(table: readonly ProcessEntry[], root: number): ProcessEntry[] {
  const children = new Map<number, ProcessEntry[]>();
  for (const p of table) {
    const list = children.get(p.ppid) ?? [];
    list.push(p);
    children.set(p.ppid, list);
  }
  const out: ProcessEntry[] = [];
  const queue = [root];
  const seen = new Set<number>([root]);
  while (queue.length > 0) {
    const pid = queue.shift()!;
    for (const child of children.get(pid) ?? []) {
      if (seen.has(child.pid)) continue;
      seen.add(child.pid);
      out.push(child);
      queue.push(child.pid);
    }
  }
  return out;
}

/**
 * Lean's file worker for `uri` below the server process `serverPid`: the watchdog starts it as
 * `WORKER --worker … URI`. Through the isolation script that command line is the script's and then the
 * namespace's first process's; the worker is the deepest of them (no other match runs below it).
 */
function workerFor(below: readonly ProcessEntry[], uri: string): ProcessEntry | undefined {
  const matches = below.filter((p) => {
    const argv = commandLine(p.pid);
    return argv !== undefined && argv[argv.length - 1] === uri && argv.includes("--worker");
  });
  const pids = new Set(matches.map((p) => p.pid));
  return matches.find((p) => !matches.some((q) => q.ppid === p.pid && pids.has(q.pid)));
}

export type SweepResult =
  | { kind: "swept"; killed: number[] }
  /** No worker for the document under the server (not yet started, or already ended): nothing to sweep. */
  | { kind: "no-worker" };

/**
 * Kills every process below the file worker of `uri` under the server process `serverPid` (SIGKILL: a
 * candidate's process may ignore anything milder), and says which it killed.
 */
export function sweepWorker(serverPid: number, uri: string): SweepResult {
  const table = processTable();
  const below = descendants(table, serverPid);
  const worker = workerFor(below, uri);
  if (!worker) return { kind: "no-worker" };
  const killed: number[] = [];
  for (const stray of descendants(table, worker.pid)) {
    try {
      process.kill(stray.pid, "SIGKILL");
      killed.push(stray.pid);
    } catch {
      // Gone already.
    }
  }
  return { kind: "swept", killed };
}

/**
 * The script Lean's server starts each file worker through (`LEAN_WORKER_PATH`): the real `lean` in a new user
 * and PID namespace (`unshare`, util-linux), as that namespace's first process, killed if the script's process
 * is. Arguments pass through unchanged; so do the standard streams the watchdog speaks LSP on.
 */
export function workerIsolationScript(lean: string): string {
  const quoted = `'${lean.replace(/'/g, `'\\''`)}'`;
  return [
    "#!/bin/sh",
    "# Written by fim-rlvr: each Lean file worker in a PID namespace of its own (lean-bridge/server/strays.ts).",
    `exec unshare --user --pid --fork --kill-child -- ${quoted} "$@"`,
    "",
  ].join("\n");
}
