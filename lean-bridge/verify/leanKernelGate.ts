/**
 * The kernel gate on real Lean (kernelGate.ts says what it is for). For one proved check document:
 *  1. the document is written to a fresh run folder under PROJECT/.fim-rlvr/gate/ and compiled by a process
 *     that may write that folder alone: `lake env lean --json -M<MB> -o <doc>.olean <doc>.lean` in a fresh
 *     process (Lake puts the project's imports on the path), or on the embedded Lean `lean --json -M<MB> -o …`
 *     with LEAN_PATH at the workspace's build (.lake/build/lib/lean, where the embedded Lean builds the
 *     workspace's modules), run as a child of the gate's candidate compile server (compileZygote.ts), which
 *     confines it to its run folder before it runs anything. That process ran the candidate's code, so nothing
 *     it prints decides a verdict: when it fails, the header alone is compiled again, without the candidate, in
 *     a folder no candidate compile can write, and only a header that fails by itself makes the failure the
 *     workspace's;
 *  2. the replay runs in a second process, with its output in a folder of its own: the replay program
 *     (kernelReplayProgram.ts), `lake env lean --run KernelReplay.lean <doc>.olean …`, or on the embedded Lean,
 *     whose standard library is not on disk, the native replay tool (nativeReplaySource.ts, built by
 *     nativeReplayTool.ts), as another confined child of the candidate compile server. Either reads the compiled
 *     module's constants (none of its code runs there) and replays the checked declaration and what it depends
 *     on through the kernel, and compares its statement with the statement's reference: the document with
 *     `sorry` in the hole, compiled once per hole by a process that runs no candidate text (on the embedded Lean
 *     the trusted compile server, whose sandbox may write the reference folder alone).
 * Each process runs in its own process group under the gate's deadline, inside the verifier's sandbox
 * (bubblewrap without network, where the pool uses it) and CPU limit, and is killed with what it started.
 * The program is checked once, before the first candidate, on a document of the gate's own: a Lean on which it
 * cannot run makes the gate unavailable (the workspace's matter), never a candidate's failure.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync, type Dirent } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { realpathSync } from "node:fs";
import { which, type Limits } from "../server/launch";
import { sandboxed } from "../server/sandbox";
import { kernelGatePath, kernelGateReferencePath, prefixModulesPath } from "../util/projectLayout";
import { blankFailingCommands } from "./gateDocument";
import { runGateProcess, type ProcessResult } from "./gateProcess";
import {
  GATE_UNAVAILABLE_ACTION,
  type GateAxiom,
  type GateReport,
  type GateRequest,
  type GateStage,
  type GateStatement,
  type KernelGateBackend,
} from "./kernelGate";
import { GATE_ANSWER_PREFIX, KERNEL_REPLAY_PROGRAM, KERNEL_REPLAY_VERSION } from "./kernelReplayProgram";
import { CompileZygote } from "./compileZygote";
import { embeddedLeanPath, ensureNativeReplayTool } from "./nativeReplayTool";

/** Which Lean the gate runs: the project's through Lake, or the embedded runtime (no standard library on disk). */
export type GateToolchain =
  | { kind: "lake" }
  /**
   * `lean`: the embedded binary. `buildDir`: where the workspace's modules are built (default
   * PROJECT/.lake/build/lib/lean), the check document's LEAN_PATH.
   */
  | { kind: "embedded"; lean: string; buildDir?: string };

export interface LeanGateOptions {
  projectRoot: string;
  /** The verifier's limits: Lean's -M, the CPU limit, the sandbox. */
  limits: Limits;
  env?: NodeJS.ProcessEnv;
  /** Default: Lake. */
  toolchain?: GateToolchain;
}

/**
 * The Lean the gate runs on this machine for the project: its own through Lake where `lake` is on PATH, else
 * the embedded Lean where it is installed (or named by FIM_EMBEDDED_LEAN) and the project is one it can judge
 * (a prelude workspace); undefined where there is neither.
 */
