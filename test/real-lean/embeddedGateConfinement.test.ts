/**
 * The embedded gate's compile server confines every child it forks (a candidate's compile, a replay) to the
 * request's own folder before the child runs anything (Landlock: childConfinementSource.ts, `confine`). A prelude
 * workspace cannot spell IO at elaboration time, so the confinement is shown at the server directly: the
 * tool's `--probe` request tries, as a confined child, every way of writing to its own folder, to a sibling
 * run's folder, to the gate's folder and to the reference folder, and of reaching the server (writing its
 * answer pipe through /proc, signalling it); and Lean itself, asked to write its `.olean` into a sibling run's
 * folder, fails to. A child that cannot be confined runs nothing and the server is not used again (the gate
 * then compiles in fresh sandboxed processes). In the verifier's sandbox (bubblewrap, its own PID namespace) a
 * compile past its deadline is killed through the server, which alone can name its children's pids. A document
 * that begins with the header its server imported compiles on that import (its messages as `lean --json` prints
 * them), a replay chained to a compile runs only after a compile that succeeded, and a server that holds as many
 * headers as it may is replaced by a fresh one.
 *
 * Needs the embedded Lean (skipped where it is missing, failing where CI=true: toolSkip.ts) and, for the
 * sandbox test, bubblewrap.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { createInterface } from "node:readline";
import { which } from "../../lean-bridge/server/launch";
import { sandboxed } from "../../lean-bridge/server/sandbox";
import { CompileZygote } from "../../lean-bridge/verify/compileZygote";
import { LeanKernelGate } from "../../lean-bridge/verify/leanKernelGate";
import { kernelGatePath, kernelGateReferencePath } from "../../lean-bridge/util/projectLayout";
import type { ProcessResult } from "../../lean-bridge/verify/gateProcess";
import { embeddedLeanPath, ensureNativeReplayTool } from "../../lean-bridge/verify/nativeReplayTool";
import { toolSkip } from "../toolSkip";

const LEAN = embeddedLeanPath();
const skip = toolSkip(
  "the embedded gate's confinement",
  LEAN
    ? false
    : "the embedded Lean is not installed (npm run setup:lean) and FIM_EMBEDDED_LEAN names no `lean` binary",
);
const sandboxSkip =
  skip ||
  toolSkip(
    "the embedded gate's compile server in the sandbox",
    which("bwrap") ? false : "bubblewrap (bwrap) is not installed: apt-get install bubblewrap",
  );

/** A prelude module of the test's own that compiles by itself. */
const SOUND = "prelude\ninductive Unit1 : Prop where\n  | intro : Unit1\ntheorem t : Unit1 := Unit1.intro\n";

/** A prelude module whose elaboration never ends: an instance search that asks for ever larger numbers. */
const ENDLESS = [
  "prelude",
  "inductive N where",
  "  | zero",
  "  | succ (n : N)",
  "class Endless (n : N) : Prop where",
  "  intro ::",
  "instance step {n : N} [Endless (N.succ n)] : Endless n := Endless.intro",
  "set_option maxHeartbeats 0 in",
  "set_option synthInstance.maxHeartbeats 0 in",
  "set_option synthInstance.maxSize 100000000 in",
  "theorem x : Endless N.zero := step",
  "",
].join("\n");

/** A project folder laid out as the gate's: two runs' folders and a file in each place a compile must not write. */
function layout() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "fimrlvr-confine-")));
  const gate = join(root, ".fim-rlvr", "gate");
  const runA = join(gate, "run-a");
  const runB = join(gate, "run-b");
  const reference = join(root, ".fim-rlvr", "gate-reference", "ref");
  for (const dir of [runA, runB, reference]) mkdirSync(dir, { recursive: true });
  const files = {
    own: join(runA, "own.txt"),
    sibling: join(runB, "FimRlvrGateCheck.olean"),
    gate: join(gate, "FimRlvrKernelReplay.lean"),
    reference: join(reference, "FimRlvrGateCheck.olean"),
    project: join(root, "Tasks.lean"),
  };
  for (const file of Object.values(files)) writeFileSync(file, "as the verifier wrote it\n");
  writeFileSync(join(runA, "Sound.lean"), SOUND);
  writeFileSync(join(runA, "Endless.lean"), ENDLESS);
  return { root, gate, runA, runB, reference, files };
}

