/**
 * The client's side of the LSP framing, one write per message. vscode-jsonrpc's stream writer writes the
 * `Content-Length` header and the body as two writes: two system calls, and two wake-ups of a server that
 * waits for input (the first of which finds only the header). A check sends two or three messages, so
 * this halves the wake-ups the bridge causes. The frame is the library's own: the JSON text (as its
 * encoder writes it) after `Content-Length: <bytes>\r\n\r\n`, the default content type.
 */
import { AbstractMessageWriter, type Message, type MessageWriter } from "vscode-jsonrpc/node";

export class SingleWriteMessageWriter extends AbstractMessageWriter implements MessageWriter {
  private errorCount = 0;

  constructor(private readonly output: NodeJS.WritableStream) {
    super();
    output.on("error", (error: Error) => this.fireError(error));
    output.on("close", () => this.fireClose());
  }

  write(message: Message): Promise<void> {
    const body = Buffer.from(JSON.stringify(message), "utf8");
    const frame = Buffer.concat([Buffer.from(`Content-Length: ${body.byteLength}\r\n\r\n`, "ascii"), body]);
    return new Promise<void>((resolve, reject) => {
      this.output.write(frame, (error?: Error | null) => {
        if (!error) {
          this.errorCount = 0;
          resolve();
          return;
        }
        this.errorCount++;
        this.fireError(error, message, this.errorCount);
        reject(error);
      });
    });
  }

  end(): void {
    this.output.end();
  }
}