export function localGateToolchain(
  projectRoot: string,
  env: NodeJS.ProcessEnv = process.env,
): GateToolchain | undefined {
  if (which("lake", env)) return { kind: "lake" };
  const lean = embeddedLeanPath(env);
  return lean && isPreludeWorkspace(projectRoot) ? { kind: "embedded", lean } : undefined;
}

/** The first token of a Lean file, past whitespace and comments (`--` lines, `/- … -/` blocks, nested). */
function firstToken(text: string): string {
  let k = 0;
  while (k < text.length) {
    if (/\s/.test(text[k]!)) k++;
    else if (text.startsWith("--", k)) {
      const end = text.indexOf("\n", k);
      k = end < 0 ? text.length : end;
    } else if (text.startsWith("/-", k)) {
      let depth = 0;
      while (k < text.length) {
        if (text.startsWith("/-", k)) {
          depth++;
          k += 2;
        } else if (text.startsWith("-/", k)) {
          k += 2;
          if (--depth === 0) break;
        } else k++;
      }
    } else break;
  }
  return /^\S*/.exec(text.slice(k, k + 64))?.[0] ?? "";
}

/**
 * Whether every Lean file of the project (outside hidden folders such as .lake) begins with `prelude`: the
 * only workspaces the embedded Lean, which has no standard library, can judge. At most 20,000 files are read.
 */
export function isPreludeWorkspace(projectRoot: string): boolean {
  let seen = 0;
  const walk = (dir: string): boolean => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return false;
    }
    for (const e of entries) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const path = join(dir, e.name);
      if (e.isDirectory()) {
        if (!walk(path)) return false;
      } else if (e.isFile() && e.name.endsWith(".lean")) {
        if (++seen > 20_000) return false;
        let text: string;
        try {
          text = readFileSync(path, "utf8");
        } catch {
          return false;
        }
        if (firstToken(text) !== "prelude") return false;
      }
    }
    return true;
  };
  return walk(projectRoot) && seen > 0;
}

/** The types of the embedded gate's own documents (its self-test): a prelude file needs nothing of the workspace. */
const EMBEDDED_SELF_TEST_TYPES = [
  "prelude",
  "inductive FimRlvrGateUnit : Prop where",
  "  | intro : FimRlvrGateUnit",
  "inductive FimRlvrGateEmpty : Prop",
  "",
].join("\n");

/** The statement's reference module, compiled without the candidate, or why there is none. */
type ReferenceModule = { kind: "ok"; olean: string } | { kind: "failed"; message: string };

/** What compiling the header alone said: it loads, or the workspace's failure (or the gate's trouble) to report. */
type HeaderCheck =
  | { kind: "loads" }
  | { kind: "compile-failed"; message: string; inHeader: true }
  | { kind: "report"; report: GateReport };

/**
 * The gate's folder in the project: each candidate compile (and replay) writes only its own fresh folder inside
 * it. The references and the headers alone are compiled apart, under kernelGateReferencePath.
 */
export function gateDir(projectRoot: string): string {
  return kernelGatePath(projectRoot);
}

/** The install folder whose `bin/` holds this `lean` (its real path two levels up). */
function installFolder(lean: string): string {
  try {
    return dirname(dirname(realpathSync(lean)));
  } catch {
    return dirname(dirname(lean));
  }
}

/** A Lean message as `lean --json` prints it (src/Lean/Message.lean, `SerialMessage`). */
interface JsonMessage {
  severity?: string;
  pos?: { line?: number; column?: number };
  data?: string;
}

/** Lean's error messages in `--json` output: each line one message; other lines are not Lean's. */
export function compileErrors(stdout: string): { line: number; text: string }[] {
  const errors: { line: number; text: string }[] = [];
  for (const raw of stdout.split("\n")) {
    const line = raw.trim();
    if (!line.startsWith("{")) continue;
    let message: JsonMessage;
    try {
      message = JSON.parse(line) as JsonMessage;
    } catch {
      continue;
    }
    if (message.severity === "error")
      errors.push({ line: (message.pos?.line ?? 1) - 1, text: (message.data ?? "").split("\n")[0] ?? "" });
  }
  return errors;
}

