/**
 * The service's JSON-RPC reader: vscode-jsonrpc's, over the bytes the frame guard passes on, answering what it
 * cannot read as JSON-RPC 2.0 says. A whole frame that is not JSON gets a parse error (-32700, id null); JSON that
 * is not a JSON-RPC message gets an invalid-request error (-32600, with its id when it has one). vscode-jsonrpc
 * itself only reports the first and logs the second, leaving the client waiting for an answer that never comes.
 * The connection stays open: the next frame may be good.
 */
import type { Readable } from "node:stream";
import {
  ErrorCodes,
  StreamMessageReader,
  type DataCallback,
  type Disposable,
  type Message,
} from "vscode-jsonrpc/node";

/** A JSON-RPC 2.0 message as vscode-jsonrpc dispatches it: a request, a notification or a response. */
function isJsonRpcMessage(message: unknown): message is Message {
  if (typeof message !== "object" || message === null || Array.isArray(message)) return false;
  const m = message as Record<string, unknown>;
  if (m.jsonrpc !== "2.0") return false;
  const id = m.id;
  const idOk = id === undefined || id === null || typeof id === "number" || typeof id === "string";
  if (typeof m.method === "string") return idOk;
  return idOk && id !== undefined && ("result" in m || "error" in m);
}

export class ServiceRequestReader extends StreamMessageReader {
  constructor(
    readable: Readable,
    /** Writes an error answer to the client. */
    private readonly answer: (message: Message) => void,
  ) {
    super(readable);
    // The partial-message timer only reports, and would keep the process alive (util/messageReaders.ts).
    this.partialMessageTimeout = 0;
    // A frame whose body is not JSON: the reader decoded it and failed; nothing else reports an error here (the
    // frame guard ends connections whose framing is bad before the reader sees it).
    this.onError(() => this.answerError(null, ErrorCodes.ParseError, "a frame whose body is not JSON"));
  }

  override listen(callback: DataCallback): Disposable {
    return super.listen((message: unknown) => {
      if (isJsonRpcMessage(message)) callback(message);
      else {
        const id = (message as { id?: unknown } | null)?.id;
        this.answerError(
          typeof id === "number" || typeof id === "string" ? id : null,
          ErrorCodes.InvalidRequest,
          'JSON that is not a JSON-RPC 2.0 request (an object with jsonrpc "2.0", a string method and a number or string id)',
        );
      }
    });
  }

  private answerError(id: number | string | null, code: number, what: string): void {
    this.answer({
      jsonrpc: "2.0",
      id,
      error: { code, message: `the service could not read ${what}; send LSP-framed JSON-RPC 2.0 requests` },
    } as Message);
  }
}
