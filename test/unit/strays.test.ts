/**
 * What a candidate's processes can do once its check has ended (lean-bridge/server/strays.ts): the sweep kills
 * what runs below the check's file worker and the orphans of the server's tree, never the server, its
 * ancestors or another worker; and the worker launcher confines what it runs so that it cannot signal its
 * parent (the server) nor write outside /tmp. Real processes and a real `cc` build; no Lean needed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sweepWorker, workerConfinementSource } from "../../lean-bridge/server/strays";
import { which } from "../../lean-bridge/server/launch";
import { REPO } from "../helpers";
import { tempDir } from "../tempDirs";
import { toolSkip } from "../toolSkip";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return existsSync(`/proc/${pid}`) && !/^State:\s+Z/m.test(readFileSync(`/proc/${pid}/status`, "utf8"));
  } catch {
    return false;
  }
};

/** Lines the fake server's script prints (pids), read until `count` have come. */
function readPids(child: ChildProcess, count: number): Promise<number[]> {
  return new Promise((resolve, reject) => {
    let text = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      text += chunk.toString();
      const pids = text.split("\n").filter(Boolean).map(Number);
      if (pids.length >= count) resolve(pids.slice(0, count));
    });
    child.on("exit", () => reject(new Error(`the fake server ended early: ${text}`)));
  });
}

test(
  "the sweep kills a check's leftovers and orphans, never the server, its ancestors or the other workers",
  { skip: process.platform !== "linux" && "the sweep reads /proc" },
  async () => {
    const uri = "file:///ws/.fim-rlvr/slot-0.lean";
    const other = "file:///ws/.fim-rlvr/slot-1.lean";
    // A "sandbox" whose children are a "server" (`--server`) and an orphan; the server has two "workers"
    // (`--worker … URI`), each with a child: the first's are the strays of the check that ended (one plain, two
    // disguised with a server's and a worker's command line, as a candidate's code could), the second's
    // belongs to a check still running.
    const dir = tempDir("fim-strays-");
    const sh = (name: string) => `sh ${join(dir, name)}`;
    writeFileSync(join(dir, "child.sh"), "sleep 600 & echo $!\nwait\n");
    writeFileSync(
      join(dir, "ended.sh"),
      `sleep 600 & echo $!\n${sh("child.sh")} --server & echo $!\n${sh("child.sh")} --worker ${uri} & echo $!\nwait\n`,
    );
    writeFileSync(
      join(dir, "server.sh"),
      `${sh("ended.sh")} --worker ${uri} & echo $!\n${sh("child.sh")} --worker ${other} & echo $!\nwait\n`,
    );
    const script = `sh ${join(dir, "server.sh")} --server & echo $!\nsleep 600 & echo $!\nwait\n`;
    const sandbox = spawn("sh", ["-c", script], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      // Ten pids in some order (several shells print them): each is found by its place and command line below.
      const pids = await readPids(sandbox, 10);
      const argvOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
      const find = (pred: (argv: string[]) => boolean) => pids.filter((p) => alive(p) && pred(argvOf(p)));
      const parentOf = (pid: number) => {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      };
      // A pid is printed once its shell has forked, maybe before the fork has exec'd its command (until then it
      // has its parent's command line): wait for every exec.
      const execd = (pid: number) => {
        try {
          return argvOf(pid).join("\0") !== argvOf(parentOf(pid)).join("\0");
        } catch {
          return true;
        }
      };
      for (const deadline = performance.now() + 10_000; performance.now() < deadline;) {
        if (pids.every(execd)) break;
        await new Promise((r) => setImmediate(r));
      }
      const serverPid = find((a) => a.includes("--server")).find((p) => parentOf(p) === sandbox.pid)!;
      const workers = find((a) => a.includes("--worker")).filter((p) => parentOf(p) === serverPid);
      const firstWorker = workers.find((p) => argvOf(p).includes(uri))!;
      const secondWorker = workers.find((p) => argvOf(p).includes(other))!;
      const sleeps = find((a) => a[0] === "sleep");
      assert.equal(sleeps.length, 5, "three strays' sleeps, a concurrent check's child and an orphan");
      const swept = sweepWorker(sandbox.pid!, uri);
      // The strays below the first worker (the disguised ones with their children) and the orphan go;
      // everything else stays.
      assert.equal(swept.killed.length, 6, JSON.stringify(swept));
      for (const pid of swept.killed) {
        while (alive(pid)) await new Promise((r) => setImmediate(r));
      }
      const kept = { serverPid, firstWorker, secondWorker, sandbox: sandbox.pid!, killed: swept.killed };
      for (const pid of [serverPid, firstWorker, secondWorker, sandbox.pid!])
        assert.ok(!swept.killed.includes(pid), `${pid} was killed: ${JSON.stringify(kept)}`);
      // (The first worker's shell ends by itself once its child is gone; the others wait on theirs.)
      for (const pid of [serverPid, secondWorker, sandbox.pid!])
        assert.ok(alive(pid), `${pid} ended: ${JSON.stringify(kept)}`);
      const left = sleeps.filter(alive);
      assert.equal(left.length, 1);
      assert.ok(readFileSync(`/proc/${left[0]}/stat`, "utf8").includes(` ${secondWorker} `));
    } finally {
      spawnSync("pkill", ["-KILL", "-f", dir]);
      sandbox.kill("SIGKILL");
    }
  },
);