/** The replay program's answer: the last `FIMRLVR-GATE` line of its output, as a report (undefined: none or malformed). */
export function parseReplayAnswer(stdout: string, elapsedMs: number): GateReport | undefined {
  const line = stdout
    .split("\n")
    .filter((l) => l.startsWith(GATE_ANSWER_PREFIX))
    .at(-1);
  if (!line) return undefined;
  let answer: unknown;
  try {
    answer = JSON.parse(line.slice(GATE_ANSWER_PREFIX.length));
  } catch {
    return undefined;
  }
  if (typeof answer !== "object" || answer === null) return undefined;
  const a = answer as Record<string, unknown>;
  const text = (v: unknown) => (typeof v === "string" ? v : undefined);
  switch (a.kind) {
    case "replayed": {
      const declaration = text(a.declaration);
      if (declaration === undefined || typeof a.replayed !== "number" || !Array.isArray(a.axioms))
        return undefined;
      const axioms: GateAxiom[] = [];
      for (const x of a.axioms as unknown[]) {
        const o = (typeof x === "object" && x !== null ? x : {}) as Record<string, unknown>;
        const name = text(o.name);
        if (
          name === undefined ||
          typeof o.declaredInDocument !== "boolean" ||
          typeof o.nativeShape !== "boolean"
        )
          return undefined;
        axioms.push({ name, declaredInDocument: o.declaredInDocument, nativeShape: o.nativeShape });
      }
      const statement = readStatement(a.statement, text(a.statementMessage));
      if (statement === "malformed") return undefined;
      return {
        kind: "replayed",
        declaration,
        replayed: a.replayed,
        axioms,
        ...(statement ? { statement } : {}),
        elapsedMs,
      };
    }
    case "kernel-rejected": {
      const declaration = text(a.declaration);
      const message = text(a.message);
      if (declaration === undefined || message === undefined) return undefined;
      return { kind: "kernel-rejected", declaration, message, elapsedMs };
    }
    case "missing": {
      const message = text(a.message);
      return message === undefined ? undefined : { kind: "missing", message, elapsedMs };
    }
    default:
      return undefined;
  }
}

/** The answer's `statement` field: absent (no reference given), one of its kinds, or malformed. */
function readStatement(value: unknown, message: string | undefined): GateStatement | undefined | "malformed" {
  if (value === undefined) return undefined;
  if (value === "same") return { kind: "same" };
  if ((value === "differs" || value === "no-reference") && message !== undefined)
    return { kind: value, message };
  return "malformed";
}

/** The last lines a process said, for a report. */
function tail(result: { stdout: string; stderr: string }): string {
  const said = `${result.stderr}\n${result.stdout}`.trim().split("\n").slice(-6).join(" / ");
  return said ? `: ${said}` : "";
}

let runCounter = 0;

export class LeanKernelGate implements KernelGateBackend {
  readonly name = "kernel-replay" as const;
  private selfTested: Promise<GateReport | undefined> | undefined;

  constructor(private readonly options: LeanGateOptions) {}

  private get env(): NodeJS.ProcessEnv {
    return this.options.env ?? process.env;
  }

  private get toolchain(): GateToolchain {
    return this.options.toolchain ?? { kind: "lake" };
  }

  /** The environment of the gate's processes: on the embedded Lean, LEAN_PATH is the workspace's build and its prefixes. */
  private get processEnv(): NodeJS.ProcessEnv {
    const toolchain = this.toolchain;
    if (toolchain.kind === "lake") return this.env;
    return {
      ...this.env,
      // The workspace's build, then the check documents' compiled prefixes (prefixModules.ts), which a check
      // document in the prefix-import form imports; the replay reads them as it reads every import.
      LEAN_PATH: [
        toolchain.buildDir ?? join(this.options.projectRoot, ".lake", "build", "lib", "lean"),
        prefixModulesPath(this.options.projectRoot),
      ].join(delimiter),
    };
  }

  /** The native replay tool's path, once the self-test has built or found it (embedded Lean only). */
  private replayTool: string | undefined;

