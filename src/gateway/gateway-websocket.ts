import type { WebsocketPluginOptions } from "@fastify/websocket";
import type { Duplex } from "node:stream";
import WebSocket from "ws";
import type { ConnectionRecording } from "../transports/recording/recording-folder.js";
import { corkUntilNextTick } from "../tau/write-batching.js";
import { CLOSE_TRY_AGAIN_LATER, isSlowConsumer, slowConsumerReason } from "./slow-consumers.js";

const CLOSE_MESSAGE_TOO_BIG = 1009;

/** The class option as the WebSocket plugin types it. */
type WebSocketClass = NonNullable<NonNullable<WebsocketPluginOptions["options"]>["WebSocket"]>;

/** Set on a client socket to bound what may pile up unread for it (see slow-consumers.ts). */
export interface SendBufferBound {
  maxBytes: number;
  /** Runs once, when the socket is closed for being too slow. */
  onExceeded(): void;
}

/**
 * The class of every client WebSocket the gateway accepts (the WebSocket server's `WebSocket`
 * option), so these rules hold on every route without each transport repeating them:
 * - `ws` closes a message over `maxPayload` with a bare 1009; the client is told the limit instead.
 * - with a `sendBufferBound`, a send to a client that is not reading closes it with 1013.
 * - with a `transport`, the frames sent in one tick leave in one system call (write-batching.ts).
 * - with a `recording` (`serve --record`), every text message received and sent is recorded, here
 *   at the socket, whichever route and dialect wrote it: received before any handler sees it (a
 *   listener of its own, first of the socket's, set as the socket is accepted: a socket that is not
 *   recorded runs nothing for it), sent as it is handed to `ws` (recording-folder.ts).
 */
export function gatewayWebSocketClass(maxMessageBytes: number): WebSocketClass {
  class GatewayWebSocket extends WebSocket {
    sendBufferBound: SendBufferBound | undefined = undefined;
    /** The TCP (or TLS) socket `ws` writes this connection's frames to; unset, sends are not batched. */
    transport: Duplex | undefined = undefined;
    /** While this tick's sends are corked: the bytes that were still unread when the first of them was sent. */
    private unreadBeforeTick: number | undefined = undefined;
    recording: ConnectionRecording | undefined = undefined;

    override close(code?: number, data?: string | Buffer): void {
      if (code === CLOSE_MESSAGE_TOO_BIG && data === undefined) {
        data = `message too big: the gateway accepts messages of at most ${maxMessageBytes} bytes`;
      }
      super.close(code, data);
    }

    // Every overload of ws's send, passed on as it is.
    override send(data: any, options?: any, cb?: any): void {
      if (this.unreadBeforeTick === undefined) {
        const unread = this.bufferedAmount;
        if (corkUntilNextTick(this.transport)) {
          this.unreadBeforeTick = unread;
          process.nextTick(() => (this.unreadBeforeTick = undefined));
        }
      }
      // Frames corked earlier in this tick were never offered to the kernel: not a sign of a slow reader.
      const unread = this.unreadBeforeTick ?? this.bufferedAmount;
      const bound = this.sendBufferBound;
      if (bound && this.readyState === WebSocket.OPEN && isSlowConsumer(unread, bound.maxBytes)) {
        this.sendBufferBound = undefined;
        bound.onExceeded();
        // Queued behind the backlog: a client that resumes reading still learns why.
        this.close(CLOSE_TRY_AGAIN_LATER, slowConsumerReason(bound.maxBytes));
      }
      // On a closing socket ws drops the message (and reports that to a callback): not recorded, as never sent.
      if (this.recording && this.readyState === WebSocket.OPEN && (typeof data === "string" || data instanceof Uint8Array)) this.recording.server(data);
      super.send(data, options, cb);
    }
  }
  // @types/ws types the class option as the module (class and namespace); a subclass is what ws expects.
  return GatewayWebSocket as unknown as WebSocketClass;
}

/** The bound of a socket created by `gatewayWebSocketClass` (other sockets are left alone). */
export function setSendBufferBound(socket: WebSocket, bound: SendBufferBound): void {
  if ("sendBufferBound" in socket) (socket as WebSocket & { sendBufferBound: SendBufferBound | undefined }).sendBufferBound = bound;
}

/**
 * Batches the sends of a socket created by `gatewayWebSocketClass` (other sockets are left alone):
 * `transport` must be the stream `ws` writes to, i.e. the socket of the upgrade request.
 */
export function setTransport(socket: WebSocket, transport: Duplex | undefined): void {
  if (transport && "transport" in socket) (socket as WebSocket & { transport: Duplex | undefined }).transport = transport;
}

/** Records the messages of a socket created by `gatewayWebSocketClass` (other sockets are left alone) until it closes. */
export function setRecording(socket: WebSocket, recording: ConnectionRecording): void {
  if (!("recording" in socket)) return;
  (socket as WebSocket & { recording: ConnectionRecording | undefined }).recording = recording;
  // Before every other listener, so a client's message is recorded before any handler sees it.
  socket.prependListener("message", (data, isBinary) => {
    if (!isBinary) recording.client(String(data));
  });
  socket.once("close", () => recording.close());
}
