import type { WebsocketPluginOptions } from "@fastify/websocket";
import WebSocket from "ws";
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
 * option), so both rules hold on every route without each transport repeating them:
 * - `ws` closes a message over `maxPayload` with a bare 1009; the client is told the limit instead.
 * - with a `sendBufferBound`, a send to a client that is not reading closes it with 1013.
 */
export function gatewayWebSocketClass(maxMessageBytes: number): WebSocketClass {
  class GatewayWebSocket extends WebSocket {
    sendBufferBound: SendBufferBound | undefined = undefined;

    override close(code?: number, data?: string | Buffer): void {
      if (code === CLOSE_MESSAGE_TOO_BIG && data === undefined) {
        data = `message too big: the gateway accepts messages of at most ${maxMessageBytes} bytes`;
      }
      super.close(code, data);
    }

    // Every overload of ws's send, passed on as it is.
    override send(data: any, options?: any, cb?: any): void {
      const bound = this.sendBufferBound;
      if (bound && this.readyState === WebSocket.OPEN && isSlowConsumer(this.bufferedAmount, bound.maxBytes)) {
        this.sendBufferBound = undefined;
        bound.onExceeded();
        // Queued behind the backlog: a client that resumes reading still learns why.
        this.close(CLOSE_TRY_AGAIN_LATER, slowConsumerReason(bound.maxBytes));
      }
      // On a closing socket ws drops the message (and reports that to a callback).
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
