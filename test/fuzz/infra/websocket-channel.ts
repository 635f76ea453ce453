import WebSocket from "ws";
import type { RenderedPiece } from "../generators/pieces.js";
import { MAX_MESSAGE_BYTES } from "../settings.js";
import type { Delivery, MessageChannel } from "./message-channel.js";
import { ReceivingChannel } from "./receiving-channel.js";

/** RFC 6455: a binary frame where text is required, and text that is not UTF-8. */
const CLOSE_UNSUPPORTED_DATA = 1003;
const CLOSE_INVALID_PAYLOAD = 1007;
const CLOSE_MESSAGE_TOO_BIG = 1009;

const strictUtf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/** One WebSocket to the gateway; each piece is one message (text frame, or binary frame). */
export class WebSocketChannel extends ReceivingChannel implements MessageChannel {
  private constructor(private readonly socket: WebSocket) {
    super();
    socket.on("close", (code) => this.ended(code));
    socket.on("message", (data, isBinary) => {
      // A binary frame from the gateway is itself a violation: the listener is handed something unparsable.
      const text = isBinary ? `\u0000binary frame: ${(data as Buffer).toString("hex").slice(0, 200)}` : (data as Buffer).toString("utf8");
      this.deliver(text);
    });
    socket.on("error", () => undefined);
  }

  static open(url: string): Promise<WebSocketChannel> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { maxPayload: 256 * 1024 * 1024 });
      // Listeners first: the first message (Tau's `ready`) may arrive with the upgrade.
      const channel = new WebSocketChannel(socket);
      socket.once("open", () => resolve(channel));
      socket.once("unexpected-response", (_request, response) => reject(new Error(`WebSocket upgrade to ${url} refused: HTTP ${response.statusCode}`)));
      socket.once("error", reject);
    });
  }

  delivery(pieces: readonly RenderedPiece[]): Delivery {
    const units: string[] = [];
    for (let i = 0; i < pieces.length; i++) {
      const piece = pieces[i]!;
      if (piece.data.length > MAX_MESSAGE_BYTES) return { units, count: i + 1, closeCode: CLOSE_MESSAGE_TOO_BIG };
      if (piece.binary) return { units, count: i + 1, closeCode: CLOSE_UNSUPPORTED_DATA };
      try {
        units.push(strictUtf8.decode(piece.data));
      } catch {
        return { units, count: i + 1, closeCode: CLOSE_INVALID_PAYLOAD };
      }
    }
    return { units, count: pieces.length };
  }

  send(pieces: readonly RenderedPiece[]): void {
    for (const piece of pieces) this.socket.send(piece.data, { binary: piece.binary });
  }

  sendText(text: string): void {
    this.socket.send(text);
  }

  async close(): Promise<void> {
    if (this.closeCode !== undefined) return;
    this.socket.close();
    if ((await this.closed(2_000)) === undefined) this.socket.terminate();
  }
}
