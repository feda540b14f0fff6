/**
 * A client for the Lean 4 language server (or anything speaking its protocol, like the simulator).
 * It owns the server process: its own process group (so Lean's workers die with it), stderr captured for
 * error reports, the server's own requests answered, and worker crashes reported rather than thrown.
 *
 * Every wait on the connection ends: requests and writes go through `withDeadline`. A request that runs
 * past its deadline is cancelled and reported as a timeout; a write that cannot complete (the server no
 * longer reads its input) or a handshake that gets no answer kills the whole process group.
 */
import { spawn, type ChildProcess } from "node:child_process";
import {
  CancellationTokenSource,
  ResponseError,
  createMessageConnection,
  type MessageConnection,
  type NotificationType,
  type RequestParam,
  type RequestType,
} from "vscode-jsonrpc/node";
import {
  DidChangeTextDocumentNotification,
  DidCloseTextDocumentNotification,
  ExitNotification,
  InitializeRequest,
  InitializedNotification,
  InlayHintRefreshRequest,
  LSPErrorCodes,
  RegistrationRequest,
  SemanticTokensRefreshRequest,
  ShutdownRequest,
  type InitializeParams,
  type InitializeResult,
  type TextDocumentContentChangeEvent,
} from "vscode-languageserver-protocol";
import {
  DidOpen,
  FileProgress,
  LeanErrorCode,
  PublishDiagnostics,
  WaitForDiagnostics,
  type LeanClientCapabilities,
  type LeanDiagnostic,
} from "../protocol/lean";
import { withDeadline } from "./deadline";
import { DiagnosticsStore, type Progress } from "./diagnosticsStore";
import { SingleWriteMessageWriter } from "./frameWriter";
import { streamReader } from "../util/messageReaders";

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

/** The answer to a request: never a thrown error, never a wait past the deadline. */
export type RequestResult<R> =
  | { kind: "ok"; result: R }
  | { kind: "timeout" }
  | { kind: "error"; code: number; message: string }
  | { kind: "closed"; reason: string };

/** The result of writing to the server (open/change/close). */
export type SendResult = { kind: "ok"; version: number } | { kind: "closed"; reason: string };

const STDERR_LIMIT = 64 * 1024;
/** How long writing one message into the server's input may take before the server counts as hung. */
export const DEFAULT_WRITE_DEADLINE_MS = 30_000;

/** How long a server start may wait for its answer to initialize, ms (the default of `LeanServer.start`). */
export const START_TIMEOUT_MS = 120_000;