function toolPath(): string {
  const tool = ensureNativeReplayTool(LEAN!);
  assert.equal(tool.kind, "ok", JSON.stringify(tool));
  return tool.kind === "ok" ? tool.path : "";
}

/** What a process printed on its standard output ("" for one that never started). */
function stdoutOf(result: ProcessResult | undefined): string {
  return result && "stdout" in result ? result.stdout : "";
}

/** The probe's answer, by line: `<what> <path>: <outcome>` (or `<what>: <outcome>`), the outcome by its key. */
function probed(stdout: string): Map<string, string> {
  const lines = new Map<string, string>();
  for (const line of stdout.split("\n")) {
    const colon = line.lastIndexOf(": ");
    if (colon > 0) lines.set(line.slice(0, colon), line.slice(colon + 2));
  }
  return lines;
}

test(
  "embedded gate: a compile server's child may write its own folder alone, and cannot reach the server",
  { skip },
  async () => {
    const ws = layout();
    const zygote = new CompileZygote([toolPath(), "--compile-server"], {
      cwd: ws.root,
      env: process.env,
      cpuSeconds: 0,
    });
    try {
      const { own, ...elsewhere } = ws.files;
      const result = await zygote.run(["--probe", own, ...Object.values(elsewhere)], ws.runA, 60_000);
      assert.deepEqual(
        [result?.kind, result?.kind === "exited" && result.code],
        ["exited", 0],
        JSON.stringify(result),
      );
      const said = probed(stdoutOf(result));
      for (const what of ["write", "truncate", "create", "mkdir", "rename", "unlink"]) {
        const key = [...said.keys()].find((k) => k.startsWith(`${what} ${own}`));
        assert.equal(key && said.get(key), "ok", `${what} in its own folder: ${stdoutOf(result)}`);
        for (const [where, path] of Object.entries(elsewhere)) {
          const other = [...said.keys()].find((k) => k.startsWith(`${what} ${path}`));
          assert.ok(other, `the probe said nothing of ${what} on ${where}: ${stdoutOf(result)}`);
          assert.notEqual(said.get(other), "ok", `${what} on the ${where} file was allowed`);
        }
      }
      assert.notEqual(said.get("open-server-answers"), "ok", "the child opened the server's answer pipe");
      assert.notEqual(said.get("signal-server"), "ok", "the child could signal the server");
      assert.equal(said.size, 6 * 5 + 2, `every probe answered: ${stdoutOf(result)}`);
      for (const [where, path] of Object.entries(elsewhere))
        assert.equal(readFileSync(path, "utf8"), "as the verifier wrote it\n", `the ${where} file changed`);

      // Lean itself, told to write its module into a sibling run's folder, cannot; into its own, it does.
      const compile = (output: string) =>
        zygote.run(["--json", "-o", output, join(ws.runA, "Sound.lean")], ws.runA, 60_000);
      const intoSibling = await compile(join(ws.runB, "Sound.olean"));
      assert.equal(intoSibling?.kind, "exited", JSON.stringify(intoSibling));
      assert.notEqual(
        intoSibling?.kind === "exited" && intoSibling.code,
        0,
        "Lean wrote a sibling run's folder",
      );
      assert.equal(existsSync(join(ws.runB, "Sound.olean")), false);
      const intoGate = await compile(join(ws.gate, "Sound.olean"));
      assert.notEqual(intoGate?.kind === "exited" && intoGate.code, 0, "Lean wrote the gate's folder");
      assert.equal(existsSync(join(ws.gate, "Sound.olean")), false);
      const intoOwn = await compile(join(ws.runA, "Sound.olean"));
      assert.deepEqual(
        [intoOwn?.kind, intoOwn?.kind === "exited" && intoOwn.code],
        ["exited", 0],
        JSON.stringify(intoOwn),
      );
      assert.ok(existsSync(join(ws.runA, "Sound.olean")));
      assert.equal(zygote.confinementRefused, undefined);
    } finally {
      zygote.stop();
      rmSync(ws.root, { recursive: true, force: true });
    }
  },
);

