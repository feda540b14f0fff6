/**
 * The kernel gate on real Lean (kernelGate.ts says what it is for). For one proved check document:
 *  1. the document is written to a fresh run folder under PROJECT/.fim-rlvr/gate/ and compiled by a process
 *     that may write that folder alone: `lake env lean --json -M<MB> -o <doc>.olean <doc>.lean` in a fresh
 *     process (Lake puts the project's imports on the path), or on the embedded Lean `lean --json -M<MB> -o …`
 *     with LEAN_PATH at the workspace's build (.lake/build/lib/lean, where the embedded Lean builds the
 *     workspace's modules), run as a child of the gate's candidate compile server (compileZygote.ts), which
 *     confines it to its run folder before it runs anything, and which elaborates the document on the header
 *     the server imported once (the request's `header`: the document's lines up to its header's last). That process ran the candidate's code, so nothing
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
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { kernelGatePath, kernelGateReferencePath } from "../util/projectLayout";
import type { Limits } from "../server/launch";
import { EmbeddedGateRunner } from "./embeddedGateRunner";
import { compileErrors, parseReplayAnswer, tail } from "./gateAnswers";
import { blankFailingCommands } from "./gateDocument";
import type { ProcessResult } from "./gateProcess";
import type { CompileFor, GateRunner } from "./gateRunner";
import type { GateToolchain } from "./gateToolchain";
import {
  GATE_UNAVAILABLE_ACTION,
  type GateReport,
  type GateRequest,
  type GateStage,
  type KernelGateBackend,
} from "./kernelGate";
import { LakeGateRunner } from "./lakeGateRunner";

export { compileErrors, parseReplayAnswer } from "./gateAnswers";
export { isPreludeWorkspace, localGateToolchain, type GateToolchain } from "./gateToolchain";

export interface LeanGateOptions {
  projectRoot: string;
  /** The verifier's limits: Lean's -M, the CPU limit, the sandbox. */
  limits: Limits;
  env?: NodeJS.ProcessEnv;
  /** Default: Lake. */
  toolchain?: GateToolchain;
}

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

let runCounter = 0;

/**
 * The request's header: its first `headerEndLine + 1` lines (the workspace's imports, no candidate's text), which
 * the runner may import once for every document that begins with it; undefined for a document without one.
 */
function headerText(request: Pick<GateRequest, "documentText" | "headerEndLine">): string | undefined {
  if (request.headerEndLine < 0) return undefined;
  return (
    request.documentText
      .split("\n")
      .slice(0, request.headerEndLine + 1)
      .join("\n") + "\n"
  );
}

/** Lean's -M for a statement's reference, at least (as for building the workspace's modules, embedded/choose.ts). */
const REFERENCE_MIN_MEMORY_MB = 4096;

export class LeanKernelGate implements KernelGateBackend {
  readonly name = "kernel-replay" as const;
  private selfTested: Promise<GateReport | undefined> | undefined;
  /** How this toolchain starts the gate's processes. */
  private readonly runner: GateRunner;

  constructor(private readonly options: LeanGateOptions) {
    const context = {
      projectRoot: options.projectRoot,
      limits: options.limits,
      env: options.env ?? process.env,
    };
    const toolchain = this.toolchain;
    this.runner =
      toolchain.kind === "lake"
        ? new LakeGateRunner(context)
        : new EmbeddedGateRunner(context, toolchain.lean, toolchain.buildDir);
  }

