import { randomUUID } from "node:crypto";
import type { IncomingMessage } from "node:http";
import proxyAddr from "@fastify/proxy-addr";
import fp from "fastify-plugin";
import { PLUGIN } from "./plugin-names.js";
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
  const trustsPeer = peerTrust(config.trustProxy);
  return (req) => {
    const incoming = req.headers["x-request-id"];
    if (typeof incoming === "string" && REQUEST_ID.test(incoming) && trustsPeer(req.socket?.remoteAddress)) return incoming;
    return randomUUID();
  };
}

/** Whether a directly connected peer is one of the trusted proxies (`true`: every peer; absent or `false`: none). */
function peerTrust(trustProxy: GatewayConfig["trustProxy"]): (address: string | undefined) => boolean {
  if (trustProxy === true) return () => true;
  if (trustProxy === undefined || trustProxy === false) return () => false;
  const trusted = proxyAddr.compile(trustProxy);
  return (address) => address !== undefined && trusted(address, 0);
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