const cc = which("cc") ? undefined : "no C compiler (`cc`) to build the worker launcher";
const ccSkip = toolSkip(
  "the worker launcher's confinement",
  process.platform !== "linux" ? "Linux only" : cc,
);

test(
  "the worker launcher runs its program unable to signal its parent or write outside /tmp",
  { skip: ccSkip },
  () => {
    const dir = tempDir("fim-launcher-");
    const source = join(dir, "launcher.c");
    writeFileSync(source, workerConfinementSource("/bin/sh"));
    const built = spawnSync("cc", ["-O2", "-o", join(dir, "launcher"), source], { encoding: "utf8" });
    assert.equal(built.status, 0, built.stderr);
    // A folder outside /tmp (the temp folder is under it), writable without the launcher: /var/tmp's, unless it
    // is /tmp itself or beneath it, else one in the repository.
    const outsideDir = outsideTmp();
    const outside = join(outsideDir, "written");
    const probe = [
      "kill -0 $PPID 2>/dev/null && echo parent:signalled || echo parent:refused",
      "kill -0 $$ && echo self:signalled",
      `(echo x > ${outside}) 2>/dev/null && echo outside:written || echo outside:refused`,
      "t=$(mktemp /tmp/fim-launcher-probe-XXXXXX) && echo tmp:written && rm -f $t",
    ].join("; ");
    // The control: without the launcher the same probe signals its parent and writes there.
    const control = spawnSync("/bin/sh", ["-c", probe], { encoding: "utf8" });
    assert.deepEqual(control.stdout.trim().split("\n"), [
      "parent:signalled",
      "self:signalled",
      "outside:written",
      "tmp:written",
    ]);
    rmSync(outside, { force: true });
    const ran = spawnSync(join(dir, "launcher"), ["-c", probe], { encoding: "utf8" });
    if (ran.status === 3) assert.fail(`Landlock could not confine: ${ran.stderr}`);
    assert.deepEqual(ran.stdout.trim().split("\n"), [
      "parent:refused",
      "self:signalled",
      "outside:refused",
      "tmp:written",
    ]);
    const leaked = existsSync(outside);
    rmSync(outsideDir, { recursive: true, force: true });
    assert.equal(leaked, false);
  },
);

/** A fresh folder outside /tmp, for the launcher's write probe. */
function outsideTmp(): string {
  const under = (path: string) => {
    const real = realpathSync(path);
    return real === "/tmp" || real.startsWith("/tmp/");
  };
  for (const base of ["/var/tmp", REPO])
    if (existsSync(base) && !under(base)) {
      try {
        return mkdtempSync(join(base, "fim-launcher-probe-"));
      } catch {
        // Not writable: the next.
      }
    }
  throw new Error("no writable folder outside /tmp for the probe (/var/tmp and the repository are under it)");
}
