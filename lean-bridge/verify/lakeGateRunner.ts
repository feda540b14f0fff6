/**
 * The kernel gate's processes with Lake (the project's own Lean): each compile a fresh process,
 * `lake env lean …`, whose sandbox may write the folder it is given alone; the replay the gate's Lean replay
 * program (kernelReplayProgram.ts), `lake env lean --run <program> …`, written once into the gate's folder
 * (read-only to every compile). Its self-test replays a theorem of its own before the first candidate.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { which } from "../server/launch";
import { kernelGatePath } from "../util/projectLayout";
import { runGateProcess, type ProcessResult } from "./gateProcess";
import { gateCommand, type GateContext, type GateRunner } from "./gateRunner";
import { GATE_UNAVAILABLE_ACTION, type GateReport, type GateRequest } from "./kernelGate";
import { KERNEL_REPLAY_PROGRAM, KERNEL_REPLAY_VERSION } from "./kernelReplayProgram";

export class LakeGateRunner implements GateRunner {
  readonly label = "`lake`";

  constructor(private readonly context: GateContext) {}

  private programPath(): string {
    return join(
      kernelGatePath(this.context.projectRoot),
      `FimRlvrKernelReplay_v${KERNEL_REPLAY_VERSION}.lean`,
    );
  }

  private run(
    base: readonly string[],
    writable: readonly string[],
    timeoutMs: number,
  ): Promise<ProcessResult> {
    return runGateProcess(gateCommand(base, this.context, this.context.env, { writable }), {
      cwd: this.context.projectRoot,
      env: this.context.env,
      timeoutMs,
    });
  }

  compile(args: readonly string[], dir: string, timeoutMs: number): Promise<ProcessResult> {
    return this.run(["lake", "env", "lean", ...args], [dir], timeoutMs);
  }

  replay(target: readonly string[], _dir: string, timeoutMs: number): Promise<ProcessResult> {
    return this.run(["lake", "env", "lean", "--run", this.programPath(), ...target], [], timeoutMs);
  }

  /** The program is written, then runs here and replays a document of the gate's own. */
  async selfTest(
    check: (request: GateRequest) => Promise<GateReport>,
    _timeoutMs: number,
    started: number,
  ): Promise<GateReport | undefined> {
    const elapsed = () => performance.now() - started;
    if (!which("lake", this.context.env))
      return {
        kind: "unavailable",
        message: "`lake` is not on PATH",
        action: GATE_UNAVAILABLE_ACTION,
        elapsedMs: elapsed(),
      };
    const dir = kernelGatePath(this.context.projectRoot);
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(this.programPath(), KERNEL_REPLAY_PROGRAM);
    } catch (error) {
      return {
        kind: "unavailable",
        message: `could not write the replay program under ${dir}: ${error instanceof Error ? error.message : String(error)}`,
        action: "make the project folder writable, then verify again",
        elapsedMs: elapsed(),
      };
    }
    const own = await check({
      documentText: "theorem fimrlvrGateSelfTest : True := trivial\n",
      declaration: ["fimrlvrGateSelfTest"],
      mayBePrivate: false,
      headerEndLine: -1,
      declarationLine: 0,
    });
    if (own.kind === "replayed" && own.axioms.length === 0) return undefined;
    return {
      kind: "unavailable",
      message: `the gate's self-test (replaying a theorem of its own, \`True := trivial\`) gave ${own.kind}${"message" in own ? `: ${own.message}` : ""}; the replay program ${this.programPath()} may not run on this Lean version`,
      action: `${GATE_UNAVAILABLE_ACTION}; report the self-test's message with your lean-toolchain`,
      elapsedMs: elapsed(),
    };
  }

  stop(): void {}
}
