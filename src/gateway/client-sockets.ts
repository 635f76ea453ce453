import websocket, { type WebsocketPluginOptions } from "@fastify/websocket";
import type { FastifyPluginAsync, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { Duplex } from "node:stream";
import WebSocket from "ws";
import { clientFaultKind, describeFault, faultCloseCode } from "./client-faults.js";
import { ConnectionCap, connectionLimitMessage } from "./connection-cap.js";
import type { RecordedDialect } from "../transports/recording/transcript-lines.js";
import type { FrameTap, TappedPeer } from "../transports/recording/frame-tap.js";
import { GATEWAY_DIALECT_HEADER } from "../relay/gateway-socket.js";
import { tappedPeerOf } from "./tapped-peer.js";
import { gatewayWebSocketClass, setRecording, setSendBufferBound, setTransport } from "./gateway-websocket.js";
import { startKeepalive } from "./keepalive.js";
import type { GatewayLimits } from "./limits.js";
import type { GatewayMetrics } from "./metrics.js";
import { PLUGIN } from "./plugin-names.js";

export interface ClientSocketsOptions {
  limits: GatewayLimits;
  /** Largest client message; a larger one closes the socket with 1009. */
  maxMessageBytes: number;
  /** At close: how long clients get to answer the close frame before they are cut off (asked when closing starts). */
  closeHandshakeMs: () => number;
  /** Where every client WebSocket's messages are recorded (`serve --record`) and inspected (`--inspector`). */
  recording?: FrameTap;
}


/**
 * The WebSocket server (@fastify/websocket, which decorates `websocketServer`) and the rules every
 * client WebSocket lives by, whatever its route: the size limit, the connection cap (HTTP 503
 * before the upgrade), the send-buffer bound (slow consumers closed with 1013), ping keepalive,
 * and the connection metrics. Not encapsulated, so the hooks cover every route; registered before
 * the front-door checks, so a full gateway says so before asking for credentials.
 */
const sockets: FastifyPluginAsync<ClientSocketsOptions> = async (app, { limits, maxMessageBytes, closeHandshakeMs, recording }) => {
  const metrics = app.metrics;
  // The dialect each WebSocket route speaks, for recordings.
  const routeDialects = new Map<string, RecordedDialect>([["/tau", "tau"], ...app.dialects.map((dialect) => [dialect.route, dialect.name] as const)]);
  const cap = new ConnectionCap(limits.maxConnections);

  // First, so its own onRequest hook marks upgrade requests (`request.ws`) before the cap may refuse one:
  // the plugin then ends the refused upgrade's connection, which gives the slot back.
  app.register(websocket, {
    options: { maxPayload: maxMessageBytes, WebSocket: gatewayWebSocketClass(maxMessageBytes) },
    errorHandler: clientSocketErrorHandler(metrics),
    // The plugin's default closes clients without a code; say why instead. `ws` then waits up to
    // 30 s for each client's answering close frame: a client that never answers (stalled, or gone
    // without a FIN) would hold the shutdown past any platform's grace period and end in SIGKILL,
    // so whoever has not answered within the time left is cut off.
    preClose(done) {
      const server = app.websocketServer;
      for (const client of server.clients) client.close(1001, "gateway shutting down");
      const cutOff = setTimeout(() => {
        for (const client of server.clients) client.terminate();
      }, closeHandshakeMs());
      server.close(() => {
        clearTimeout(cutOff);
        done();
      });
    },
  });

  app.addHook("onRequest", async (request, reply) => {
    if (!isWebSocketUpgrade(request)) return;
    const release = cap.acquire();
    if (!release) {
      metrics.connectionRefused("max_connections");
      request.log.warn({ maxConnections: cap.max }, "WebSocket upgrade refused: connection limit reached");
      return reply.code(503).header("retry-after", "1").send({ error: "too_many_connections", message: connectionLimitMessage(cap.max) });
    }
    // The TCP connection closes when the WebSocket ends, or right away when the upgrade is refused.
    const socket = request.raw.socket as NodeJS.EventEmitter | undefined;
    if (socket) socket.once("close", release);
    else release();
  });

  // Who each upgrade authenticated as, for the tap: known once the front door's hooks ran, before the upgrade.
  const peers = new WeakMap<object, TappedPeer>();
  if (recording) {
    app.addHook("preHandler", async (request) => {
      if (isWebSocketUpgrade(request)) peers.set(request.raw, tappedPeerOf(request));
    });
  }

  let stopKeepalive: (() => void) | undefined;
  app.addHook("onReady", async () => {
    const server = app.websocketServer;
    // Says it is tau-gateway, and which dialect the route speaks: a --remote relay refuses a URL without it.
    server.on("headers", (headers, request) => {
      const dialect = routeDialects.get(new URL(request.url ?? "/", "http://gateway").pathname);
      if (dialect !== undefined) headers.push(`${GATEWAY_DIALECT_HEADER}: ${dialect}`);
    });
    const routes = new WeakMap<WebSocket, string>();
    server.on("connection", (socket, request) => {
      const route = metrics.routeLabel(request.url);
      routes.set(socket, route);
      metrics.connectionOpened(route, (listener) => socket.once("close", listener));
      setSendBufferBound(socket, {
        maxBytes: limits.maxBufferedBytes,
        onExceeded: () => {
          metrics.slowConsumerDropped(route);
          app.log.warn({ route, maxBufferedBytes: limits.maxBufferedBytes }, "slow client disconnected: too much data waiting unread");
        },
      });
      // The upgrade request's socket is the one `ws` writes to (an injected test request has none).
      setTransport(socket, request.socket as Duplex | undefined);
      const dialect = routeDialects.get(route);
      if (recording && dialect) setRecording(socket, recording.connection(dialect, `websocket ${route}`, peers.get(request)));
    });
    if (limits.keepaliveMs > 0) {
      stopKeepalive = startKeepalive(server, limits.keepaliveMs, (socket) => {
        const route = routes.get(socket) ?? "other";
        metrics.keepaliveTimedOut(route);
        app.log.info({ route }, "client terminated: no answer to the previous WebSocket ping");
      });
    }
  });
  app.addHook("onClose", async () => {
    stopKeepalive?.();
    await recording?.close();
  });
};

export const clientSockets = fp(sockets, {
  name: PLUGIN.clientSockets,
  fastify: "5.x",
  dependencies: [PLUGIN.services, PLUGIN.metrics],
  decorators: { fastify: ["dialects", "metrics"] },
});

/**
 * For the WebSocket plugin: what to do when a client socket errors. For protocol errors (a message
 * over the size limit: 1009, text that is not UTF-8: 1007, a malformed frame: 1002, …) `ws` has
 * already started the close with the right code and ends the connection once the close frame is
 * out; the plugin's default (terminate at once, log an error) can cut that frame off and turns
 * client mistakes into errors. Those are counted and logged once per connection (client-faults.ts).
 */
function clientSocketErrorHandler(metrics: GatewayMetrics): NonNullable<WebsocketPluginOptions["errorHandler"]> {
  const reported = new WeakSet<WebSocket>();
  return function (error, socket, request) {
    const route = metrics.routeLabel(request.url);
    const kind = clientFaultKind(error);
    if (kind) {
      metrics.clientFault(route, kind);
      if (kind === "oversized") metrics.oversizedMessage(route);
      if (!reported.has(socket)) {
        reported.add(socket);
        request.log.info({ route, kind, code: (error as NodeJS.ErrnoException).code }, describeFault(kind, faultCloseCode(error)));
      }
    } else {
      request.log.warn({ route, err: error }, "client WebSocket error");
    }
    if (socket.readyState !== WebSocket.CLOSING && socket.readyState !== WebSocket.CLOSED) socket.terminate();
};
}

function isWebSocketUpgrade(request: FastifyRequest): boolean {
  return String(request.headers.upgrade ?? "").toLowerCase() === "websocket";
}
