import type { FastifyPluginAsync } from "fastify";
import fp from "fastify-plugin";
import type { Socket } from "node:net";
import type { GatewayLimits } from "./limits.js";
import { PLUGIN } from "./plugin-names.js";
import { Deadline } from "../shared/deadline.js";
import { trustedPeer } from "./trusted-peer.js";

export interface NetworkLimitsOptions {
  limits: GatewayLimits;
  /** The gateway's trustProxy: peers it names share their address with every client behind them. */
  trustProxy: boolean | string[];
}

/**
 * Limits on what a client's TCP connection may hold before it has said anything useful: a cap on
 * connections per client address, and deadlines for each stage before a request is in our hands —
 * a connection that sends nothing (`idleTimeoutMs`: one that never speaks, or a kept-alive one
 * between requests), headers that never finish (`headersTimeoutMs`, WebSocket upgrades included),
 * a request body that never finishes (`requestTimeoutMs`). Node's HTTP server keeps the headers
 * and request deadlines (the app passes them at construction, see `nodeServerOptions`); the idle
 * deadline is kept here, for every connection from its accept, since Node's own timers leave
 * gaps (a socket that never starts a request is not a request Node checks, and a kept-alive one
 * lives `keepAliveTimeout` plus a buffer of Node's). A connection with a request or a response in
 * progress is ours to finish (its call, the drain bound it), so the idle deadline never cuts it;
 * upgraded WebSockets have their own keepalive. Every cut is counted.
 */
const networkLimitsPlugin: FastifyPluginAsync<NetworkLimitsOptions> = async (app, { limits, trustProxy }) => {
  const server = app.server;
  const metrics = app.metrics;
  /** Requests of each connection in progress (pipelined ones included), from their start to their response's end. */
  const answering = new WeakMap<Socket, number>();
  const busy = (socket: Socket) => (answering.get(socket) ?? 0) > 0;
  /** Connections handed to the WebSocket server: their keepalive judges them from then on. */
  const upgraded = new WeakSet<Socket>();
  const idle = new WeakMap<Socket, IdleWatch>();

  const cutIdle = (socket: Socket) => {
    if (socket.destroyed || busy(socket) || upgraded.has(socket)) return;
    metrics.networkTimeout("http", "idle");
    socket.destroy();
  };

  server.on("connection", (socket: Socket) => {
    if (limits.idleTimeoutMs <= 0) return;
    const watch = new IdleWatch(socket, limits.idleTimeoutMs, () => cutIdle(socket));
    idle.set(socket, watch);
    watch.start();
    socket.once("close", () => watch.stop());
  });
  server.on("upgrade", (request: { socket: Socket }) => {
    upgraded.add(request.socket);
    idle.get(request.socket)?.stop();
  });
  app.addHook("onRequest", async (request) => {
    const socket = request.raw.socket;
    answering.set(socket, (answering.get(socket) ?? 0) + 1);
    idle.get(socket)?.stop();
  });
  app.addHook("onResponse", async (request) => {
    const socket = request.raw.socket;
    const left = (answering.get(socket) ?? 1) - 1;
    answering.set(socket, left);
    if (left === 0 && !upgraded.has(socket)) idle.get(socket)?.start();
  });

  // Node's keep-alive timer (it fires `keepAliveTimeoutBuffer` after the deadline we keep) and any
  // other socket timeout of Node's: cut only what is idle.
  server.on("timeout", (socket: Socket) => cutIdle(socket));
  // Fastify's own clientError handler answers 408 and closes; this one only counts.
  server.on("clientError", (error: NodeJS.ErrnoException, socket: Socket) => {
    if (error.code !== "ERR_HTTP_REQUEST_TIMEOUT") return;
    metrics.networkTimeout("http", busy(socket) ? "request" : "headers");
  });
  // The `Keep-Alive: timeout=N` Node advertises is the idle deadline (Fastify's default is 72 s; 0 turns it off here too).
  server.keepAliveTimeout = limits.idleTimeoutMs;

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

/**
 * The idle deadline of one connection while no request is in progress: it expires when the
 * connection sent nothing for the whole deadline. Bytes that arrived meanwhile (a request begun,
 * whose headers' deadline Node keeps) start the clock again instead. Node reads an HTTP socket
 * without `data` events, so what arrived is told by `bytesRead`.
 */
class IdleWatch {
  private readAtStart = 0;
  private readonly deadline: Deadline;

  constructor(
    private readonly socket: Socket,
    ms: number,
    expired: () => void,
  ) {
    this.deadline = new Deadline(ms, () => {
      if (this.socket.bytesRead === this.readAtStart) return expired();
      this.start();
    });
  }

  start(): void {
    this.readAtStart = this.socket.bytesRead;
    this.deadline.rearm();
  }

  stop(): void {
    this.deadline.disarm();
  }
}

export const networkLimits = fp(networkLimitsPlugin, {
  name: PLUGIN.networkLimits,
  fastify: "5.x",
  dependencies: [PLUGIN.metrics],
  decorators: { fastify: ["metrics"] },
});

/** The Fastify options that hand the deadlines to Node's HTTP server (which enforces them). */
export function nodeServerOptions(limits: GatewayLimits): { requestTimeout: number; http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number } } {
  const { headersTimeoutMs, requestTimeoutMs } = limits;
  // A request's headers are part of the request: its deadline bounds theirs (Node insists on it).
  const headersTimeout = requestTimeoutMs > 0 && (headersTimeoutMs === 0 || headersTimeoutMs > requestTimeoutMs) ? requestTimeoutMs : headersTimeoutMs;
  const deadlines = [headersTimeout, requestTimeoutMs].filter((ms) => ms > 0);
  return {
    requestTimeout: requestTimeoutMs,
    http: {
      headersTimeout,
      requestTimeout: limits.requestTimeoutMs,
      // Node looks for expired requests this often (its default, 30 s, would add up to 30 s to each deadline).
      connectionsCheckingInterval: Math.max(50, Math.min(1000, ...deadlines.map((ms) => Math.floor(ms / 4)))),
    },
  };
}
