import { test } from "node:test";
import assert from "node:assert/strict";
import { PassThrough, Writable } from "node:stream";
import { SingleWriteMessageWriter } from "../../lean-bridge/server/frameWriter";
import { coalescingWriter, runSimulator } from "../../lean-bridge/simulator/server";
import { EXAMPLE } from "../helpers";

/** A stream that records each write it receives, as one string per write. */
function recorder(fail?: Error): { stream: Writable; writes: string[] } {
  const writes: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      writes.push(chunk.toString("utf8"));
      callback(fail);
    },
  });
  return { stream, writes };
}

function frame(message: object): string {
  const body = JSON.stringify({ jsonrpc: "2.0", ...message });
  return `Content-Length: ${Buffer.byteLength(body, "utf8")}\r\n\r\n${body}`;
}

test("the bridge writes each message's header and body in one write, Content-Length in bytes", async () => {
  const { stream, writes } = recorder();
  const writer = new SingleWriteMessageWriter(stream);
  await writer.write({ jsonrpc: "2.0", method: "m", params: { text: "⊢ ∀ x, x = x" } } as never);
  await writer.write({ jsonrpc: "2.0", method: "n" } as never);
  assert.equal(writes.length, 2);
  const [header, body] = writes[0]!.split("\r\n\r\n");
  assert.equal(header, `Content-Length: ${Buffer.byteLength(body!, "utf8")}`);
  assert.notEqual(Buffer.byteLength(body!, "utf8"), body!.length); // The test text is not ASCII.
  assert.deepEqual(JSON.parse(body!), { jsonrpc: "2.0", method: "m", params: { text: "⊢ ∀ x, x = x" } });
});

test("a failed write rejects and is reported to the connection", async () => {
  const { stream } = recorder(new Error("EPIPE"));
  stream.on("error", () => undefined);
  const writer = new SingleWriteMessageWriter(stream);
  const reported: unknown[] = [];
  writer.onError(([error]) => reported.push(error));
  await assert.rejects(writer.write({ jsonrpc: "2.0", method: "m" } as never), /EPIPE/);
  assert.ok(reported.some((e) => e instanceof Error && e.message === "EPIPE"));
});

test("the simulator sends the frames of one turn in one write, in order", async () => {
  const { stream, writes } = recorder();
  const writer = coalescingWriter(stream);
  writer.write("a");
  writer.write("b");
  writer.write("c");
  assert.deepEqual(writes, []); // Held until the turn ends.
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.deepEqual(writes, ["abc"]);
  writer.write("d");
  writer.flush();
  assert.deepEqual(writes, ["abc", "d"]);
  await new Promise<void>((resolve) => setImmediate(resolve));
  assert.deepEqual(writes, ["abc", "d"]); // Nothing is sent twice.
});

test("what the simulator said before `exit` is written before it exits", async () => {
  const input = new PassThrough();
  const { stream, writes } = recorder();
  const atExit: string[][] = [];
  const exited = new Promise<number>((resolve) =>
    runSimulator(input, stream, {
      cwd: EXAMPLE,
      onExit: (code) => {
        atExit.push([...writes]);
        resolve(code);
      },
    }),
  );
  // The answer to `shutdown` and the `exit` arrive in one turn: the answer must not be lost with the process.
  input.write(frame({ id: 1, method: "shutdown" }) + frame({ method: "exit" }));
  assert.equal(await exited, 0);
  assert.equal(atExit.length, 1);
  const said = atExit[0]!.join("");
  assert.match(said, /"id":1,"result":null/);
});
