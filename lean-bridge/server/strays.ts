/**
 * Processes a candidate left behind in the verifier's sandbox. Code that runs at elaboration time (a
 * metaprogram, an `eval`-like elaborator with IO) can start processes from a Lean file worker; one that outlives
 * its check could kill or slow the checks after it (a sibling sample's), which then fail through no fault of
 * their own, a gain in a group-relative advantage. Two things keep that from happening:
 *  - each file worker runs in a Landlock domain of its own (`workerConfinementSource`, a launcher installed as
 *    Lean's `LEAN_WORKER_PATH`): it and what it starts cannot signal, trace or reach the server or another
 *    worker (Landlock's signal and abstract-socket scopes, ABI 6), and write only the sandbox's private /tmp;
 *  - after each check its worker's descendants are killed, and so is every process of the sandbox that is
 *    neither the server, its ancestors, a worker nor below a worker (an orphan some candidate left)
 *    (`sweepWorker`): a file worker starts no process of its own once its header is processed (Lake's
 *    `lake setup-file` runs before elaboration), so anything below it then is a candidate's.
 * Linux only (/proc); elsewhere the sweep finds nothing.
 */
import { readFileSync, readdirSync } from "node:fs";
import { LANDLOCK_C_DEFINITIONS } from "./landlockC";

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
 * The Lean server below the process `serverPid` started (the sandbox, Lake): the shallowest process whose
 * command line says `--server`. Shallowest, since a candidate's process can take any command line but
 * starts below a worker, deeper than the server.
 */
function leanServer(table: readonly ProcessEntry[], serverPid: number): ProcessEntry | undefined {
  const root = table.find((p) => p.pid === serverPid);
  return [...(root ? [root] : []), ...descendants(table, serverPid)].find((p) =>
    commandLine(p.pid)?.includes("--server"),
  );
}

/**
 * Lean's file worker for `uri`: a child of the server (the watchdog starts it as `WORKER --worker … URI`,
 * through the launcher, which becomes the worker). Only a child of the server counts: a candidate's process
 * below a worker may copy a worker's command line.
 */
function workerFor(
  table: readonly ProcessEntry[],
  server: ProcessEntry,
  uri: string,
): ProcessEntry | undefined {
  return table.find((p) => {
    if (p.ppid !== server.pid) return false;
    const argv = commandLine(p.pid);
    return argv !== undefined && argv[argv.length - 1] === uri && argv.includes("--worker");
  });
}

/**
 * Kills (SIGKILL: a candidate's process may ignore anything milder) every process below the file worker of
 * `uri` under the server process `serverPid`, and every orphan in the server's tree: a process that is not the
 * Lean server (`--server`), one of its ancestors up to `serverPid` (the sandbox, Lake), a worker (a child of
 * the server) or below a worker (a concurrent check's, swept when that check ends). Says which it killed.
 */
export function sweepWorker(serverPid: number, uri: string): { killed: number[] } {
  const table = processTable();
  const byPid = new Map(table.map((p) => [p.pid, p]));
  const server = leanServer(table, serverPid);
  if (!server) return { killed: [] };
  const doomed = new Set<number>();
  const worker = workerFor(table, server, uri);
  if (worker) for (const stray of descendants(table, worker.pid)) doomed.add(stray.pid);
  const kept = new Set<number>([server.pid]);
  for (let p: ProcessEntry | undefined = server; p && p.pid !== serverPid; p = byPid.get(p.ppid))
    kept.add(p.ppid);
  for (const p of descendants(table, server.pid)) kept.add(p.pid);
  for (const p of descendants(table, serverPid)) if (!kept.has(p.pid)) doomed.add(p.pid);
  const killed: number[] = [];
  for (const pid of doomed) {
    try {
      process.kill(pid, "SIGKILL");
      killed.push(pid);
    } catch {
      // Gone already.
    }
  }
  return { killed };
}

/**
 * The C source of the launcher Lean's server starts each file worker through (`LEAN_WORKER_PATH`): it confines
 * itself with Landlock, then runs the real `lean` (`lean`, fixed at build time so no environment variable can
 * redirect it) with the watchdog's arguments; the standard streams the watchdog speaks LSP on pass through.
 * Where Landlock cannot confine it (a kernel before ABI 6) it runs nothing and exits 3: the verifier probes it
 * before use and goes without it, saying so, rather than let every worker fail as if candidates crashed it.
 */
export function workerConfinementSource(lean: string): string {
  const literal = JSON.stringify(lean);
  return `/* Written by fim-rlvr (lean-bridge/server/strays.ts): each Lean file worker in a Landlock domain of its own. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <fcntl.h>

${LANDLOCK_C_DEFINITIONS}

static int allow(int ruleset, const char *path, uint64_t rights) {
    int fd = open(path, O_PATH | O_CLOEXEC);
    if (fd < 0) return errno == ENOENT ? 0 : -1;
    struct fim_path_beneath_attr rule = {rights, fd};
    long done = syscall(SYS_landlock_add_rule, ruleset, FIM_LANDLOCK_RULE_PATH_BENEATH, &rule, 0);
    close(fd);
    return done == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
    (void)argc;
    long abi = syscall(SYS_landlock_create_ruleset, NULL, 0, FIM_LANDLOCK_CREATE_RULESET_VERSION);
    if (abi < FIM_LANDLOCK_MIN_ABI) {
        fprintf(stderr, "fim-rlvr worker launcher: Landlock ABI 6 is not available (%ld)\\n", abi);
        return 3;
    }
    struct fim_ruleset_attr attr = {FIM_FS_WRITES, FIM_NET_TCP, FIM_SCOPES};
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0 || allow(ruleset, "/tmp", FIM_FS_WRITES) || allow(ruleset, "/dev/null", FIM_FS_WRITE_FILE | FIM_FS_TRUNCATE)
        || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
        fprintf(stderr, "fim-rlvr worker launcher: could not confine the worker: %s\\n", strerror(errno));
        return 3;
    }
    close(ruleset);
    argv[0] = (char *)${literal};
    execv(${literal}, argv);
    fprintf(stderr, "fim-rlvr worker launcher: cannot run %s: %s\\n", ${literal}, strerror(errno));
    return 127;
}
`;
}