  /** Lean itself with `args` (the compile step), able to write `writable` alone. */
  private leanCommand(args: string[], writable: readonly string[]): string[] {
    const toolchain = this.toolchain;
    return this.command(
      toolchain.kind === "lake" ? ["lake", "env", "lean", ...args] : [toolchain.lean, ...args],
      writable,
    );
  }

  /** The replay step's arguments: the compiled module, the privacy, the reference module ("-": none), the name. */
  private replayTarget(olean: string, request: GateRequest, reference: string | undefined): string[] {
    return [
      olean,
      request.mayBePrivate ? "may-be-private" : "exact",
      reference ?? "-",
      ...request.declaration,
    ];
  }

  /** The replay step for a compiled module. */
  private replayCommand(olean: string, request: GateRequest, reference: string | undefined): string[] {
    const target = this.replayTarget(olean, request, reference);
    return this.toolchain.kind === "lake"
      ? this.command(["lake", "env", "lean", "--run", this.programPath(), ...target])
      : this.command([this.replayTool ?? "fimrlvr-replay", ...target]);
  }

  /**
   * The embedded gate's two compile servers (compileZygote.ts), once the self-test has found the tool: each
   * compile a fresh child of a Lean already started, instead of a Lean process that starts from nothing.
   * `candidate` compiles the candidates' check documents and runs the replays, in a sandbox that may write the
   * gate's folder, where each run's folders are made; each child confines itself to its own folder there.
   * `trusted` compiles only what holds no candidate text (the statements' references, the headers alone), in a
   * sandbox that may write the reference folder alone, out of every candidate compile's reach.
   */
  private servers: { candidate?: CompileZygote; trusted?: CompileZygote } = {};

  private compileServer(which: "candidate" | "trusted"): CompileZygote | undefined {
    if (this.toolchain.kind !== "embedded" || !this.replayTool) return undefined;
    const writable =
      which === "candidate"
        ? gateDir(this.options.projectRoot)
        : kernelGateReferencePath(this.options.projectRoot);
    mkdirSync(writable, { recursive: true });
    this.servers[which] ??= new CompileZygote(
      this.sandboxed([this.replayTool, "--compile-server"], [writable]),
      {
        cwd: this.options.projectRoot,
        env: this.processEnv,
        cpuSeconds: this.options.limits.cpuSeconds,
      },
    );
    return this.servers[which];
  }

  /**
   * Why the embedded gate compiles in fresh processes instead of its compile servers' children (a kernel that
   * cannot confine them), once a server said so; undefined otherwise.
   */
  get confinementRefused(): string | undefined {
    return this.servers.candidate?.confinementRefused ?? this.servers.trusted?.confinementRefused;
  }

  /** Stops the embedded gate's compile servers, if they run (they also end by themselves when this process does). */
  stop(): void {
    this.servers.candidate?.stop();
    this.servers.trusted?.stop();
    this.servers = {};
    for (const dir of this.referenceDirs) rmSync(dir, { recursive: true, force: true });
    this.referenceDirs.clear();
    this.references.clear();
  }

  /** The statements' references, compiled once per hole: by the reference text and the toolchain. */
  private readonly references = new Map<string, Promise<ReferenceModule>>();
  private readonly referenceDirs = new Set<string>();

