/**
 * The real-Lean tier, protocol: what Lean 4.35.0's own server says to lean-bridge's client (LeanServer), over
 * the embedded Lean and the built prelude fixture. The server's stdout is read twice: by the client, and by a
 * recorder that keeps every message, so the tests see what the client was sent, not only what it kept.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { pathToFileURL } from "node:url";
import { DocumentSymbolRequest, FoldingRangeRequest } from "vscode-languageserver-protocol";
import type { Message, NotificationMessage, RequestMessage } from "vscode-jsonrpc";
import { buildWorkspace } from "../../lean-bridge/embedded/build";
import { embeddedLeanVersion, locateEmbeddedLean } from "../../lean-bridge/embedded/install";
import { embeddedServerLaunch } from "../../lean-bridge/embedded/launch";
import { viewWorkspace } from "../../lean-bridge/embedded/workspace";
import {
  LeanDiagnosticTag,
  PlainGoalRequest,
  PlainTermGoalRequest,
  type LeanPublishDiagnosticsParams,
} from "../../lean-bridge/protocol/lean";
import { LeanServer } from "../../lean-bridge/server/leanServer";
import { streamReader } from "../../lean-bridge/util/messageReaders";
import { announceTier, freshWorkspace, tierTest } from "./embeddedTier";

announceTier("test/real-lean/embeddedProtocol.test.ts");

const WAIT_MS = 60_000;

interface Session {
  server: LeanServer;
  messages: Message[];
  root: string;
  close: () => Promise<void>;
}

/** Builds a fresh fixture copy, starts the embedded server on it, and records everything it sends. */
async function session(): Promise<Session> {
  const ws = freshWorkspace();
  const located = locateEmbeddedLean();
  assert.equal(located.kind, "found");
  if (located.kind !== "found") throw new Error("unreachable");
  const version = await embeddedLeanVersion(located.lean);
  assert.equal(version.kind, "ok");
  const built = await buildWorkspace(ws.root, viewWorkspace(ws.root).modules, {
    lean: located.lean,
    versionText: version.kind === "ok" ? version.text : "",
    memoryMb: 4096,
    timeoutMs: WAIT_MS,
  });
  assert.equal(built.failed, 0, JSON.stringify([...built.results]));
  const { spec } = embeddedServerLaunch(located.lean, ws.root, {
    memoryMb: 4096,
    cpuSeconds: 0,
    sandbox: false,
  });
  const child = spawn(spec.command[0]!, spec.command.slice(1), {
    cwd: spec.cwd,
    env: spec.env,
    stdio: ["pipe", "pipe", "pipe"],
    detached: true,
  });
  const toClient = new PassThrough();
  const toRecorder = new PassThrough();
  child.stdout.pipe(toClient);
  child.stdout.pipe(toRecorder);
  const messages: Message[] = [];
  streamReader(toRecorder).listen((m) => messages.push(m));
  const started = await LeanServer.connect(toClient, child.stdin, WAIT_MS);
  if (started.kind !== "started") {
    child.kill("SIGKILL");
    throw new Error(started.message);
  }
  return {
    server: started.server,
    messages,
    root: ws.root,
    close: async () => {
      await started.server.stop(2_000);
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGKILL");
      ws.remove();
    },
  };
}

const isNotification = (m: Message, method: string): m is NotificationMessage =>
  (m as NotificationMessage).method === method && !("id" in m);
const isRequest = (m: Message, method: string): m is RequestMessage =>
  (m as RequestMessage).method === method && "id" in m;

/** Opens `text` as a document of the workspace and waits for all its diagnostics. */
async function open(s: Session, name: string, text: string) {
  const uri = pathToFileURL(join(s.root, name)).href;
  const sent = await s.server.openDocument(uri, text);
  assert.equal(sent.kind, "ok");
  const done = await s.server.waitForDiagnostics(uri, sent.kind === "ok" ? sent.version : 0, WAIT_MS);
  assert.equal(done.kind, "ready", JSON.stringify(done));
  return { uri, diagnostics: done.kind === "ready" ? done.diagnostics : [] };
}

