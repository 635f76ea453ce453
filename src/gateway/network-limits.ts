import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import type { Socket } from "node:net";
import type { GatewayLimits } from "./limits.js";
import { PLUGIN } from "./plugin-names.js";
import { trustedPeer } from "./trusted-peer.js";

export interface NetworkLimitsOptions {
  limits: GatewayLimits;
  /** The gateway's trustProxy: peers it names share their address with every client behind them. */
  trustProxy: boolean | string[];
}

/**
 * Limits on what a client's TCP connection may hold before it has said anything useful: a cap on
 * connections per client address, and deadlines for each stage before a request is in our hands —
 * a connection that sends nothing (`idleTimeoutMs`), headers that never finish (`headersTimeoutMs`,
 * WebSocket upgrades included), a request body that never finishes (`requestTimeoutMs`). Node's
 * HTTP server keeps the deadlines (the app passes them at construction, see `nodeServerOptions`);
 * this plugin decides what an idle connection's timeout means and counts every cut. A connection
 * with a response in progress is ours to finish (its call, the drain bound it), so the idle
 * deadline never cuts it; upgraded WebSockets have their own keepalive.
 */
const networkLimitsPlugin: FastifyPluginAsync<NetworkLimitsOptions> = async (app, { limits, trustProxy }) => {
  const server = app.server;
  const metrics = app.metrics;
  const answering = new WeakSet<Socket>();

  app.addHook("onRequest", async (request) => {
    answering.add(request.raw.socket);
  });
  app.addHook("onResponse", async (request) => {
    answering.delete(request.raw.socket);
  });

  server.on("timeout", (socket: Socket) => {
    if (answering.has(socket)) return;
    metrics.networkTimeout("idle");
    socket.destroy();
  });
  // Fastify's own clientError handler answers 408 and closes; this one only counts.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code !== "ERR_HTTP_REQUEST_TIMEOUT") return;
    metrics.networkTimeout(answering.has(socket) ? "request" : "headers");
  });

  const max = limits.maxConnectionsPerAddress;
  if (max > 0) {
    const exempt = trustedPeer(trustProxy);
    const open = new Map<string, number>();
    server.on("connection", (socket: Socket) => {
      const address = socket.remoteAddress;
      if (address === undefined || exempt(address)) return;
      const count = open.get(address) ?? 0;
      if (count >= max) {
        metrics.connectionRefused("max_connections_per_address");
        app.log.warn({ address, maxConnectionsPerAddress: max }, "connection refused: too many open connections from one address");
        socket.destroy();
        return;
      }
      open.set(address, count + 1);
      socket.once("close", () => {
        const left = (open.get(address) ?? 1) - 1;
        if (left > 0) open.set(address, left);
        else open.delete(address);
      });
    });
  }
};

export const networkLimits = fp(networkLimitsPlugin, {
  name: PLUGIN.networkLimits,
  fastify: "5.x",
  dependencies: [PLUGIN.metrics],
  decorators: { fastify: ["metrics"] },
});

/** The Fastify options that hand the deadlines to Node's HTTP server (which enforces them). */
export function nodeServerOptions(limits: GatewayLimits): { connectionTimeout: number; requestTimeout: number; http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } } {
  const { headersTimeoutMs, requestTimeoutMs } = limits;
  // A request's headers are part of the request: its deadline bounds theirs (Node insists on it).
  const headersTimeout = requestTimeoutMs > 0 && (headersTimeoutMs === 0 || headersTimeoutMs > requestTimeoutMs) ? requestTimeoutMs : headersTimeoutMs;
  const deadlines = [headersTimeout, requestTimeoutMs].filter((ms) => ms > 0);
  return {
    connectionTimeout: limits.idleTimeoutMs,
    requestTimeout: requestTimeoutMs,
    http: {
      headersTimeout,
      requestTimeout: limits.requestTimeoutMs,
      // Node looks for expired requests this often (its default, 30 s, would add up to 30 s to each deadline).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, ...deadlines.map((ms) => Math.floor(ms / 4)))),
    },
  };
}