  /**
   * The compiled reference of a request's statement (its check document with the verifier's `sorry` in the
   * hole): compiled once per hole by the trusted compile server (or a fresh process), which runs no candidate
   * text, under its own time limit (the candidate's deadline is not charged for it), and kept until the gate
   * stops. A failure is not kept: the next proof of the hole tries again.
   */
  private reference(
    referenceText: string,
    request: GateRequest,
    timeoutMs: number,
  ): Promise<ReferenceModule> {
    const key = createHash("sha256")
      .update(JSON.stringify(this.toolchain))
      .update("\0")
      .update(referenceText)
      .digest("hex");
    const known = this.references.get(key);
    if (known) return known;
    const made = (async (): Promise<ReferenceModule> => {
      // Outside the gate's folder, and compiled by the trusted server (whose sandbox may write this folder, and
      // the candidate server's may not): no candidate's compile can reach the reference.
      const dir = join(
        kernelGateReferencePath(this.options.projectRoot),
        `${process.pid}-${key.slice(0, 24)}`,
      );
      const source = join(dir, "FimRlvrGateCheck.lean");
      const olean = join(dir, "FimRlvrGateCheck.olean");
      const deadline = performance.now() + timeoutMs;
      try {
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir, { recursive: true });
        writeFileSync(source, referenceText);
        this.referenceDirs.add(dir);
        let compiled = await this.compileFile(source, olean, dir, deadline, "trusted");
        const blanked =
          compiled.kind === "exited" && compiled.code !== 0
            ? blankFailingCommands(
                referenceText,
                compileErrors(compiled.stdout).map((e) => e.line),
                request.headerEndLine,
                request.declarationLine,
              )
            : undefined;
        if (blanked !== undefined) {
          writeFileSync(source, blanked);
          compiled = await this.compileFile(source, olean, dir, deadline, "trusted");
        }
        if (compiled.kind === "exited" && compiled.code === 0) return { kind: "ok", olean };
        const first = compiled.kind === "exited" ? compileErrors(compiled.stdout)[0] : undefined;
        const said =
          compiled.kind === "exited"
            ? first
              ? `line ${first.line + 1}: ${first.text}`
              : `lean exited with ${compiled.code}${tail(compiled)}`
            : compiled.kind === "timeout"
              ? `it ran past ${timeoutMs} ms`
              : compiled.kind === "signalled"
                ? `killed by ${compiled.signal}`
                : compiled.message;
        this.references.delete(key);
        return {
          kind: "failed",
          message: `compiling the statement with \`sorry\` in the hole failed: ${said}`,
        };
      } catch (error) {
        this.references.delete(key);
        return {
          kind: "failed",
          message: `could not write the statement's reference under ${dir}: ${error instanceof Error ? error.message : String(error)}`,
        };
      }
    })();
    this.references.set(key, made);
    return made;
  }

  /**
   * Compiles one file to `output` (inside `dir`) by the deadline, able to write beneath `dir` alone: a child of
   * the named compile server where there is one (the candidates' or the trusted one), else a fresh Lean
   * process in a sandbox of its own whose only writable folder is `dir`.
   */
  private async compileFile(
    file: string,
    output: string,
    dir: string,
    deadline: number,
    server: "candidate" | "trusted",
  ): Promise<ProcessResult> {
    const left = Math.max(1, deadline - performance.now());
    // The module's name from its own folder alone: a private constant's name holds the module's, so the
    // reference and the candidate's document, compiled in different folders, name theirs alike.
    const args = [
      "--json",
      `-M${this.options.limits.memoryMb}`,
      "-o",
      output,
      `--root=${dirname(file)}`,
      file,
    ];
    const served = await this.compileServer(server)?.run(args, dir, left);
    return (
      served ??
      runGateProcess(this.leanCommand(args, [dir]), {
        cwd: this.options.projectRoot,
        env: this.processEnv,
        timeoutMs: left,
      })
    );
  }

  /**
   * A command line wrapped in the verifier's CPU limit and sandbox, as the server's own (launch.ts): everything
   * read-only to it (the replay program, the check document, the workspace's imports) but `writable`.
   */
  private command(base: string[], writable: readonly string[] = []): string[] {
    const { cpuSeconds } = this.options.limits;
    if (cpuSeconds > 0 && which("prlimit", this.env))
      return this.sandboxed(["prlimit", `--cpu=${cpuSeconds}`, "--", ...base], writable);
    return this.sandboxed(base, writable);
  }

  /** A command line inside the verifier's sandbox (server/sandbox.ts), where the pool uses it. */
  private sandboxed(base: string[], writable: readonly string[]): string[] {
    const { sandbox } = this.options.limits;
    if (!sandbox || !which("bwrap", this.env)) return base;
    // The embedded Lean and its replay tool live in their install, under the home the sandbox hides.
    const toolchain = this.toolchain;
    const readable = toolchain.kind === "embedded" ? [installFolder(toolchain.lean)] : [];
    return sandboxed(base, this.options.projectRoot, { writable, readable, env: this.processEnv });
  }

  private programPath(): string {
    return join(gateDir(this.options.projectRoot), `FimRlvrKernelReplay_v${KERNEL_REPLAY_VERSION}.lean`);
  }

  /** The gate's own check, once: the program runs here and replays a document of the gate's own. */
  private selfTest(timeoutMs: number): Promise<GateReport | undefined> {
    this.selfTested ??= (async () => {
      const started = performance.now();
      const elapsed = () => performance.now() - started;
      const toolchain = this.toolchain;
      if (toolchain.kind === "embedded") return this.embeddedSelfTest(toolchain.lean, timeoutMs, started);
      if (!which("lake", this.env))
        return {
          kind: "unavailable",
          message: "`lake` is not on PATH",
          action: GATE_UNAVAILABLE_ACTION,
          elapsedMs: elapsed(),
        };
      try {
        mkdirSync(gateDir(this.options.projectRoot), { recursive: true });
        writeFileSync(this.programPath(), KERNEL_REPLAY_PROGRAM);
      } catch (error) {
        return {
          kind: "unavailable",
          message: `could not write the replay program under ${gateDir(this.options.projectRoot)}: ${error instanceof Error ? error.message : String(error)}`,
          action: "make the project folder writable, then verify again",
          elapsedMs: elapsed(),
        };
      }
      const own = await this.runOnce(
        {
          documentText: "theorem fimrlvrGateSelfTest : True := trivial\n",
          declaration: ["fimrlvrGateSelfTest"],
          mayBePrivate: false,
          headerEndLine: -1,
          declarationLine: 0,
        },
        timeoutMs,
      );
      if (own.kind === "replayed" && own.axioms.length === 0) return undefined;
      return {
        kind: "unavailable",
        message: `the gate's self-test (replaying a theorem of its own, \`True := trivial\`) gave ${own.kind}${"message" in own ? `: ${own.message}` : ""}; the replay program ${this.programPath()} may not run on this Lean version`,
        action: `${GATE_UNAVAILABLE_ACTION}; report the self-test's message with your lean-toolchain`,
        elapsedMs: elapsed(),
      };
    })();
    return this.selfTested;
  }

  /**
   * The embedded gate's check, once: the replay tool builds (or is cached), a theorem of the gate's own is
   * replayed with no axioms, and one the elaborator let past the kernel (`debug.skipKernelTC` on a proof that
   * uses an `unsafe` definition) is refused by it: a gate that cannot tell the two apart is unavailable.
   */
  private async embeddedSelfTest(
    lean: string,
    timeoutMs: number,
    started: number,
  ): Promise<GateReport | undefined> {
    const elapsed = () => performance.now() - started;
    const tool = ensureNativeReplayTool(lean, this.env);
    if (tool.kind === "unavailable")
      return { kind: "unavailable", message: tool.message, action: tool.action, elapsedMs: elapsed() };
    this.replayTool = tool.path;
    const own = (lines: string[], name: string): GateRequest => ({
      documentText: EMBEDDED_SELF_TEST_TYPES + lines.join("\n") + "\n",
      declaration: [name],
      mayBePrivate: false,
      headerEndLine: 0,
      declarationLine: 4 + lines.length - 1,
    });
    const sound = await this.runOnce(
      own(["theorem fimrlvrGateSelfTest : FimRlvrGateUnit := FimRlvrGateUnit.intro"], "fimrlvrGateSelfTest"),
      timeoutMs,
    );
    const unsound = await this.runOnce(
      own(
        [
          "unsafe def fimrlvrGateLoop : FimRlvrGateEmpty := fimrlvrGateLoop",
          "set_option debug.skipKernelTC true in",
          "theorem fimrlvrGateUnsound : FimRlvrGateEmpty := fimrlvrGateLoop",
        ],
        "fimrlvrGateUnsound",
      ),
      timeoutMs,
    );
    if (sound.kind === "replayed" && sound.axioms.length === 0 && unsound.kind === "kernel-rejected")
      return undefined;
    const said = (r: GateReport) => `${r.kind}${"message" in r ? ` (${r.message})` : ""}`;
    return {
      kind: "unavailable",
      message: `the gate's self-test on the embedded Lean (${lean}, replay tool ${tool.path}) gave ${said(sound)} for a sound theorem of its own (expected replayed, no axioms) and ${said(unsound)} for one that skipped the kernel (expected kernel-rejected)`,
      action: `${GATE_UNAVAILABLE_ACTION}; report the self-test's message`,
      elapsedMs: elapsed(),
    };
  }

  /**
   * Compiles the request's header alone (its first `headerEndLine + 1` lines, no candidate text) where no
   * candidate compile reaches: a folder of its own under the reference folder, by the trusted compile server
   * (or a fresh process). Whether the workspace's imports load by themselves; only this decides that a failed
   * compile of the check document is the workspace's.
   */
  private async headerAlone(request: GateRequest, dir: string, deadline: number): Promise<HeaderCheck> {
    const lines = request.documentText.split("\n").slice(0, Math.max(0, request.headerEndLine + 1));
    const source = join(dir, "FimRlvrGateHeader.lean");
    mkdirSync(dir, { recursive: true });
    writeFileSync(source, lines.join("\n") + "\n");
    const result = await this.compileFile(
      source,
      join(dir, "FimRlvrGateHeader.olean"),
      dir,
      deadline,
      "trusted",
    );
    switch (result.kind) {
      case "exited": {
        if (result.code === 0) return { kind: "loads" };
        const first = compileErrors(result.stdout)[0];
        return {
          kind: "compile-failed",
          inHeader: true,
          message: first
            ? `line ${first.line + 1}: ${first.text}`
            : `lean exited with ${result.code} on the header alone${tail(result)}`,
        };
      }
      case "not-started":
        return {
          kind: "report",
          report: {
            kind: "unavailable",
            message: `Lean could not be started: ${result.message}`,
            action: GATE_UNAVAILABLE_ACTION,
            elapsedMs: 0,
          },
        };
      // The header alone out of time or killed says nothing of the workspace: the candidate's failure stands.
      case "timeout":
      case "signalled":
        return { kind: "loads" };
    }
  }

  ready(timeoutMs: number): Promise<GateReport | undefined> {
    return this.selfTest(timeoutMs);
  }

  async run(request: GateRequest, timeoutMs: number): Promise<GateReport> {
    const unready = await this.selfTest(timeoutMs);
    if (unready) return unready;
    return this.runOnce(request, timeoutMs);
  }

  private async runOnce(request: GateRequest, timeoutMs: number): Promise<GateReport> {
    const started = performance.now();
    const deadline = started + timeoutMs;
    const elapsed = () => Math.round((performance.now() - started) * 10) / 10;
    // Three fresh folders of this run's own, none inside another: the candidate's compile may write `dir`
    // alone; the replay's output lies in `replayDir` and the header's compile in `headerDir`, where nothing the
    // candidate's compile left running can write (a forged replay answer, a header made to fail).
    const run = `${process.pid}-${++runCounter}`;
    const dir = join(gateDir(this.options.projectRoot), `run-${run}`);
    const replayDir = join(gateDir(this.options.projectRoot), `replay-${run}`);
    const headerDir = join(kernelGateReferencePath(this.options.projectRoot), `header-${run}`);
    const source = join(dir, "FimRlvrGateCheck.lean");
    const olean = join(dir, "FimRlvrGateCheck.olean");
    try {
      mkdirSync(dir, { recursive: true });
      mkdirSync(replayDir, { recursive: true });
      writeFileSync(source, request.documentText);
      const step = (stage: GateStage, result: ProcessResult): GateReport | undefined => {
        switch (result.kind) {
          case "not-started":
            return {
              kind: "unavailable",
              message: `${this.toolchain.kind === "lake" ? "`lake`" : "the embedded Lean"} could not be started: ${result.message}`,
              action: GATE_UNAVAILABLE_ACTION,
              elapsedMs: elapsed(),
            };
          case "timeout":
            return { kind: "timeout", stage, timeoutMs, elapsedMs: elapsed() };
          case "signalled":
            return {
              kind: "crashed",
              stage,
              message: `killed by ${result.signal}${tail(result)}`,
              elapsedMs: elapsed(),
            };
          case "exited":
            return undefined;
        }
      };
      const left = () => Math.max(1, deadline - performance.now());
      // The statement's reference (once per hole; a process that runs no candidate text), compiled while the
      // candidate's document is: awaited only before the replay, which reads it.
      const referenced =
        request.referenceText === undefined
          ? undefined
          : this.reference(request.referenceText, request, timeoutMs);
      const compile = () => this.compileFile(source, olean, dir, deadline, "candidate");
      let compiled = await compile();
      // Errors only in the workspace's commands above the declaration: blank them and compile once more.
      const blanked =
        compiled.kind === "exited" && compiled.code !== 0
          ? blankFailingCommands(
              request.documentText,
              compileErrors(compiled.stdout).map((e) => e.line),
              request.headerEndLine,
              request.declarationLine,
            )
          : undefined;
      if (blanked !== undefined) {
        writeFileSync(source, blanked);
        compiled = await compile();
      }
      const compileFailure = step("compile", compiled);
      if (compileFailure) return compileFailure;
      if (compiled.kind === "exited" && compiled.code !== 0) {
        // What that process printed came from a process that ran the candidate's code (which can print a line
        // shaped like Lean's message on the header): it words the refutation, never decides the kind. The
        // failure is the workspace's only when the header fails by itself, compiled without the candidate.
        const first = compileErrors(compiled.stdout)[0];
        const header = await this.headerAlone(request, headerDir, deadline);
        if (header.kind === "report") return { ...header.report, elapsedMs: elapsed() };
        if (header.kind === "compile-failed") return { ...header, elapsedMs: elapsed() };
        return {
          kind: "compile-failed",
          message: first
            ? `line ${first.line + 1}: ${first.text}`
            : `lean exited with ${compiled.code}${tail(compiled)}`,
          inHeader: false,
          elapsedMs: elapsed(),
        };
      }
      let reference: string | undefined;
      if (referenced) {
        const made = await referenced;
        if (made.kind === "failed")
          return { kind: "no-reference", message: made.message, elapsedMs: elapsed() };
        reference = made.olean;
      }
      // On the embedded Lean the replay too is a child of the candidates' compile server: the server never ran
      // candidate code, so the child starts as clean as a new process, without Lean's start-up. It may write
      // its own folder alone (it writes nothing but its output there).
      const served =
        this.toolchain.kind === "embedded"
          ? await this.compileServer("candidate")?.run(
              ["--replay", ...this.replayTarget(olean, request, reference)],
              replayDir,
              left(),
            )
          : undefined;
      const replayed =
        served ??
        (await runGateProcess(this.replayCommand(olean, request, reference), {
          cwd: this.options.projectRoot,
          env: this.processEnv,
          timeoutMs: left(),
        }));
      const replayFailure = step("replay", replayed);
      if (replayFailure) return replayFailure;
      const answer = replayed.kind === "exited" ? parseReplayAnswer(replayed.stdout, elapsed()) : undefined;
      // Given a reference, a replayed answer must say how the statement compares: none is no confirmation.
      const unjudged = answer?.kind === "replayed" && reference !== undefined && !answer.statement;
      if (replayed.kind === "exited" && replayed.code === 0 && answer && !unjudged) return answer;
      return {
        kind: "crashed",
        stage: "replay",
        message: `the replay program gave no answer${replayed.kind === "exited" ? ` (exit ${replayed.code})${tail(replayed)}` : ""}`,
        elapsedMs: elapsed(),
      };
    } catch (error) {
      return {
        kind: "unavailable",
        message: `could not prepare the gate's files under ${dir}: ${error instanceof Error ? error.message : String(error)}`,
        action: "make the project folder writable, then verify again",
        elapsedMs: elapsed(),
      };
    } finally {
      for (const folder of [dir, replayDir, headerDir]) rmSync(folder, { recursive: true, force: true });
    }
  }
}
