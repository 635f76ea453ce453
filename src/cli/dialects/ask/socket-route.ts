import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import { attachAskJsonRpc, type AskJsonRpcOptions } from "../../../transports/ask-jsonrpc.js";
import { serveNdjson } from "../../../transports/ndjson-endpoint.js";
import type { FrameTap } from "../../../transports/recording/frame-tap.js";
import { UnixSocketListener } from "../../../transports/unix-socket-listener.js";
import type { GatewayLimits } from "../../../gateway/limits.js";
import { PLUGIN } from "../../../gateway/plugin-names.js";

/** The label of the socket's clients in the connection and slow-consumer metrics. */
export const SOCKET_ROUTE = "socket";

export interface AskSocketOptions {
  path: string;
  /** File mode of the socket file; it is the socket's only access control. */
  mode: number;
  /** Framing of every client's connection. */
  jsonrpc: Pick<AskJsonRpcOptions, "jsonrpcMember" | "maxBatch">;
  /** The tenant every socket client acts for (a socket client presents no token). */
  tenant: string | undefined;
  limits: Pick<GatewayLimits, "maxConnections" | "maxBufferedBytes" | "idleTimeoutMs">;
  /** Longest line a client may send. */
  maxMessageBytes: number;
  /** Where each client's messages are recorded (`serve --record`) and inspected (`--inspector`). */
  recording?: FrameTap;
}

/**
 * The Ask surface on a Unix socket, NDJSON, for local clients that attach to the running gateway:
 * every client is an Ask connection like one on WebSocket `/rpc`, with the same gates (metrics,
 * in-flight limit, drain), the same message-size and slow-consumer bounds and the same sessions.
 * The socket is bound when the app gets ready; it stops accepting (and its file goes) when the
 * drain starts, and its clients are closed with the app.
 */
const askSocket: FastifyPluginAsync<AskSocketOptions> = async (app, options) => {
  const { askSurface: surface, callGates, metrics, drain } = app;
  const { limits } = options;
  let listener: UnixSocketListener | undefined;

  app.addHook("onReady", async () => {
    listener = await UnixSocketListener.listen({
      path: options.path,
      mode: options.mode,
      maxConnections: limits.maxConnections,
      onRefused: () => {
        metrics.connectionRefused("max_connections");
        app.log.warn({ route: SOCKET_ROUTE, maxConnections: limits.maxConnections }, "socket client refused: connection limit reached");
      },
      serve: (socket) => {
        metrics.connectionOpened(SOCKET_ROUTE, (closed) => socket.once("close", closed));
        const recording = options.recording?.connection("ask", "unix socket", { tenant: options.tenant });
        if (recording) socket.once("close", () => recording.close());
        const gate = callGates.connection();
        return serveNdjson(socket, socket, (send, transport) => attachAskJsonRpc(surface, send, { ...options.jsonrpc, tenant: options.tenant, gate, transport }), {
          recording,
          maxLineBytes: options.maxMessageBytes,
          maxBufferedBytes: limits.maxBufferedBytes,
          onSlowConsumer: () => {
            metrics.slowConsumerDropped(SOCKET_ROUTE);
            app.log.warn({ route: SOCKET_ROUTE, maxBufferedBytes: limits.maxBufferedBytes }, "slow client disconnected: too much data waiting unread");
          },
          // A client that never says a line, or stops reading what it is sent, holds a slot of the cap for nothing.
          firstLineTimeoutMs: limits.idleTimeoutMs,
          stallTimeoutMs: limits.idleTimeoutMs,
          onDeadline: (stage) => {
            metrics.networkTimeout(SOCKET_ROUTE, stage);
            app.log.info(
              { route: SOCKET_ROUTE, stage, idleTimeoutMs: limits.idleTimeoutMs },
              stage === "idle" ? "socket client disconnected: it sent no line within the idle deadline" : "socket client disconnected: it took nothing of what waited for it within the idle deadline",
            );
          },
          onError: (err) => app.log.error({ err }, "Ask socket connection failed to handle a message"),
        }).stream;
      },
    });
    app.log.info({ path: listener.path }, "Ask clients may attach on the Unix socket");
  });
  drain.onDrainStart(() => void listener?.stopAccepting());
  app.addHook("preClose", async () => {
    await listener?.close();
  });
};

export const askSocketListener = fp(askSocket, {
  name: "tau-gateway-ask-socket",
  fastify: "5.x",
  encapsulate: true,
  dependencies: [PLUGIN.services, PLUGIN.metrics, PLUGIN.drain, PLUGIN.callGates],
  decorators: { fastify: ["askSurface", "callGates", "metrics", "drain"] },
});