test(
  "embedded gate: a child that cannot be confined runs nothing, and the compile server is not used again",
  { skip },
  async () => {
    const ws = layout();
    const zygote = new CompileZygote([toolPath(), "--compile-server"], {
      cwd: ws.root,
      env: process.env,
      cpuSeconds: 0,
    });
    try {
      // The request's writable folder does not exist: no ruleset can name it, so the child must not run Lean.
      const missing = join(ws.gate, "run-gone");
      const output = join(ws.runA, "Unconfined.olean");
      const refused = await zygote.run(["-o", output, join(ws.runA, "Sound.lean")], missing, 60_000);
      assert.equal(refused, undefined, JSON.stringify(refused));
      assert.equal(existsSync(output), false, "the unconfined child ran Lean");
      assert.match(zygote.confinementRefused ?? "", /not a folder/);
      const after = await zygote.run(["-o", output, join(ws.runA, "Sound.lean")], ws.runA, 60_000);
      assert.equal(after, undefined, "the server was used again after a child could not be confined");
      assert.equal(existsSync(output), false);
    } finally {
      zygote.stop();
      rmSync(ws.root, { recursive: true, force: true });
    }
  },
);

test(
  "embedded gate: in the sandbox, a compile past its deadline is killed through the server, and the next compile runs",
  { skip: sandboxSkip, timeout: 120_000 },
  async () => {
    const ws = layout();
    const install = dirname(dirname(realpathSync(LEAN!)));
    const command = sandboxed([toolPath(), "--compile-server"], ws.root, {
      writable: [ws.gate],
      readable: [install],
      env: process.env,
    });
    const zygote = new CompileZygote(command, { cwd: ws.root, env: process.env, cpuSeconds: 0 });
    try {
      const started = performance.now();
      const late = await zygote.run(["--json", join(ws.runA, "Endless.lean")], ws.runA, 2_000);
      const ms = performance.now() - started;
      assert.equal(late?.kind, "timeout", JSON.stringify(late));
      // Killed at its deadline, not left to run until it ended by itself (it never does).
      assert.ok(ms < 60_000, `the endless compile was reported after ${ms.toFixed(0)} ms`);
      const next = await zygote.run(
        ["--json", "-o", join(ws.runA, "Sound.olean"), join(ws.runA, "Sound.lean")],
        ws.runA,
        60_000,
      );
      assert.deepEqual(
        [next?.kind, next?.kind === "exited" && next.code],
        ["exited", 0],
        JSON.stringify(next),
      );
      // The sandbox's own writable folder is the gate's; the child still may not write a sibling's.
      const probe = await zygote.run(["--probe", ws.files.sibling], ws.runA, 60_000);
      const said = probed(stdoutOf(probe));
      assert.notEqual(said.get(`write ${ws.files.sibling}`), "ok", stdoutOf(probe));
      assert.notEqual(said.get(`create ${ws.files.sibling}.new`), "ok", stdoutOf(probe));
    } finally {
      zygote.stop();
      rmSync(ws.root, { recursive: true, force: true });
    }
  },
);

/** Whether a process is gone (or only a zombie waiting for its new parent to reap it). */
function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

