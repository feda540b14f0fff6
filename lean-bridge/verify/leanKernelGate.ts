/**
 * The kernel gate on real Lean (kernelGate.ts says what it is for). For one proved check document:
 *  1. the document is written under PROJECT/.fim-rlvr/gate/ and compiled in a fresh process,
 *     `lake env lean --json -M<MB> -o <doc>.olean <doc>.lean` (Lake puts the project's imports on the path);
 *     Lean's messages come back as JSON lines, so an error is placed in the header or below it by line;
 *  2. the replay program (kernelReplayProgram.ts) runs in a second fresh process,
 *     `lake env lean --run KernelReplay.lean <doc>.olean …`: it reads the compiled module's constants (none of
 *     its code runs there) and replays the checked declaration and what it depends on through the kernel.
 * Each process runs in its own process group under the gate's deadline, inside the verifier's sandbox
 * (bubblewrap without network, where the pool uses it) and CPU limit, and is killed with what it started.
 * The program is checked once, before the first candidate, on a document of the gate's own: a Lean on which it
 * cannot run makes the gate unavailable (the workspace's matter), never a candidate's failure.
 */
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { sandboxed, sandboxTmpDir, which, type Limits } from "../server/launch";
import { kernelGatePath } from "../util/projectLayout";
import { blankFailingCommands } from "./gateDocument";
import { runGateProcess, type ProcessResult } from "./gateProcess";
import {
  GATE_UNAVAILABLE_ACTION,
  type GateAxiom,
  type GateReport,
  type GateRequest,
  type GateStage,
  type KernelGateBackend,
} from "./kernelGate";
import { GATE_ANSWER_PREFIX, KERNEL_REPLAY_PROGRAM, KERNEL_REPLAY_VERSION } from "./kernelReplayProgram";

export interface LeanGateOptions {
  projectRoot: string;
  /** The verifier's limits: Lean's -M, the CPU limit, the sandbox. */
  limits: Limits;
  env?: NodeJS.ProcessEnv;
}

/** The gate's folder in the project (inside the sandbox's writable project). */
export function gateDir(projectRoot: string): string {
  return kernelGatePath(projectRoot);
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
      return { kind: "replayed", declaration, replayed: a.replayed, axioms, elapsedMs };
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

/** The last lines a process said, for a report. */
function tail(result: { stdout: string; stderr: string }): string {
  const said = `${result.stderr}\n${result.stdout}`.trim().split("\n").slice(-6).join(" / ");
  return said ? `: ${said}` : "";
}

let runCounter = 0;

export class LeanKernelGate implements KernelGateBackend {
  readonly name = "kernel-replay" as const;
  private ready: Promise<GateReport | undefined> | undefined;

  constructor(private readonly options: LeanGateOptions) {}

  private get env(): NodeJS.ProcessEnv {
    return this.options.env ?? process.env;
  }

  /** A command line wrapped in the verifier's CPU limit and sandbox, as the server's own (launch.ts). */
  private command(args: string[]): string[] {
    let command = ["lake", "env", "lean", ...args];
    const { cpuSeconds, sandbox } = this.options.limits;
    if (cpuSeconds > 0 && which("prlimit", this.env))
      command = ["prlimit", `--cpu=${cpuSeconds}`, "--", ...command];
    if (sandbox && which("bwrap", this.env)) {
      mkdirSync(sandboxTmpDir(this.options.projectRoot), { recursive: true });
      command = sandboxed(command, this.options.projectRoot);
    }
    return command;
  }

  private programPath(): string {
    return join(gateDir(this.options.projectRoot), `FimRlvrKernelReplay_v${KERNEL_REPLAY_VERSION}.lean`);
  }

  /** The gate's own check, once: the program runs here and replays a document of the gate's own. */
  private selfTest(timeoutMs: number): Promise<GateReport | undefined> {
    this.ready ??= (async () => {
      const started = performance.now();
      const elapsed = () => performance.now() - started;
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
    return this.ready;
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
    const dir = join(gateDir(this.options.projectRoot), `run-${process.pid}-${++runCounter}`);
    const source = join(dir, "FimRlvrGateCheck.lean");
    const olean = join(dir, "FimRlvrGateCheck.olean");
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(source, request.documentText);
      const step = (stage: GateStage, result: ProcessResult): GateReport | undefined => {
        switch (result.kind) {
          case "not-started":
            return {
              kind: "unavailable",
              message: `\`lake\` could not be started: ${result.message}`,
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
      const compile = () =>
        runGateProcess(this.command(["--json", `-M${this.options.limits.memoryMb}`, "-o", olean, source]), {
          cwd: this.options.projectRoot,
          env: this.env,
          timeoutMs: left(),
        });
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
        const errors = compileErrors(compiled.stdout);
        const first = errors[0];
        return {
          kind: "compile-failed",
          message: first
            ? `line ${first.line + 1}: ${first.text}`
            : `lean exited with ${compiled.code}${tail(compiled)}`,
          // An error in the header, or none Lean could place (no header loaded, nothing elaborated).
          inHeader: first ? first.line <= request.headerEndLine : false,
          elapsedMs: elapsed(),
        };
      }
      const replayed = await runGateProcess(
        this.command([
          "--run",
          this.programPath(),
          olean,
          request.mayBePrivate ? "may-be-private" : "exact",
          ...request.declaration,
        ]),
        { cwd: this.options.projectRoot, env: this.env, timeoutMs: left() },
      );
      const replayFailure = step("replay", replayed);
      if (replayFailure) return replayFailure;
      const answer = replayed.kind === "exited" ? parseReplayAnswer(replayed.stdout, elapsed()) : undefined;
      if (replayed.kind === "exited" && replayed.code === 0 && answer) return answer;
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
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
