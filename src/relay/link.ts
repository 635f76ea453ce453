import type WebSocket from "ws";
import type { Log } from "../shared/log.js";
import { GatewayRefusedError, openGatewaySocket } from "./gateway-socket.js";

/**
 * A relay's link to the gateway as a socket: messages in, a heartbeat that takes a silent gateway
 * as gone, and the loop that makes a new link after one is lost.
 */

/** Ping interval of the link; a gateway that has not answered the previous ping by the next is taken as gone. */
export const HEARTBEAT_MS = 20_000;
export const DEFAULT_BACKOFF = { firstMs: 100, maxMs: 5_000 };

/** Listens to a new link's socket: `message` for each text, `lost` once it closes. */
export function watchLink(socket: WebSocket, heartbeatMs: number, on: { message(text: string): void; lost(code: number): void; log: Log }): void {
  socket.on("message", (data, isBinary) => on.message(isBinary ? Buffer.from(data as Buffer).toString("utf8") : String(data)));
  socket.on("error", (error) => on.log("debug", "gateway connection error", { error: error.message }));
  // A gateway that vanished without closing (a machine gone, a network cut) answers no ping:
  // the link is taken as lost at the next one instead of when TCP gives up.
  let answered = true;
  socket.on("pong", () => (answered = true));
  const heartbeat = setInterval(() => {
    if (!answered) return socket.terminate();
    answered = false;
    socket.ping();
  }, heartbeatMs);
  heartbeat.unref();
  socket.on("close", (code) => {
    clearInterval(heartbeat);
    on.lost(code);
  });
}

export interface ReconnectOptions {
  url: string;
  token: string | undefined;
  backoff: { firstMs: number; maxMs: number };
  log: Log;
  /** The relay stopped: no more attempts. */
  stopped(): boolean;
  /** Where the relay's stop wakes the loop from its wait. */
  onWake(wake: (() => void) | undefined): void;
  /**
   * A socket is open: resolves true once the link is up (handshake and resumes repeated), false
   * when it was lost meanwhile and the loop tries again.
   */
  established(socket: WebSocket): Promise<boolean>;
  /** The gateway refused the token (rotated or revoked): the relay gives up. */
  refused(error: GatewayRefusedError): void;
}

/** Tries to make a new link, with backoff (doubling from `firstMs` to `maxMs`), until one is up, the token is refused or the relay stops. */
export async function reconnect(options: ReconnectOptions): Promise<void> {
  let delay = options.backoff.firstMs;
  while (!options.stopped()) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delay);
      options.onWake(() => {
        clearTimeout(timer);
        resolve();
      });
    });
    options.onWake(undefined);
    if (options.stopped()) return;
    delay = Math.min(delay * 2, options.backoff.maxMs);
    let socket: WebSocket;
    try {
      socket = await openGatewaySocket(options.url, options.token);
    } catch (error) {
      if (error instanceof GatewayRefusedError && error.status === 401) return options.refused(error);
      options.log("debug", "reconnecting to the gateway failed; trying again", { error: (error as Error).message, retryInMs: delay });
      continue;
    }
    if (options.stopped()) return void socket.close(1000, "client done");
    if (await options.established(socket)) return;
  }
}