test("embedded gate: a compile does not outlive its compile server", { skip, timeout: 120_000 }, async () => {
  const ws = layout();
  const server = spawn(toolPath(), ["--compile-server"], { cwd: ws.root, stdio: ["pipe", "pipe", "ignore"] });
  try {
    const lines = createInterface({ input: server.stdout });
    const started = new Promise<number>((resolve) =>
      lines.on("line", (line) => {
        const [what, id, pid] = line.split(" ");
        if (what === "started" && id === "1") resolve(Number(pid));
      }),
    );
    const out = join(ws.runA, "endless");
    server.stdin.write(
      ["1", "0", ws.runA, `${out}.out`, `${out}.err`, "--json", join(ws.runA, "Endless.lean")].join("\t") +
        "\n",
    );
    const child = await started;
    assert.equal(gone(child), false, "the endless compile ended by itself");
    server.kill("SIGKILL");
    await once(server, "exit");
    // The kernel kills the compile as its server dies; the poll only waits for that to be seen, bounded.
    for (let k = 0; k < 200 && !gone(child); k++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(gone(child), true, "the compile outlived its server");
  } finally {
    server.kill("SIGKILL");
    rmSync(ws.root, { recursive: true, force: true });
  }
});

test(
  "embedded gate in the sandbox: a proof is confirmed against its reference, a header that fails alone is the workspace's, and no run leaves a folder behind",
  { skip: sandboxSkip, timeout: 300_000 },
  async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), "fimrlvr-confine-gate-")));
    const build = join(root, ".lake", "build", "lib", "lean");
    mkdirSync(build, { recursive: true });
    writeFileSync(join(root, "Base.lean"), "prelude\ninductive Unit1 : Prop where\n  | intro : Unit1\n");
    const built = spawnSync(LEAN!, ["-o", join(build, "Base.olean"), "Base.lean"], {
      cwd: root,
      encoding: "utf8",
      timeout: 120_000,
    });
    assert.equal(built.status, 0, `${built.stdout}${built.stderr}`);
    const gate = new LeanKernelGate({
      projectRoot: root,
      limits: { memoryMb: 4096, cpuSeconds: 0, sandbox: true },
      toolchain: { kind: "embedded", lean: LEAN! },
    });
    try {
      assert.equal(await gate.ready(120_000), undefined);
      const text = "prelude\nimport Base\ntheorem t : Unit1 := Unit1.intro\n";
      const proved = await gate.run(
        {
          documentText: text,
          declaration: ["t"],
          mayBePrivate: false,
          headerEndLine: 1,
          declarationLine: 2,
          referenceText: text,
        },
        120_000,
      );
      assert.equal(proved.kind, "replayed", JSON.stringify(proved));
      assert.deepEqual(proved.kind === "replayed" && proved.statement, { kind: "same" });
      const missing = await gate.run(
        {
          documentText: "prelude\nimport Missing\ntheorem t : Unit1 := Unit1.intro\n",
          declaration: ["t"],
          mayBePrivate: false,
          headerEndLine: 1,
          declarationLine: 2,
        },
        120_000,
      );
      assert.deepEqual(
        [missing.kind, missing.kind === "compile-failed" && missing.inHeader],
        ["compile-failed", true],
        JSON.stringify(missing),
      );
      assert.equal(gate.confinementRefused, undefined);
      assert.deepEqual(
        readdirSync(kernelGatePath(root)).filter((f) => /^(run|replay)-/.test(f)),
        [],
        "a run's folders are removed after it",
      );
      assert.deepEqual(
        readdirSync(kernelGateReferencePath(root)).filter((f) => f.startsWith("header-")),
        [],
        "a header's folder is removed after its run",
      );
      assert.equal(readdirSync(kernelGateReferencePath(root)).length, 1, "the one hole's reference is kept");
    } finally {
      gate.stop();
      rmSync(root, { recursive: true, force: true });
    }
  },
);

