/**
 * The kernel gate's processes on the embedded Lean (no standard library on disk): the compiles and the replay
 * are children of the gate's two compile servers (compileZygote.ts), each a fork of a Lean already started and
 * confined to the folder it is given before it runs anything, each elaborating its document on the document's
 * header, which its server imported once (a hole's checks ask both servers to import it ahead of its proofs:
 * `prepare`). The candidate server compiles the check
 * documents and runs the replays (the native replay tool, nativeReplaySource.ts), in a sandbox that may write
 * the gate's folder; the trusted server compiles only what holds no candidate text (the statements' references,
 * the headers alone), in a sandbox that may write the reference folder alone. Where a server cannot run or
 * cannot confine its children, each step is a fresh process in a sandbox of its own whose only writable folder
 * is the one it is given. The self-test builds (or finds) the tool and checks that the gate tells a sound
 * theorem of its own from one that skipped the kernel.
 */
import { mkdirSync, realpathSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { kernelGatePath, kernelGateReferencePath, prefixModulesPath } from "../util/projectLayout";
import { CompileZygote } from "./compileZygote";
import { runGateProcess, type ProcessResult } from "./gateProcess";
import { gateCommand, gateSandboxed, type CompileFor, type GateContext, type GateRunner } from "./gateRunner";
import { GATE_UNAVAILABLE_ACTION, type GateReport, type GateRequest } from "./kernelGate";
import { ensureNativeReplayTool } from "./nativeReplayTool";

/** The types of the embedded gate's own documents (its self-test): a prelude file needs nothing of the workspace. */
const SELF_TEST_TYPES = [
  "prelude",
  "inductive FimRlvrGateUnit : Prop where",
  "  | intro : FimRlvrGateUnit",
  "inductive FimRlvrGateEmpty : Prop",
  "",
].join("\n");

/** The install folder whose `bin/` holds this `lean` (its real path two levels up). */
function installFolder(lean: string): string {
  try {
    return dirname(dirname(realpathSync(lean)));
  } catch {
    return dirname(dirname(lean));
  }
}

/**
 * The compile server's header prefix: the header's text in hex (any text, one field of the line protocol), which
 * the server imports once and every document that begins with it then elaborates on (compileServerSource.ts).
 */
function headerArgs(header: string | undefined): string[] {
  return header ? ["--header", Buffer.from(header, "utf8").toString("hex")] : [];
}

export class EmbeddedGateRunner implements GateRunner {
  readonly label = "the embedded Lean";
  /** The native replay tool's path, once the self-test has built or found it. */
  private replayTool: string | undefined;
  private servers: Partial<Record<CompileFor, CompileZygote>> = {};

  /** `lean`: the embedded binary; `buildDir`: the workspace's build (default PROJECT/.lake/build/lib/lean). */
  constructor(
    private readonly context: GateContext,
    private readonly lean: string,
    private readonly buildDir?: string,
  ) {}

  /** The environment of the gate's processes: LEAN_PATH is the workspace's build and its prefixes. */
  private get processEnv(): NodeJS.ProcessEnv {
    return {
      ...this.context.env,
      // The workspace's build, then the check documents' compiled prefixes (prefixModules.ts), which a check
      // document in the prefix-import form imports; the replay reads them as it reads every import.
      LEAN_PATH: [
        this.buildDir ?? join(this.context.projectRoot, ".lake", "build", "lib", "lean"),
        prefixModulesPath(this.context.projectRoot),
      ].join(delimiter),
    };
  }

  /** The embedded Lean and its replay tool live in their install, under the home the sandbox hides. */
  private get readable(): string[] {
    return [installFolder(this.lean)];
  }

  /**
   * The compile server for `forWhom`, once the self-test has found the tool. Each compile is a fresh child of
   * a Lean already started, instead of a Lean process that starts from nothing; each child confines itself to
   * its request's folder. The candidate server's sandbox may write the gate's folder, where each run's folders
   * are made; the trusted server's the reference folder alone, out of every candidate compile's reach.
   */
  private server(forWhom: CompileFor): CompileZygote | undefined {
    if (!this.replayTool) return undefined;
    const writable =
      forWhom === "candidate"
        ? kernelGatePath(this.context.projectRoot)
        : kernelGateReferencePath(this.context.projectRoot);
    mkdirSync(writable, { recursive: true });
    this.servers[forWhom] ??= new CompileZygote(
      gateSandboxed(
        [this.replayTool, "--compile-server", ...(forWhom === "trusted" ? ["--trusted"] : [])],
        this.context,
        this.processEnv,
        {
          writable: [writable],
          readable: this.readable,
        },
      ),
      {
        cwd: this.context.projectRoot,
        env: this.processEnv,
        cpuSeconds: this.context.limits.cpuSeconds,
      },
    );
    return this.servers[forWhom];
  }

  /** Why the compiles are fresh processes instead of the servers' children, once a server said so. */
  get confinementRefused(): string | undefined {
    return this.servers.candidate?.confinementRefused ?? this.servers.trusted?.confinementRefused;
  }

  private fresh(
    base: readonly string[],
    writable: readonly string[],
    timeoutMs: number,
  ): Promise<ProcessResult> {
    const command = gateCommand(base, this.context, this.processEnv, { writable, readable: this.readable });
    return runGateProcess(command, { cwd: this.context.projectRoot, env: this.processEnv, timeoutMs });
  }

  async compile(
    args: readonly string[],
    dir: string,
    timeoutMs: number,
    forWhom: CompileFor,
    header?: string,
  ): Promise<ProcessResult> {
    const served = await this.server(forWhom)?.run([...headerArgs(header), ...args], dir, timeoutMs);
    return served ?? this.fresh([this.lean, ...args], [dir], timeoutMs);
  }

  /** The candidate server runs the replay the moment the compile exits with 0 (no round trip through here). */
  async compileThenReplay(
    compile: { args: readonly string[]; dir: string; timeoutMs: number; header?: string },
    replay: { target: readonly string[]; dir: string; timeoutMs: number },
  ): Promise<{ compiled: ProcessResult; replayed: Promise<ProcessResult | undefined> } | undefined> {
    const served = await this.server("candidate")?.runThen(
      {
        args: [...headerArgs(compile.header), ...compile.args],
        dir: compile.dir,
        timeoutMs: compile.timeoutMs,
      },
      {
        args: [...headerArgs(compile.header), "--replay", ...replay.target],
        dir: replay.dir,
        timeoutMs: replay.timeoutMs,
      },
    );
    if (!served?.first) return undefined;
    const compiled = served.first;
    const replayed = served.then.then((r) =>
      compiled.kind === "exited" && compiled.code === 0 ? r : undefined,
    );
    return { compiled, replayed };
  }

  /** Both servers import the header now (each once), so that the documents' compiles do not wait for it. */
  prepare(header: string): void {
    for (const forWhom of ["candidate", "trusted"] as const) this.servers[forWhom]?.warm(headerArgs(header));
  }

  /**
   * The replay as a child of the candidate server: the server never ran candidate code, so the child starts as
   * clean as a new process, without Lean's start-up. It may write its own folder alone (its output there).
   */
  async replay(
    target: readonly string[],
    dir: string,
    timeoutMs: number,
    header?: string,
  ): Promise<ProcessResult> {
    const started = performance.now();
    const served = await this.server("candidate")?.run(
      [...headerArgs(header), "--replay", ...target],
      dir,
      timeoutMs,
    );
    const left = Math.max(1, timeoutMs - (performance.now() - started));
    return served ?? this.fresh([this.replayTool ?? "fimrlvr-replay", ...target], [], left);
  }

  /**
   * The tool builds (or is cached), a theorem of the gate's own is replayed with no axioms, and one the
   * elaborator let past the kernel (`debug.skipKernelTC` on a proof that uses an `unsafe` definition) is
   * refused by it: a gate that cannot tell the two apart is unavailable.
   */
  async selfTest(
    check: (request: GateRequest) => Promise<GateReport>,
    _timeoutMs: number,
    started: number,
  ): Promise<GateReport | undefined> {
    const elapsed = () => performance.now() - started;
    const tool = ensureNativeReplayTool(this.lean, this.context.env);
    if (tool.kind === "unavailable")
      return { kind: "unavailable", message: tool.message, action: tool.action, elapsedMs: elapsed() };
    this.replayTool = tool.path;
    const own = (lines: string[], name: string): GateRequest => ({
      documentText: SELF_TEST_TYPES + lines.join("\n") + "\n",
      declaration: [name],
      mayBePrivate: false,
      headerEndLine: 0,
      declarationLine: 4 + lines.length - 1,
    });
    const sound = await check(
      own(["theorem fimrlvrGateSelfTest : FimRlvrGateUnit := FimRlvrGateUnit.intro"], "fimrlvrGateSelfTest"),
    );
    const unsound = await check(
      own(
        [
          "unsafe def fimrlvrGateLoop : FimRlvrGateEmpty := fimrlvrGateLoop",
          "set_option debug.skipKernelTC true in",
          "theorem fimrlvrGateUnsound : FimRlvrGateEmpty := fimrlvrGateLoop",
        ],
        "fimrlvrGateUnsound",
      ),
    );
    if (sound.kind === "replayed" && sound.axioms.length === 0 && unsound.kind === "kernel-rejected")
      return undefined;
    const said = (r: GateReport) => `${r.kind}${"message" in r ? ` (${r.message})` : ""}`;
    return {
      kind: "unavailable",
      message: `the gate's self-test on the embedded Lean (${this.lean}, replay tool ${tool.path}) gave ${said(sound)} for a sound theorem of its own (expected replayed, no axioms) and ${said(unsound)} for one that skipped the kernel (expected kernel-rejected)`,
      action: `${GATE_UNAVAILABLE_ACTION}; report the self-test's message`,
      elapsedMs: elapsed(),
    };
  }

  /** Stops the compile servers, if they run (they also end by themselves when this process does). */
  stop(): void {
    this.servers.candidate?.stop();
    this.servers.trusted?.stop();
    this.servers = {};
  }
}
