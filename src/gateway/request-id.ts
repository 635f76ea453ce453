import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import fp from "fastify-plugin";
import { PLUGIN } from "./plugin-names.js";
import { trustedPeer } from "./trusted-peer.js";
import type { GatewayConfig } from "./config.js";

/** What an incoming `X-Request-Id` may look like to be used as is (nginx `$request_id`, UUIDs, …). */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Request ids: a fresh UUID, or — when the request comes straight from a trusted proxy — the
 * proxy's `X-Request-Id`, so one id follows a request through both logs. Trusted is what
 * `--trust-proxy` says of the connecting peer, by the same address matching Fastify applies to
 * X-Forwarded-For: any client that reaches the gateway directly (not from a listed proxy address)
 * cannot choose the id of its own log lines.
 */
export function requestIdGenerator(config: GatewayConfig): (req: IncomingMessage) => string {
  const trustsPeer = trustedPeer(config.trustProxy ?? false);
  return (req) => {
    const incoming = req.headers["x-request-id"];
    if (typeof incoming === "string" && REQUEST_ID.test(incoming) && req.socket?.remoteAddress !== undefined && trustsPeer(req.socket.remoteAddress)) return incoming;
    return randomUUID();
  };
}

/** Every HTTP answer says which request id its log lines carry (WebSocket upgrades that succeed are answered by `ws`). */
export const requestIdHeader = fp(
  async (app) => {
    app.addHook("onRequest", async (request, reply) => {
      reply.header("X-Request-Id", request.id);
    });
  },
  { name: PLUGIN.requestId, fastify: "5.x" },
);