tierTest(
  "embedded Lean protocol: registerCapability, fileProgress to the end, incremental and silent diagnostics, codes",
  async () => {
    const s = await session();
    try {
      const text = [
        "prelude",
        "import PreludeWs.Syntax",
        "theorem ok (p : Prop) (h : p) : p := by",
        "  exact h",
        "theorem bad (p : Prop) : p := by",
        "  exact missingName",
        // More commands with messages: a document elaborated before Lean's first report of it has all its
        // messages in that one whole publish, and an incremental one needs messages that come after it.
        ...Array.from({ length: 40 }, (_, k) => `theorem bad${k} (p : Prop) : p := by\n  exact missing${k}`),
      ].join("\n");
      // The fixture has a lakefile.toml and this machine may have no lake: the worker must not need one.
      assert.ok(existsSync(join(s.root, "lakefile.toml")));
      const { uri, diagnostics } = await open(s, "Probe.lean", text);
      assert.ok(!diagnostics.some((d) => /lake/i.test(d.message)), JSON.stringify(diagnostics));
      // Lean's watchdog asks to watch .lean and .ilean files once the client is initialized.
      const registration = s.messages.find((m) => isRequest(m, "client/registerCapability")) as
        RequestMessage | undefined;
      assert.ok(registration, "client/registerCapability was sent");
      // Lean 4.35 names the registration "lean_watcher" (protocol/lean.ts's LEAN_WATCHER_REGISTRATION_ID, which the
      // simulator sends, says "register_lean_watcher"); what it registers is the watch of .lean and .ilean files.
      const [watch] = (
        registration.params as { registrations: { id: string; method: string; registerOptions: unknown }[] }
      ).registrations;
      assert.equal(watch?.method, "workspace/didChangeWatchedFiles");
      assert.match(JSON.stringify(watch?.registerOptions), /\*\*\/\*\.lean"/);
      const progress = s.messages.filter(
        (m): m is NotificationMessage =>
          isNotification(m, "$/lean/fileProgress") &&
          (m.params as { textDocument: { uri: string } }).textDocument.uri === uri,
      );
      assert.ok(progress.length >= 1, "fileProgress for the document");
      assert.deepEqual(
        (progress.at(-1)!.params as { processing: unknown[] }).processing,
        [],
        "processing ends empty",
      );
      const published = s.messages.filter(
        (m): m is NotificationMessage =>
          isNotification(m, "textDocument/publishDiagnostics") &&
          (m.params as LeanPublishDiagnosticsParams).uri === uri,
      );
      assert.ok(
        published.some((m) => (m.params as LeanPublishDiagnosticsParams).isIncremental === true),
        "Lean 4.35 sends incremental diagnostics to a client that supports them",
      );
      // "Goals accomplished!" is silent (the client asked for silent diagnostics) and tagged.
      const accomplished = diagnostics.find((d) => d.message === "Goals accomplished!");
      assert.ok(accomplished, JSON.stringify(diagnostics));
      assert.equal(accomplished.isSilent, true);
      assert.ok(accomplished.leanTags?.includes(LeanDiagnosticTag.goalsAccomplished));
      const unknown = diagnostics.find((d) => d.severity === 1 && /missingName/.test(d.message));
      assert.ok(unknown, JSON.stringify(diagnostics));
      assert.equal(unknown.code, "lean.unknownIdentifier");
    } finally {
      await s.close();
    }
  },
);

tierTest("embedded Lean protocol: documentSymbol, foldingRange, plainGoal and plainTermGoal", async () => {
  const s = await session();
  try {
    const text = readFileSync(join(s.root, "PreludeWs", "Basic.lean"), "utf8");
    const { uri } = await open(s, "PreludeWs/Basic.lean", text);
    const symbols = await s.server.request(DocumentSymbolRequest.type, { textDocument: { uri } }, WAIT_MS);
    assert.equal(symbols.kind, "ok");
    const names = symbols.kind === "ok" ? (symbols.result ?? []).map((x) => x.name) : [];
    for (const n of ["and_swap", "or_left", "both", "trivial'", "id_term"])
      assert.ok(names.includes(n), names.join());
    const folding = await s.server.request(FoldingRangeRequest.type, { textDocument: { uri } }, WAIT_MS);
    assert.equal(folding.kind, "ok");
    assert.ok(folding.kind === "ok" && (folding.result ?? []).length > 0);
    const lines = text.split("\n");
    // At `exact And.intro …` of and_swap: one goal, `q ∧ p` as And.
    const exactLine = lines.findIndex((l) => l.includes("exact And.intro h.right"));
    const goal = await s.server.request(
      PlainGoalRequest,
      { textDocument: { uri }, position: { line: exactLine, character: 2 } },
      WAIT_MS,
    );
    assert.equal(goal.kind, "ok");
    if (goal.kind === "ok") {
      assert.equal(goal.result?.goals.length, 1, JSON.stringify(goal.result));
      assert.match(goal.result!.goals[0]!, /⊢ And q p/);
    }
    // In the term `h` of id_term: its expected type.
    const termLine = lines.findIndex((l) => l.startsWith("theorem id_term"));
    const term = await s.server.request(
      PlainTermGoalRequest,
      { textDocument: { uri }, position: { line: termLine, character: lines[termLine]!.length - 1 } },
      WAIT_MS,
    );
    assert.equal(term.kind, "ok");
    if (term.kind === "ok") assert.match(term.result?.goal ?? "", /⊢ p/);
  } finally {
    await s.close();
  }
});
