/**
 * The Lean server simulator: speaks the Lean 4 server protocol over any pair of streams, with Lean's quirks
 * (a string-id `client/registerCapability` request, refresh requests, UTF-16 positions, incremental
 * didChange, "processing []" sent before the last diagnostics, `waitForDiagnostics` as the only barrier,
 * worker crash error codes) and a cost model: a header load time when a document's worker starts, and a
 * per-declaration elaboration time, reused for every declaration above the first change, like Lean.
 * It always names itself a simulator in serverInfo and in every message it invents.
 */
import { StreamMessageReader, type Message } from "vscode-jsonrpc/node";
import { parseFile } from "../lean/commands";
import {
  LEAN_WATCHER_REGISTRATION_ID,
  type CancelParams,
  LeanErrorCode,
  type LeanDiagnostic,
  type LeanDidOpenTextDocumentParams,
  type LeanPublishDiagnosticsParams,
  type PlainGoalParams,
  type WaitForDiagnosticsParams,
} from "../protocol/lean";
import {
  ErrorCodes,
  LSPErrorCodes,
  type DidChangeTextDocumentParams,
  type DidCloseTextDocumentParams,
} from "vscode-languageserver-protocol";
import { applyChanges } from "../text/edits";
import { LineIndex, normalizeLineEndings } from "../text/positions";
import { SIMULATOR_SOURCE, goalOf, type JudgeContext, type JudgedDeclaration } from "./judge";
import { ReferenceIndex, resolveOracle, type OracleFile, type ResolvedOracle } from "./reference";
import { elaborate, planReuse, type SimDocument } from "./snapshots";
import { documentSymbols, foldingRanges, headerFailure, moduleNameOf, staleImports } from "./workspaceView";
import { projectToolchain, simulatedLean, type SimulatedLean } from "./leanVersion";
import { coalescingWriter } from "./coalescingWriter";

export { coalescingWriter };

export const SIMULATOR_NAME = "fim-rlvr Lean server simulator";
export const SIMULATOR_VERSION = "0.3.0-sim";

/**
 * The name the simulator gives itself: with the oracle it judges with, "… simulator (oracle: fim-oracle.json (427
 * declarations))", which verify/identity.ts carries into every verdict's label.
 */
export function simulatorName(oracleSource: string | undefined): string {
  return oracleSource ? `${SIMULATOR_NAME} (oracle: ${oracleSource})` : SIMULATOR_NAME;
}

/** The workspace's own oracle; one that cannot be read stops the simulator with the reason. */
function workspaceOracle(cwd: string): ResolvedOracle {
  const resolved = resolveOracle(cwd);
  if (resolved.kind === "error") throw new Error(`simulator: ${resolved.message}`);
  return resolved.resolved;
}

export interface SimulatorOptions {
  cwd: string;
  /**
   * The oracle to judge with; absent: the workspace's own `fim-oracle.json` in `cwd` when it has one
   * (reference.ts `resolveOracle`), so every way of running the simulator on a workspace judges alike.
   */
  oracle?: OracleFile;
  /** The oracle's name in serverInfo ("fim-oracle.json (427 declarations)"), when `oracle` is given. */
  oracleSource?: string;
  /** Time to load a document's imports when its worker starts (ms). */
  headerMs?: number;
  /** Time to elaborate one declaration (ms). */
  declMs?: number;
  /** Fixed time of every document change (open or edit) besides the declarations it elaborates (ms). */
  editMs?: number;
  /** Honour `sim:crash`, `sim:hang`, `sim:exit`, `sim:malformed`, `sim:throw` markers in comments (tests only). */
  faults?: boolean;
  /** Called instead of exiting the process (in-process use). */
  onExit?: (code: number) => void;
  /** The `lean-toolchain` text whose Lean is played (default: the project's file in `cwd`). */
  toolchain?: string;
}