test(
  "embedded gate: a document compiles on the header its server imported once, a replay chained to its compile runs only after a compile that succeeded, and a document that does not begin with the header is compiled as Lean's command line would",
  { skip, timeout: 120_000 },
  async () => {
    const ws = layout();
    const zygote = new CompileZygote([toolPath(), "--compile-server"], {
      cwd: ws.root,
      env: process.env,
      cpuSeconds: 0,
    });
    const header = ["--header", Buffer.from("prelude\n").toString("hex")];
    const replayDir = join(ws.gate, "replay-a");
    mkdirSync(replayDir, { recursive: true });
    const compile = (name: string) => ({
      args: [
        ...header,
        "--json",
        "-o",
        join(ws.runA, `${name}.olean`),
        `--root=${ws.runA}`,
        join(ws.runA, `${name}.lean`),
      ],
      dir: ws.runA,
      timeoutMs: 60_000,
    });
    const replay = (name: string, declaration: string) => ({
      args: [...header, "--replay", join(ws.runA, `${name}.olean`), "exact", "-", declaration],
      dir: replayDir,
      timeoutMs: 60_000,
    });
    try {
      // Messages as `lean --json` prints them, the file named; the replay, chained, confirms the theorem.
      writeFileSync(join(ws.runA, "Said.lean"), SOUND + "#check t\n");
      const sound = await zygote.runThen(compile("Said"), replay("Said", "t"));
      assert.deepEqual(
        [sound?.first?.kind, sound?.first?.kind === "exited" && sound.first.code],
        ["exited", 0],
      );
      const message = JSON.parse(stdoutOf(sound?.first).trim().split("\n")[0]!) as {
        fileName: string;
        data: string;
      };
      assert.equal(message.fileName, join(ws.runA, "Said.lean"));
      assert.match(message.data, /^t : Unit1/);
      const replayed = await sound?.then;
      assert.match(
        stdoutOf(replayed),
        /FIMRLVR-GATE \{"kind":"replayed","declaration":"t"/,
        JSON.stringify(replayed),
      );
      // A compile that fails: its error as Lean words it, no module, and the replay chained to it refused.
      writeFileSync(join(ws.runA, "Bad.lean"), "prelude\ntheorem b : Unit1 := Unit1.intro\n");
      const bad = await zygote.runThen(compile("Bad"), replay("Bad", "b"));
      assert.deepEqual([bad?.first?.kind, bad?.first?.kind === "exited" && bad.first.code], ["exited", 1]);
      assert.match(stdoutOf(bad?.first), /"severity":"error"/);
      assert.equal(existsSync(join(ws.runA, "Bad.olean")), false);
      const refused = await bad?.then;
      assert.equal(refused?.kind, "signalled", JSON.stringify(refused));
      // A document that does not begin with the header it names: Lean's own command line compiles it.
      writeFileSync(join(ws.runA, "Other.lean"), "  prelude\ndef o : Prop → Prop := fun p => p\n");
      const other = await zygote.run(compile("Other").args, ws.runA, 60_000);
      assert.deepEqual(
        [other?.kind, other?.kind === "exited" && other.code],
        ["exited", 0],
        JSON.stringify(other),
      );
      assert.ok(existsSync(join(ws.runA, "Other.olean")));
    } finally {
      zygote.stop();
      rmSync(ws.root, { recursive: true, force: true });
    }
  },
);

test(
  "embedded gate: a compile server that holds as many headers as it may is replaced once its compiles have ended, and the next compile runs on a fresh one",
  { skip, timeout: 120_000 },
  async () => {
    const ws = layout();
    const starts = join(ws.root, "starts.log");
    // The server's command line, counting its starts.
    const zygote = new CompileZygote(
      ["sh", "-c", `echo start >> '${starts}' && exec '${toolPath()}' --compile-server`],
      { cwd: ws.root, env: process.env, cpuSeconds: 0 },
    );
    const sound = (header: string) =>
      zygote.run(
        [
          "--header",
          Buffer.from(header).toString("hex"),
          "--json",
          "-o",
          join(ws.runA, "Sound.olean"),
          join(ws.runA, "Sound.lean"),
        ],
        ws.runA,
        60_000,
      );
    try {
      const first = await sound("prelude\n");
      assert.deepEqual(
        [first?.kind, first?.kind === "exited" && first.code],
        ["exited", 0],
        JSON.stringify(first),
      );
      // Headers of their own (comments after the header parse to the same imports, each text its own entry).
      for (let k = 0; k < 40; k++)
        zygote.warm(["--header", Buffer.from(`prelude\n-- ${k}\n`).toString("hex")]);
      const starts1 = () => readFileSync(starts, "utf8").trim().split("\n").length;
      // The server says it is full as it reads the warm lines; a compile after that goes to a fresh server.
      let next: ProcessResult | undefined;
      for (let tries = 0; tries < 50 && starts1() < 2; tries++) next = await sound("prelude\n");
      assert.equal(starts1(), 2, "the full server was replaced");
      next = await sound("prelude\n");
      assert.deepEqual(
        [next?.kind, next?.kind === "exited" && next.code],
        ["exited", 0],
        JSON.stringify(next),
      );
    } finally {
      zygote.stop();
      rmSync(ws.root, { recursive: true, force: true });
    }
  },
);