export class LeanServer {
  private readonly store = new DiagnosticsStore();
  /** The last version sent per document. Kept after a close, so a reopened document's versions go on increasing. */
  private readonly lastVersion = new Map<string, number>();
  private readonly openDocs = new Set<string>();
  private exited = false;
  private exitReason = "";
  private stderrTail = "";
  private readonly exitListeners = new Set<(reason: string) => void>();
  private stopping: Promise<void> | undefined;
  initializeResult: InitializeResult | undefined;
  /** Deadline for each write into the server's input. */
  writeDeadlineMs = DEFAULT_WRITE_DEADLINE_MS;

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
    const connection = createMessageConnection(streamReader(input), new SingleWriteMessageWriter(output));
    const server = new LeanServer(undefined, connection, { command: ["(in-process)"], cwd: process.cwd() });
    server.wire();
    connection.listen();
    const result = await server.initialize(initTimeoutMs);
    if (result.kind === "failed") server.kill("the handshake failed");
    return result;
  }

  /**
   * Starts the server and completes the LSP handshake. `signal` aborts a start under way: the process
   * group is killed and the result is `failed`.
   */
  static async start(
    spec: LaunchSpec,
    initTimeoutMs = START_TIMEOUT_MS,
    signal?: AbortSignal,
  ): Promise<StartResult> {
    const [program, ...args] = spec.command;
    if (!program) return { kind: "failed", message: "empty server command line", stderr: "" };
    if (signal?.aborted) return { kind: "failed", message: "the start was cancelled", stderr: "" };
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
    const connection = createMessageConnection(
      streamReader(child.stdout!),
      new SingleWriteMessageWriter(child.stdin!),
    );
    const server = new LeanServer(child, connection, spec);
    server.wire();
    connection.listen();
    const onAbort = () => server.kill("the start was cancelled");
    signal?.addEventListener("abort", onAbort, { once: true });
    if (signal?.aborted) onAbort();
    const result = await server.initialize(initTimeoutMs);
    signal?.removeEventListener("abort", onAbort);
    if (result.kind === "failed") server.kill("the handshake failed");
    return result;
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
    this.connection.onRequest(RegistrationRequest.type, () => undefined);
    this.connection.onRequest(SemanticTokensRefreshRequest.type, () => undefined);
    this.connection.onRequest(InlayHintRefreshRequest.type, () => undefined);
    this.connection.onNotification(PublishDiagnostics, (params) => this.store.onPublish(params));
    this.connection.onNotification(FileProgress, (params) => this.store.onProgress(params));
    // Every other notification ($/lean/ileanInfoUpdate, window/logMessage, …) is not needed for verification.
    this.connection.onUnhandledNotification(() => undefined);
  }

  private markExited(reason: string): void {
    if (this.exited) return;
    // However the server ended (exit, lost connection, killed), nothing of it may live on: Lean's file
    // workers are in its process group and would outlive a dead watchdog.
    this.killGroup();
    this.exited = true;
    this.exitReason = reason;
    for (const listener of [...this.exitListeners]) listener(reason);
    this.exitListeners.clear();
  }

  /** Settles when the server exits; `dispose` stops listening (so waits that ended do not pile up listeners). */
  private exitSignal(): { exited: Promise<string>; dispose: () => void } {
    let listener: ((reason: string) => void) | undefined;
    const exited = new Promise<string>((resolve) => {
      if (this.exited) resolve(this.exitReason);
      else {
        listener = resolve;
        this.exitListeners.add(listener);
      }
    });
    return { exited, dispose: () => listener && this.exitListeners.delete(listener) };
  }

  private async initialize(timeoutMs: number): Promise<StartResult> {
    const lean: LeanClientCapabilities = {
      incrementalDiagnosticSupport: true,
      silentDiagnosticSupport: true,
      rpcWireFormat: "v1",
    };
    const params: InitializeParams & { capabilities: { lean: LeanClientCapabilities } } = {
      processId: process.pid,
      clientInfo: { name: "fim-rlvr", version: "0.1.0" },
      rootUri: null,
      capabilities: { textDocument: { publishDiagnostics: { relatedInformation: true } }, lean },
      initializationOptions: { hasWidgets: false },
      workspaceFolders: null,
    };
    const answer = await this.request(InitializeRequest.type, params, timeoutMs);
    const failed = (message: string): StartResult => ({ kind: "failed", message, stderr: this.stderrTail });
    switch (answer.kind) {
      case "timeout":
        return failed(`no answer to initialize within ${timeoutMs} ms`);
      case "closed":
        return failed(`the server stopped during start-up: ${answer.reason}`);
      case "error":
        return failed(`the server refused initialize: ${answer.message} (code ${answer.code})`);
      case "ok": {
        this.initializeResult = answer.result;
        const sent = await this.send(InitializedNotification.type, {}, this.writeDeadlineMs);
        if (sent.kind === "closed") return failed(`the server stopped during start-up: ${sent.reason}`);
        return { kind: "started", server: this };
      }
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
    else this.exitListeners.add(listener);
  }

  isOpen(uri: string): boolean {
    return this.openDocs.has(uri);
  }

  /** The last version sent for `uri` (0 if none). */
  versionOf(uri: string): number {
    return this.lastVersion.get(uri) ?? 0;
  }

  /**
   * Sends a request and waits at most `deadlineMs` for its answer. On expiry the request is cancelled
   * (`$/cancelRequest`) and the result is `timeout` whether or not the server ever answers the cancel.
   */
  async request<P, R, E>(
    type: RequestType<P, R, E>,
    params: RequestParam<P>,
    deadlineMs: number,
  ): Promise<RequestResult<R>> {
    if (this.exited) return { kind: "closed", reason: this.exitReason };
    const cancel = new CancellationTokenSource();
    const exit = this.exitSignal();
    const answer = Promise.race([
      this.connection.sendRequest(type, params, cancel.token).then((result) => ({ result })),
      exit.exited.then((reason) => ({ exitReason: reason })),
    ]);
    const settled = await withDeadline(answer, deadlineMs, () => cancel.cancel());
    exit.dispose();
    cancel.dispose();
    if (settled.kind === "timeout") return { kind: "timeout" };
    if (settled.kind === "ok")
      return "result" in settled.value
        ? { kind: "ok", result: settled.value.result }
        : { kind: "closed", reason: settled.value.exitReason };
    const error = settled.error;
    if (error instanceof ResponseError) return { kind: "error", code: error.code, message: error.message };
    if (this.exited) return { kind: "closed", reason: this.exitReason };
    return { kind: "error", code: 0, message: error instanceof Error ? error.message : String(error) };
  }

  /**
   * Writes a notification. A write still pending after `deadlineMs` means the server stopped reading its
   * input: it is killed (a later restart gives a fresh one) and the result is `closed`.
   */
  private send<P>(
    type: NotificationType<P>,
    params: RequestParam<P>,
    deadlineMs: number,
  ): Promise<SendResult> {
    return this.write(() => this.connection.sendNotification(type, params), deadlineMs);
  }

  private async write(sending: () => Promise<void>, deadlineMs: number): Promise<SendResult> {
    if (this.exited) return { kind: "closed", reason: this.exitReason };
    const exit = this.exitSignal();
    const written = Promise.race([sending(), exit.exited]);
    const settled = await withDeadline(written, deadlineMs, () =>
      this.kill(`the server did not read its input for ${deadlineMs} ms; it was killed`),
    );
    exit.dispose();
    if (settled.kind === "ok" && !this.exited) return { kind: "ok", version: 0 };
    if (settled.kind === "error" && !this.exited)
      this.kill(`writing to the server failed: ${String(settled.error)}`);
    return { kind: "closed", reason: this.exitReason };
  }

  private nextVersion(uri: string): number {
    const version = this.versionOf(uri) + 1;
    this.lastVersion.set(uri, version);
    this.store.reset(uri, version);
    return version;
  }

  async openDocument(uri: string, text: string): Promise<SendResult> {
    const version = this.nextVersion(uri);
    this.openDocs.add(uri);
    const sent = await this.send(
      DidOpen,
      { textDocument: { uri, languageId: "lean4", version, text }, dependencyBuildMode: "once" },
      this.writeDeadlineMs,
    );
    return sent.kind === "ok" ? { kind: "ok", version } : sent;
  }

  async changeDocument(uri: string, changes: TextDocumentContentChangeEvent[]): Promise<SendResult> {
    const version = this.nextVersion(uri);
    const sent = await this.send(
      DidChangeTextDocumentNotification.type,
      { textDocument: { uri, version }, contentChanges: changes },
      this.writeDeadlineMs,
    );
    return sent.kind === "ok" ? { kind: "ok", version } : sent;
  }

  /** Closes a document (Lean ends its worker). Its version counter is kept for the next open. */
  async closeDocument(uri: string): Promise<void> {
    if (!this.openDocs.delete(uri)) return;
    this.store.forget(uri);
    await this.send(DidCloseTextDocumentNotification.type, { textDocument: { uri } }, this.writeDeadlineMs);
  }

  /** How far Lean got with a version of a document, from its last `$/lean/fileProgress`. */
  progressOf(uri: string, version: number): Progress {
    return this.store.progress(uri, version);
  }

  /**
   * Whether Lean reported a version of a document stopped by a fatal error (a `fatalError` progress report):
   * a header it could not load, or a worker that died. A worker that dies before Lean receives the wait for
   * its diagnostics leaves that wait unanswered (Lean queues it until the next edit): this tells the two apart
   * from a wait that merely ran out of time.
   */
  stoppedFatally(uri: string, version: number): boolean {
    return this.store.read(uri, version).fatal;
  }

  /**
   * Waits until every diagnostic of `version` has arrived. This, not `$/lean/fileProgress`, is the barrier:
   * Lean 4.22+ can report "processing []" before the last diagnostics of a version.
   */
  async waitForDiagnostics(uri: string, version: number, timeoutMs: number): Promise<WaitResult> {
    const answer = await this.request(WaitForDiagnostics, { uri, version }, timeoutMs);
    switch (answer.kind) {
      case "ok":
        return { kind: "ready", ...this.store.read(uri, version) };
      case "timeout":
      case "closed":
        return answer;
      case "error":
        if (answer.code === LeanErrorCode.WorkerCrashed || answer.code === LeanErrorCode.WorkerExited)
          return { kind: "crashed", reason: answer.message || "the Lean worker for this document crashed" };
        if (answer.code === LSPErrorCodes.ContentModified)
          return { kind: "closed", reason: "the document was closed or changed" };
        if (answer.code === LSPErrorCodes.RequestCancelled) return { kind: "timeout" };
        return { kind: "crashed", reason: answer.message };
    }
  }

  /**
   * Shuts down politely (shutdown, exit), each step under `graceMs`, then kills the whole process group.
   * Never throws, always returns, and is safe to call at any moment, any number of times, concurrently.
   */
  stop(graceMs = 2_000): Promise<void> {
    this.stopping ??= (async () => {
      if (!this.exited) {
        const cancel = new CancellationTokenSource();
        const exit = this.exitSignal();
        const answered = Promise.race([
          this.connection.sendRequest(ShutdownRequest.type, cancel.token),
          exit.exited,
        ]);
        const shutdown = await withDeadline(answered, graceMs, () => cancel.cancel());
        cancel.dispose();
        if (shutdown.kind === "ok" && !this.exited) {
          await this.write(() => this.connection.sendNotification(ExitNotification.type), graceMs);
          await withDeadline(exit.exited, Math.min(graceMs, 500));
        }
        exit.dispose();
      }
      this.kill("stopped");
    })();
    return this.stopping;
  }

  /** Kills the whole process group at once and ends the connection. */
  kill(reason = "killed"): void {
    this.killGroup();
    this.connection.dispose();
    this.markExited(reason);
  }

  private killGroup(): void {
    const pid = this.process?.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, "SIGKILL");
    } catch {
      // The whole group is already gone.
    }
  }

  /** The server's process id (its process group's id), when it is a child process. */
  get pid(): number | undefined {
    return this.process?.pid;
  }
}
