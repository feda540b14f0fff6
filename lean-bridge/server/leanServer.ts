/**
 * A client for the Lean 4 language server (or anything speaking its protocol, like the simulator).
 * It owns the server process: its own process group (so Lean's workers die with it), stderr captured for
 * error reports, the server's own requests answered, and worker crashes reported rather than thrown.
 */
import { spawn, type ChildProcess } from "node:child_process";
import {
  CancellationTokenSource,
  ResponseError,
  createMessageConnection,
  type MessageConnection,
} from "vscode-jsonrpc/node";
import {
  DidChange,
  DidClose,
  DidOpen,
  FileProgress,
  LeanErrorCode,
  PublishDiagnostics,
  WaitForDiagnostics,
  type LeanClientCapabilities,
  type LeanDiagnostic,
} from "../protocol/lean";
import {
  Exit,
  InlayHintRefresh,
  Initialize,
  Initialized,
  LspErrorCode,
  RegisterCapability,
  SemanticTokensRefresh,
  Shutdown,
  type InitializeResult,
  type TextDocumentContentChangeEvent,
} from "../protocol/lsp";
import { DiagnosticsStore } from "./diagnosticsStore";

export interface LaunchSpec {
  /** argv: the program and its arguments. */
  command: string[];
  cwd: string;
  env?: NodeJS.ProcessEnv;
}

export type StartResult =
  { kind: "started"; server: LeanServer } | { kind: "failed"; message: string; stderr: string };

export type WaitResult =
  | { kind: "ready"; diagnostics: LeanDiagnostic[]; fatal: boolean }
  | { kind: "timeout" }
  | { kind: "crashed"; reason: string }
  | { kind: "closed"; reason: string };

const STDERR_LIMIT = 64 * 1024;

export class LeanServer {
  private readonly store = new DiagnosticsStore();
  private readonly versions = new Map<string, number>();
  private exited = false;
  private exitReason = "";
  private stderrTail = "";
  private readonly exitListeners: ((reason: string) => void)[] = [];

  private constructor(
    private readonly process: ChildProcess | undefined,
    private readonly connection: MessageConnection,
    readonly spec: LaunchSpec,
  ) {}

  /**
   * Connects to a server over existing streams (in-memory tests, an in-process simulator). The caller owns
   * whatever is behind the streams; `stop()` only ends the connection.
   */
  static async connect(
    input: NodeJS.ReadableStream,
    output: NodeJS.WritableStream,
    initTimeoutMs = 10_000,
  ): Promise<StartResult> {
    const connection = createMessageConnection(input, output);
    const server = new LeanServer(undefined, connection, { command: ["(in-process)"], cwd: process.cwd() });
    server.wire();
    connection.listen();
    const result = await server.initialize(initTimeoutMs);
    if (result.kind === "failed") server.kill();
    return result;
  }

  initializeResult: InitializeResult | undefined;

  /** Starts the server and completes the LSP handshake. */
  static async start(spec: LaunchSpec, initTimeoutMs = 120_000): Promise<StartResult> {
    const [program, ...args] = spec.command;
    if (!program) return { kind: "failed", message: "empty server command line", stderr: "" };
    let child: ChildProcess;
    try {
      child = spawn(program, args, {
        cwd: spec.cwd,
        env: spec.env ?? process.env,
        stdio: ["pipe", "pipe", "pipe"],
        detached: true, // Its own process group: stop() kills Lean's workers too.
      });
    } catch (error) {
      return { kind: "failed", message: `could not start ${program}: ${String(error)}`, stderr: "" };
    }
    const spawnError = await new Promise<Error | undefined>((resolve) => {
      child.once("error", resolve);
      child.once("spawn", () => resolve(undefined));
    });
    if (spawnError)
      return { kind: "failed", message: `could not start ${program}: ${spawnError.message}`, stderr: "" };
    const connection = createMessageConnection(child.stdout!, child.stdin!);
    const server = new LeanServer(child, connection, spec);
    server.wire();
    connection.listen();
    const result = await server.initialize(initTimeoutMs);
    if (result.kind === "failed") {
      server.kill();
      return result;
    }
    return { kind: "started", server };
  }

