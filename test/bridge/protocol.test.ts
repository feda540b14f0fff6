import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough } from "node:stream";
import { StreamMessageReader, StreamMessageWriter, type Message } from "vscode-jsonrpc/node";
import { LeanServer } from "../../lean-bridge/server/leanServer";

/** A scripted server: answers initialize, and on waitForDiagnostics sends "processing []" first, then the
 * diagnostics, then the reply — the Lean 4.22+ ordering that breaks clients who trust fileProgress. */
function scriptedServer(options: { answerWaits?: boolean } = {}) {
  const toServer = new PassThrough();
  const toClient = new PassThrough();
  const reader = new StreamMessageReader(toServer);
  const writer = new StreamMessageWriter(toClient);
  const seen: Message[] = [];
  reader.listen((raw) => {
    seen.push(raw);
    const m = raw as unknown as {
      id?: number | string;
      method?: string;
      params?: { uri?: string; version?: number };
    };
    if (m.method === "initialize")
      void writer.write({
        jsonrpc: "2.0",
        id: m.id,
        result: { capabilities: {}, serverInfo: { name: "Lean 4 Server", version: "0.3.0" } },
      } as Message);
    if (m.method === "initialized")
      void writer.write({
        jsonrpc: "2.0",
        id: "register_lean_watcher",
        method: "client/registerCapability",
        params: { registrations: [] },
      } as unknown as Message);
    if (m.method === "textDocument/waitForDiagnostics" && options.answerWaits !== false) {
      const { uri, version } = m.params!;
      void (async () => {
        await writer.write({
          jsonrpc: "2.0",
          method: "$/lean/fileProgress",
          params: { textDocument: { uri, version }, processing: [] },
        } as Message);
        await writer.write({
          jsonrpc: "2.0",
          method: "textDocument/publishDiagnostics",
          params: {
            uri,
            version,
            diagnostics: [
              {
                range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } },
                severity: 1,
                message: "late error",
              },
            ],
          },
        } as Message);
        await writer.write({ jsonrpc: "2.0", id: m.id, result: {} } as Message);
      })();
    }
  });
  return { toServer, toClient, seen };
}

test("waitForDiagnostics is the barrier: diagnostics after 'processing []' are still read", async () => {
  const s = scriptedServer();
  const started = await LeanServer.connect(s.toClient, s.toServer);
  assert.equal(started.kind, "started");
  if (started.kind !== "started") return;
  const opened = await started.server.openDocument("file:///x.lean", "theorem x : True := by trivial");
  assert.equal(opened.kind, "ok");
  if (opened.kind !== "ok") return;
  const r = await started.server.waitForDiagnostics("file:///x.lean", opened.version, 2000);
  assert.equal(r.kind, "ready");
  if (r.kind === "ready")
    assert.deepEqual(
      r.diagnostics.map((d) => d.message),
      ["late error"],
    );
  // The client answered the string-id registerCapability request with the same id.
  await new Promise((resolve) => setImmediate(resolve));
  const answer = s.seen.find((m) => (m as unknown as { id?: unknown }).id === "register_lean_watcher");
  assert.ok(answer, "registerCapability was answered");
  // initialize announced Lean's client capabilities.
  const init = s.seen.find(
    (m) => (m as unknown as { method?: string }).method === "initialize",
  ) as unknown as { params: { capabilities: { lean: object } } };
  assert.deepEqual(init.params.capabilities.lean, {
    incrementalDiagnosticSupport: true,
    silentDiagnosticSupport: true,
    rpcWireFormat: "v1",
  });
  started.server.kill();
});

test("a timeout ends the wait even when the server never answers, not even the cancel", async () => {
  const s = scriptedServer({ answerWaits: false });
  const started = await LeanServer.connect(s.toClient, s.toServer);
  assert.equal(started.kind, "started");
  if (started.kind !== "started") return;
  const opened = await started.server.openDocument("file:///hung.lean", "theorem x : True := by trivial");
  assert.equal(opened.kind, "ok");
  if (opened.kind !== "ok") return;
  const r = await started.server.waitForDiagnostics("file:///hung.lean", opened.version, 200);
  assert.equal(r.kind, "timeout");
  // The client did ask the server to cancel (the message may still be in the stream: wait for it, bounded).
  const cancelled = () =>
    s.seen.some((m) => (m as unknown as { method?: string }).method === "$/cancelRequest");
  for (let k = 0; k < 1000 && !cancelled(); k++) await new Promise((resolve) => setImmediate(resolve));
  assert.ok(cancelled());
  started.server.kill();
});