  private get toolchain(): GateToolchain {
    return this.options.toolchain ?? { kind: "lake" };
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

  /**
   * Why the embedded gate compiles in fresh processes instead of its compile servers' children (a kernel that
   * cannot confine them), once a server said so; undefined otherwise.
   */
  get confinementRefused(): string | undefined {
    return this.runner instanceof EmbeddedGateRunner ? this.runner.confinementRefused : undefined;
  }

  /**
   * Ahead of a hole's proofs: the runner may import the document's header (the embedded Lean's compile
   * servers), and the statement's reference is compiled now (once per hole, the workspace's text alone), so
   * that a hole's first proof does not wait for it. A reference that failed to compile here is not tried again
   * here (every check of the hole would pay for it); a proof's gate run tries it again, and says why it failed.
   */
  prepare(request: GateRequest, timeoutMs: number): void {
    const header = headerText(request);
    if (header) this.runner.prepare?.(header);
    if (request.referenceText === undefined) return;
    const key = this.referenceKey(request.referenceText);
    if (this.references.has(key) || this.referencesFailedAhead.has(key)) return;
    void this.reference(request.referenceText, request, timeoutMs, "ahead").then((made) => {
      if (made.kind === "failed") this.referencesFailedAhead.add(key);
    });
  }

  /** Stops what the gate keeps running (the embedded Lean's compile servers) and removes its references. */
  stop(): void {
    this.runner.stop();
    for (const dir of this.referenceDirs) rmSync(dir, { recursive: true, force: true });
    this.referenceDirs.clear();
    this.references.clear();
    this.referencesFailedAhead.clear();
  }

  /** The statements' references, compiled once per hole: by the reference text and the toolchain. */
  private readonly references = new Map<string, Promise<ReferenceModule>>();
  /** The references compiled already, by their promise: a proof of such a hole can chain its replay. */
  private readonly compiledReferences = new WeakMap<
    Promise<ReferenceModule>,
    { kind: "ok"; olean: string }
  >();
  private readonly referenceDirs = new Set<string>();
  /**
   * The references compiled, by when: ahead of the hole's proofs (`prepare`), or by a proof's gate run, which
   * then waits for it.
   */
  readonly referenceCompiles = { ahead: 0, onProof: 0 };
  /** The references `prepare` compiled and saw fail: it does not compile them again. */
  private readonly referencesFailedAhead = new Set<string>();

  /** A reference's key: its text and the toolchain that compiles it. */
  private referenceKey(referenceText: string): string {
    return createHash("sha256")
      .update(JSON.stringify(this.toolchain))
      .update("\0")
      .update(referenceText)
      .digest("hex");
  }

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
    when: keyof LeanKernelGate["referenceCompiles"],
  ): Promise<ReferenceModule> {
    const key = this.referenceKey(referenceText);
    const known = this.references.get(key);
    if (known) return known;
    this.referenceCompiles[when]++;
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
        // The reference is the workspace's own statement, no candidate's code: the checks' memory cap is for
        // candidates, and Lean counts its runtime against -M, so a small cap must not fail the workspace's part.
        const memoryMb = Math.max(this.options.limits.memoryMb, REFERENCE_MIN_MEMORY_MB);
        const header = headerText(request);
        let compiled = await this.compileFile(source, olean, dir, deadline, "trusted", memoryMb, header);
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
          compiled = await this.compileFile(source, olean, dir, deadline, "trusted", memoryMb, header);
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
    void made.then((module) => {
      if (module.kind === "ok" && this.references.get(key) === made)
        this.compiledReferences.set(made, module);
    });
    return made;
  }

  /**
   * Compiles one file to `output` (inside `dir`) by the deadline, able to write beneath `dir` alone, for a
   * candidate's document or for what holds no candidate text (`trusted`: the runner may compile it where no
   * candidate compile reaches).
   */
  private compileFile(
    file: string,
    output: string,
    dir: string,
    deadline: number,
    forWhom: CompileFor,
    memoryMb: number = this.options.limits.memoryMb,
    header?: string,
  ): Promise<ProcessResult> {
    const args = this.compileArgs(file, output, memoryMb);
    return this.runner.compile(args, dir, Math.max(1, deadline - performance.now()), forWhom, header);
  }

  /**
   * Lean's command line for one compile. The module's name from its own folder alone: a private constant's name
   * holds the module's, so the reference and the candidate's document, compiled in different folders, name
   * theirs alike.
   */
  private compileArgs(file: string, output: string, memoryMb: number): string[] {
    return ["--json", `-M${memoryMb}`, "-o", output, `--root=${dirname(file)}`, file];
  }

  /** The gate's own check, once, before any candidate (the runner's self-test). */
  private selfTest(timeoutMs: number): Promise<GateReport | undefined> {
    this.selfTested ??= this.runner.selfTest(
      (request) => this.runOnce(request, timeoutMs),
      timeoutMs,
      performance.now(),
    );
    return this.selfTested;
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
              message: `${this.runner.label} could not be started: ${result.message}`,
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
          : this.reference(request.referenceText, request, timeoutMs, "onProof");
      const header = headerText(request);
      const compile = () =>
        this.compileFile(source, olean, dir, deadline, "candidate", this.options.limits.memoryMb, header);
      // Where the reference is known already (every proof of a hole but its first), the runner may start the
      // replay the moment the compile succeeds, with no pause between the two.
      const known = referenced && this.compiledReferences.get(referenced);
      const chained =
        this.runner.compileThenReplay && (!referenced || known)
          ? await this.runner.compileThenReplay(
              {
                args: this.compileArgs(source, olean, this.options.limits.memoryMb),
                dir,
                timeoutMs: left(),
                header,
              },
              {
                target: this.replayTarget(olean, request, known ? known.olean : undefined),
                dir: replayDir,
                timeoutMs: left(),
              },
            )
          : undefined;
      let compiled = chained?.compiled ?? (await compile());
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
      // The chained replay counts only for the compile it followed (not for one compiled again, blanked).
      const replayed =
        (compiled === chained?.compiled ? await chained.replayed : undefined) ??
        (await this.runner.replay(this.replayTarget(olean, request, reference), replayDir, left(), header));
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