interface RawRequest {
  id: number | string;
  method: string;
  params?: unknown;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export class Simulator {
  private readonly docs = new Map<string, SimDocument>();
  private readonly reference: ReferenceIndex;
  /** "fim-oracle.json (427 declarations)" when an oracle file judges too: said in serverInfo. */
  private readonly oracleSource: string | undefined;
  /** The Lean version played, from the project's toolchain. */
  readonly lean: SimulatedLean;
  private shuttingDown = false;
  private incrementalDiagnostics = false;
  private nextId = 0;
  private refreshSent = false;
  /** Work done, for tests and benchmarks: declarations elaborated (not reused), worker header loads. */
  readonly stats = { elaborated: 0, headerLoads: 0 };

  /** `write` receives whole frames; one call per message keeps frames from interleaving. */
  constructor(
    private readonly write: (frame: string) => void,
    private readonly options: SimulatorOptions,
  ) {
    const oracle: ResolvedOracle = options.oracle
      ? { oracle: options.oracle, ...(options.oracleSource ? { source: options.oracleSource } : {}) }
      : workspaceOracle(options.cwd);
    this.reference = new ReferenceIndex(options.cwd, oracle.oracle);
    this.oracleSource = oracle.source;
    this.lean = simulatedLean(options.toolchain ?? projectToolchain(options.cwd));
  }

  private send(message: object): void {
    const body = JSON.stringify({ jsonrpc: "2.0", ...message });
    this.write(`Content-Length: ${Buffer.byteLength(body, "utf8")}\r\n\r\n${body}`);
  }

  private reply(id: number | string, result: unknown): void {
    this.send({ id, result });
  }

  private fail(id: number | string, code: number, message: string): void {
    this.send({ id, error: { code, message } });
  }

  private notify(method: string, params: unknown): void {
    this.send({ method, params });
  }

  handle(message: Message): void {
    const m = message as unknown as Partial<RawRequest> & { result?: unknown; error?: unknown };
    if (m.method === undefined) return; // A response to one of our requests: nothing to do.
    const isRequest = m.id !== undefined && m.id !== null;
    if (isRequest && this.shuttingDown && m.method !== "exit") {
      this.fail(m.id!, ErrorCodes.InvalidRequest, "the server is shutting down");
      return;
    }
    switch (m.method) {
      case "initialize":
        return this.initialize(m as RawRequest);
      case "initialized":
        this.send({
          id: LEAN_WATCHER_REGISTRATION_ID,
          method: "client/registerCapability",
          params: {
            registrations: [
              {
                id: "workspace/didChangeWatchedFiles",
                method: "workspace/didChangeWatchedFiles",
                registerOptions: {
                  watchers: [{ globPattern: "**/*.lean" }, { globPattern: "**/lakefile.{lean,toml}" }],
                },
              },
            ],
          },
        });
        return;
      case "shutdown":
        this.shuttingDown = true;
        return this.reply(m.id!, null);
      case "exit":
        return this.exit(0);
      case "textDocument/didOpen":
        return this.didOpen(m.params as LeanDidOpenTextDocumentParams);
      case "textDocument/didChange":
        return this.didChange(m.params as DidChangeTextDocumentParams);
      case "textDocument/didClose":
        return this.didClose(m.params as DidCloseTextDocumentParams);
      case "textDocument/waitForDiagnostics":
        return this.waitForDiagnostics(m.id!, m.params as WaitForDiagnosticsParams);
      case "$/lean/plainGoal":
        return this.plainGoal(m.id!, m.params as PlainGoalParams);
      case "$/lean/plainTermGoal":
        return this.reply(m.id!, null);
      case "textDocument/documentSymbol":
        return this.documentSymbol(m.id!, m.params as { textDocument: { uri: string } });
      case "textDocument/foldingRange":
        return this.foldingRange(m.id!, m.params as { textDocument: { uri: string } });
      case "$/cancelRequest":
        return this.cancel(m.params as CancelParams);
      default:
        if (isRequest)
          this.fail(m.id!, ErrorCodes.MethodNotFound, `simulator: method not supported: ${m.method}`);
    }
  }

  private initialize(request: RawRequest): void {
    const params = request.params as
      { capabilities?: { lean?: { incrementalDiagnosticSupport?: boolean } } } | undefined;
    // Lean answers the capability from 4.31 on (lean4#13260); older versions always publish whole sets.
    this.incrementalDiagnostics =
      this.lean.incrementalDiagnostics && params?.capabilities?.lean?.incrementalDiagnosticSupport === true;
    this.reply(request.id, {
      capabilities: {
        textDocumentSync: { change: 2, openClose: true, save: { includeText: true } },
        hoverProvider: true,
        experimental: { moduleHierarchyProvider: {}, rpcProvider: { highlightMatchesProvider: {} } },
      },
      serverInfo: { name: simulatorName(this.oracleSource), version: SIMULATOR_VERSION },
    });
  }

  exit(code: number): void {
    if (this.options.onExit) this.options.onExit(code);
    else process.exit(code);
  }

  private didOpen(params: LeanDidOpenTextDocumentParams): void {
    const { uri, version, text } = params.textDocument;
    if (this.docs.has(uri)) return; // Lean ignores a second open of an open document.
    const normalized = normalizeLineEndings(text);
    const doc: SimDocument = {
      uri,
      version,
      text: normalized,
      file: parseFile(normalized),
      doneVersion: -1,
      results: [],
      crashed: false,
      workerStarted: false,
      generation: 0,
      waiters: [],
    };
    this.docs.set(uri, doc);
    this.processSafely(doc, 0);
  }

  private didChange(params: DidChangeTextDocumentParams): void {
    const doc = this.docs.get(params.textDocument.uri);
    if (!doc || params.contentChanges.length === 0) return;
    // The first changed offset, in the new text: everything above it keeps its snapshot.
    let firstChange = Number.MAX_SAFE_INTEGER;
    let text = doc.text;
    for (const change of params.contentChanges) {
      const start = "range" in change ? new LineIndex(text).offsetAt(change.range.start) : 0;
      firstChange = Math.min(firstChange, start);
      text = applyChanges(text, [change]);
    }
    doc.text = normalizeLineEndings(text);
    doc.version = params.textDocument.version;
    const headerEnd = doc.file.headerEnd;
    doc.file = parseFile(doc.text);
    if (doc.crashed || firstChange <= headerEnd) {
      // A crashed worker restarts on the next edit; an import change restarts it too (Lean exits with code 2).
      doc.crashed = false;
      doc.workerStarted = false;
      firstChange = 0;
    }
    this.processSafely(doc, firstChange);
  }

  /**
   * A simulator bug must not leave clients waiting forever: it becomes an error diagnostic (saying it is the
   * simulator's fault) and the version is marked done.
   */
  private processSafely(doc: SimDocument, firstChange: number): void {
    this.process(doc, firstChange).catch((error: unknown) => {
      const version = doc.version;
      const message = `simulator internal error (not a Lean error): ${error instanceof Error ? error.message : String(error)}`;
      // Reported on every command that was being processed, as an elaboration error would be.
      const index = new LineIndex(doc.text);
      const affected = doc.file.commands.filter((c) => c.end >= firstChange);
      const diagnostics = affected.map((c) => {
        const range = index.rangeAt(c.start, Math.min(c.end, c.start + 1));
        return { source: SIMULATOR_SOURCE, severity: 1 as const, range, fullRange: range, message };
      });
      this.notify("$/lean/fileProgress", { textDocument: { uri: doc.uri, version }, processing: [] });
      this.publish(doc, version, diagnostics, false);
      doc.doneVersion = version;
      for (const w of doc.waiters.splice(0)) this.reply(w.id, {});
    });
  }

  private didClose(params: DidCloseTextDocumentParams): void {
    const doc = this.docs.get(params.textDocument.uri);
    if (!doc) return;
    doc.generation++;
    for (const w of doc.waiters) this.fail(w.id, LSPErrorCodes.ContentModified, "File changed.");
    this.docs.delete(doc.uri);
    this.notify("textDocument/publishDiagnostics", { uri: doc.uri, diagnostics: [] });
  }

  private waitForDiagnostics(id: number | string, params: WaitForDiagnosticsParams): void {
    const doc = this.docs.get(params.uri);
    if (!doc)
      return this.fail(id, LSPErrorCodes.ContentModified, `simulator: no open document ${params.uri}`);
    if (doc.crashed)
      return this.fail(
        id,
        LeanErrorCode.WorkerCrashed,
        `Server process for ${doc.uri} crashed, likely due to a stack overflow or a bug.`,
      );
    if (doc.doneVersion >= params.version) return this.reply(id, {});
    doc.waiters.push({ id, version: params.version });
  }

  private cancel(params: CancelParams): void {
    for (const doc of this.docs.values()) {
      const k = doc.waiters.findIndex((w) => w.id === params.id);
      if (k >= 0) {
        doc.waiters.splice(k, 1);
        this.fail(params.id, LSPErrorCodes.RequestCancelled, "");
      }
    }
  }

  /** Lean's answer (RequestHandling.lean): namespaces and sections as containers, declarations inside. */
  private documentSymbol(id: number | string, params: { textDocument: { uri: string } }): void {
    const doc = this.docs.get(params.textDocument.uri);
    if (!doc)
      return this.fail(
        id,
        LSPErrorCodes.ContentModified,
        `simulator: no open document ${params.textDocument.uri}`,
      );
    this.reply(id, documentSymbols(doc.file, new LineIndex(doc.text)));
  }

  /** Lean's answer (RequestHandling.lean, `handleFoldingRange`): one region per command spanning lines. */
  private foldingRange(id: number | string, params: { textDocument: { uri: string } }): void {
    const doc = this.docs.get(params.textDocument.uri);
    if (!doc)
      return this.fail(
        id,
        LSPErrorCodes.ContentModified,
        `simulator: no open document ${params.textDocument.uri}`,
      );
    this.reply(id, foldingRanges(doc.file, new LineIndex(doc.text)));
  }

  private plainGoal(id: number | string, params: PlainGoalParams): void {
    const doc = this.docs.get(params.textDocument.uri);
    if (!doc) return this.reply(id, null);
    const offset = new LineIndex(doc.text).offsetAt(params.position);
    const decl = doc.file.commands
      .map((c) => c.declaration)
      .find((d) => d && d.byStart !== undefined && d.byStart <= offset && offset <= (d.byEnd ?? d.end));
    if (!decl) return this.reply(id, null);
    const diagnosticsHere = doc.results.some(
      (r) => r.start === decl.start && r.diagnostics.some((d) => d.severity === 1),
    );
    if (!diagnosticsHere && offset >= (decl.byEnd ?? decl.end))
      return this.reply(id, { goals: [], rendered: "no goals" });
    const goal = goalOf(doc.file.tokens, decl);
    this.reply(id, { goals: [goal], rendered: "```lean\n" + goal + "\n```" });
  }

  private publish(
    doc: SimDocument,
    version: number,
    diagnostics: LeanDiagnostic[],
    incremental: boolean,
  ): void {
    const params: LeanPublishDiagnosticsParams = { uri: doc.uri, version, diagnostics };
    if (this.incrementalDiagnostics) params.isIncremental = incremental;
    this.notify("textDocument/publishDiagnostics", params);
  }

  private progress(doc: SimDocument, version: number, from: number, index: LineIndex): void {
    const processing =
      from >= doc.text.length && doc.text.length > 0
        ? []
        : [{ range: index.rangeAt(from, doc.text.length), kind: 1 }];
    this.notify("$/lean/fileProgress", { textDocument: { uri: doc.uri, version }, processing });
  }

  private async process(doc: SimDocument, firstChange: number): Promise<void> {
    const generation = ++doc.generation;
    const version = doc.version;
    const headerMs = this.options.headerMs ?? 0;
    const declMs = this.options.declMs ?? 0;
    const editMs = this.options.editMs ?? 0;
    const stale = () => doc.generation !== generation || !this.docs.has(doc.uri);
    const plan = planReuse(doc, firstChange);
    const from = plan.from;
    const index = new LineIndex(doc.text);
    this.progress(doc, version, from, index);
    const fault = this.options.faults
      ? /sim:(crash|hang|exit|malformed|throw)/.exec(doc.text.slice(from))?.[1]
      : undefined;
    if (fault === "throw") throw new Error("fault injected by sim:throw");
    if (fault === "exit") return this.exit(3);
    if (fault === "malformed") this.write("Content-Length: 12\r\n\r\n{not json!!}");
    if (!doc.workerStarted) {
      doc.workerStarted = true;
      this.stats.headerLoads++;
      if (headerMs > 0) await sleep(headerMs);
      if (stale()) return;
    }
    if (editMs > 0) {
      await sleep(editMs);
      if (stale()) return;
    }
    if (fault === "hang") return; // Never finishes: only a cancel, an edit or a close ends the wait.
    if (fault === "crash") {
      doc.crashed = true;
      for (const w of doc.waiters.splice(0))
        this.fail(
          w.id,
          LeanErrorCode.WorkerCrashed,
          `Server process for ${doc.uri} crashed, likely due to a stack overflow or a bug.`,
        );
      return;
    }
    const header = headerFailure(doc, index, this.options.cwd, this.options.faults === true);
    if (header) {
      // As Lean does when the header cannot be loaded: one error at the top, the whole file marked fatal.
      this.notify("$/lean/fileProgress", {
        textDocument: { uri: doc.uri, version },
        processing: [{ range: index.rangeAt(0, doc.text.length), kind: 2 }],
      });
      doc.results = [];
      this.publish(doc, version, [header], false);
      doc.doneVersion = version;
      for (const w of doc.waiters.splice(0)) this.reply(w.id, {});
      return;
    }
    this.reference.refresh();
    const judged = new Map<string, JudgedDeclaration>();
    const ctx: JudgeContext = {
      file: doc.file,
      index,
      reference: this.reference,
      judged,
      recorded: [],
      moduleName: moduleNameOf(doc.uri, this.options.cwd),
      lean: this.lean,
    };
    const results = await elaborate(doc, plan, ctx, {
      declMs,
      stale,
      onElaborate: () => this.stats.elaborated++,
    });
    if (!results || stale()) return;
    doc.results = results;
    // Lean 4.22+: "processing []" may come before the last diagnostics. The simulator always does this.
    this.notify("$/lean/fileProgress", { textDocument: { uri: doc.uri, version }, processing: [] });
    // The sticky "should be rebuilt" information comes first and stays (FileWorker.lean, stickyDiagnostics).
    const sticky = this.options.faults ? staleImports(doc, index) : undefined;
    this.publish(
      doc,
      version,
      [...(sticky ? [sticky] : []), ...results.flatMap((r) => r.diagnostics)],
      false,
    );
    if (!this.refreshSent) {
      this.refreshSent = true;
      this.send({ id: `sim-refresh-${this.nextId++}`, method: "workspace/semanticTokens/refresh" });
    }
    doc.doneVersion = version;
    const ready = doc.waiters.filter((w) => w.version <= version);
    doc.waiters = doc.waiters.filter((w) => w.version > version);
    for (const w of ready) this.reply(w.id, {});
  }
}

/** Runs the simulator over a pair of streams until the input ends. */
export function runSimulator(
  input: NodeJS.ReadableStream,
  output: NodeJS.WritableStream,
  options: SimulatorOptions,
): Simulator {
  const reader = new StreamMessageReader(input);
  const writer = coalescingWriter(output);
  const simulator = new Simulator(writer.write, {
    ...options,
    onExit: (code) => {
      writer.flush(); // What was said before `exit` still reaches the client.
      if (options.onExit) options.onExit(code);
      else process.exit(code);
    },
  });
  reader.listen((message) => simulator.handle(message));
  reader.onClose(() => simulator.exit(0));
  return simulator;
}