  private wire(): void {
    this.process?.stderr?.setEncoding("utf8");
    this.process?.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_LIMIT);
    });
    this.process?.on("exit", (code, signal) =>
      this.markExited(`the server exited (${signal ?? `code ${code}`})`),
    );
    this.process?.stdin?.on("error", () => this.markExited("the server's input closed"));
    this.connection.onClose(() => this.markExited("the connection to the server closed"));
    this.connection.onError(([error]) => {
      // A malformed message: note it in the error report; the connection stays up if it can.
      this.stderrTail = (this.stderrTail + `\n[fim-rlvr] protocol error: ${error.message}\n`).slice(
        -STDERR_LIMIT,
      );
    });
    // Lean registers its file watcher with a string id; vscode-jsonrpc answers whatever the id type.
    this.connection.onRequest(RegisterCapability, () => null);
    this.connection.onRequest(SemanticTokensRefresh, () => null);
    this.connection.onRequest(InlayHintRefresh, () => null);
    this.connection.onNotification(PublishDiagnostics, (params) => this.store.onPublish(params));
    this.connection.onNotification(FileProgress, (params) => this.store.onProgress(params));
    // Every other notification ($/lean/ileanInfoUpdate, window/logMessage, …) is not needed for verification.
    this.connection.onUnhandledNotification(() => undefined);
  }

  private markExited(reason: string): void {
    if (this.exited) return;
    this.exited = true;
    this.exitReason = reason;
    for (const listener of this.exitListeners) listener(reason);
  }

  private async initialize(timeoutMs: number): Promise<StartResult> {
    const lean: LeanClientCapabilities = {
      incrementalDiagnosticSupport: true,
      silentDiagnosticSupport: true,
      rpcWireFormat: "v1",
    };
    const params = {
      processId: process.pid,
      clientInfo: { name: "fim-rlvr", version: "0.1.0" },
      rootUri: null,
      capabilities: { textDocument: { publishDiagnostics: { relatedInformation: true } }, lean },
      initializationOptions: { hasWidgets: false },
      workspaceFolders: null,
    };
    const timer = new CancellationTokenSource();
    const handle = setTimeout(() => timer.cancel(), timeoutMs);
    const exited = new Promise<"exited">((resolve) => this.onExit(() => resolve("exited")));
    try {
      const result = await Promise.race([
        this.connection.sendRequest(Initialize, params, timer.token),
        exited,
      ]);
      if (result === "exited")
        return {
          kind: "failed",
          message: `the server stopped during start-up: ${this.exitReason}`,
          stderr: this.stderrTail,
        };
      this.initializeResult = result;
      await this.connection.sendNotification(Initialized, {});
      return { kind: "started", server: this };
    } catch (error) {
      const message = timer.token.isCancellationRequested
        ? `no answer to initialize within ${timeoutMs} ms`
        : String(error);
      return { kind: "failed", message, stderr: this.stderrTail };
    } finally {
      clearTimeout(handle);
    }
  }

  get isAlive(): boolean {
    return !this.exited;
  }

  get stderr(): string {
    return this.stderrTail;
  }

  get serverName(): string {
    return this.initializeResult?.serverInfo?.name ?? "unknown server";
  }

  onExit(listener: (reason: string) => void): void {
    if (this.exited) listener(this.exitReason);
    else this.exitListeners.push(listener);
  }

  isOpen(uri: string): boolean {
    return this.versions.has(uri);
  }

  async open(uri: string, text: string): Promise<number> {
    const version = 1;
    this.versions.set(uri, version);
    this.store.reset(uri, version);
    await this.connection.sendNotification(DidOpen, {
      textDocument: { uri, languageId: "lean4", version, text },
      dependencyBuildMode: "once",
    });
    return version;
  }

  async change(uri: string, changes: TextDocumentContentChangeEvent[]): Promise<number> {
    const version = (this.versions.get(uri) ?? 0) + 1;
    this.versions.set(uri, version);
    this.store.reset(uri, version);
    await this.connection.sendNotification(DidChange, {
      textDocument: { uri, version },
      contentChanges: changes,
    });
    return version;
  }

  async close(uri: string): Promise<void> {
    if (!this.versions.delete(uri)) return;
    this.store.forget(uri);
    if (!this.exited)
      await this.connection.sendNotification(DidClose, { textDocument: { uri } }).catch(() => undefined);
  }

  /**
   * Waits until every diagnostic of `version` has arrived. This, not `$/lean/fileProgress`, is the barrier:
   * Lean 4.22+ can report "processing []" before the last diagnostics of a version.
   */
  async waitForDiagnostics(uri: string, version: number, timeoutMs: number): Promise<WaitResult> {
    if (this.exited) return { kind: "closed", reason: this.exitReason };
    const cancel = new CancellationTokenSource();
    let timedOut = false;
    let handle: NodeJS.Timeout | undefined;
    // The timer itself ends the wait: a hung worker may never answer the cancel.
    const timeout = new Promise<WaitResult>((resolve) => {
      handle = setTimeout(() => {
        timedOut = true;
        cancel.cancel(); // vscode-jsonrpc sends $/cancelRequest; Lean answers -32800 when it can.
        resolve({ kind: "timeout" });
      }, timeoutMs);
    });
    let onExit: ((reason: string) => void) | undefined;
    const exited = new Promise<WaitResult>((resolve) => {
      onExit = (reason) => resolve({ kind: "closed", reason });
      this.exitListeners.push(onExit);
    });
    try {
      const request = this.connection.sendRequest(WaitForDiagnostics, { uri, version }, cancel.token).then(
        (): WaitResult => ({ kind: "ready", ...this.store.read(uri, version) }),
        (error: unknown): WaitResult => this.waitFailure(error, timedOut),
      );
      return await Promise.race([request, exited, timeout]);
    } finally {
      clearTimeout(handle);
      const k = onExit ? this.exitListeners.indexOf(onExit) : -1;
      if (k >= 0) this.exitListeners.splice(k, 1);
    }
  }

  private waitFailure(error: unknown, timedOut: boolean): WaitResult {
    if (timedOut) return { kind: "timeout" };
    if (error instanceof ResponseError) {
      if (error.code === LeanErrorCode.WorkerCrashed || error.code === LeanErrorCode.WorkerExited)
        return { kind: "crashed", reason: error.message || "the Lean worker for this document crashed" };
      if (error.code === LspErrorCode.ContentModified)
        return { kind: "closed", reason: "the document was closed or changed" };
      if (error.code === LspErrorCode.RequestCancelled) return { kind: "timeout" };
    }
    if (this.exited) return { kind: "closed", reason: this.exitReason };
    return { kind: "crashed", reason: error instanceof Error ? error.message : String(error) };
  }

  /** Shuts down politely, then kills the whole process group. Never throws. */
  async stop(graceMs = 2_000): Promise<void> {
    if (!this.exited) {
      const t = new CancellationTokenSource();
      const timer = setTimeout(() => t.cancel(), graceMs);
      try {
        await this.connection.sendRequest(Shutdown, t.token);
        await this.connection.sendNotification(Exit);
      } catch {
        // The server is gone or hung; the kill below handles both.
      } finally {
        clearTimeout(timer);
      }
      if (!this.exited) {
        await new Promise<void>((resolve) => {
          const t2 = setTimeout(resolve, Math.min(graceMs, 500));
          this.onExit(() => {
            clearTimeout(t2);
            resolve();
          });
        });
      }
    }
    this.kill();
  }

  kill(): void {
    const pid = this.process?.pid;
    if (pid !== undefined) {
      try {
        process.kill(-pid, "SIGKILL");
      } catch {
        // Already gone.
      }
    }
    this.connection.dispose();
    this.markExited("stopped");
  }
}
