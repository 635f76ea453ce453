import cors from "@fastify/cors";
import type { FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { PLUGIN } from "../plugin-names.js";
import { allowedHostNames, clientHostAllowed, type HostAllowlist } from "./hosts.js";
import { originAllowed, type OriginAllowlist } from "./origins.js";
import type { Principal, TokenRegistry } from "./tokens.js";

declare module "fastify" {
  interface FastifyRequest {
    /** Who the request authenticated as; undefined when the gateway runs without tokens. */
    principal: Principal | undefined;
    /** The tenant it acts for (`principal.tenant`); undefined without tokens. */
    tenant: string | undefined;
  }
  interface FastifyContextConfig {
    /**
     * The route serves no data and may load without a token (the inspector's page and its
     * scripts, which ask for one); a token presented is still checked and sets the principal.
     */
    tokenOptional?: boolean;
    /**
     * The route checks the Origin itself, instead of against --allowed-origins: the inspector lets
     * only its own page in (a browser sends Origin on its module scripts, even from the same origin).
     */
    checksOwnOrigin?: boolean;
    /** The route checks the Host header itself, against its own list (the inspector: --inspector-hosts). */
    checksOwnHost?: boolean;
  }
}

export interface AccessControlOptions {
  /** Undefined: no authentication (the CLI allows that only on loopback or with --insecure-no-auth). */
  tokens?: TokenRegistry;
  /** Default: no browser origin allowed. */
  allowedOrigins?: OriginAllowlist;
  /**
   * Without tokens: the names the Host header may carry (besides any IP address); a request naming
   * another is refused (DNS rebinding, hosts.ts). Ignored with tokens. Default: the loopback names.
   */
  allowedHosts?: HostAllowlist;
  /** Response headers of the dialects' own that browser clients read, besides X-Request-Id. */
  exposedHeaders?: readonly string[];
}

/** Routes a load balancer or orchestrator probes without credentials. */
const PUBLIC_ROUTES = new Set(["/healthz", "/readyz"]);
const REALM = 'Bearer realm="tau-gateway"';

/**
 * The gateway's front-door checks, as root-level `onRequest` hooks so they run for every route —
 * including WebSocket upgrades, which @fastify/websocket routes through Fastify's hooks before it
 * upgrades: a refused upgrade gets a plain HTTP 403/401 and never becomes a WebSocket.
 *
 * In order: without tokens, the Host allowlist (403); the Origin allowlist (403), CORS headers and
 * preflight answers (a browser sends no credentials on a preflight), then the bearer token (401
 * with `WWW-Authenticate: Bearer`).
 */
export const accessControl = fp<AccessControlOptions>(
  async (app, options) => {
    const allowlist = options.allowedOrigins ?? [];
    app.decorateRequest("principal", undefined);
    app.decorateRequest("tenant", undefined);

    if (!options.tokens) {
      // A gateway without tokens answers anyone who reaches it, and so a rebinding page too, unless its Host is refused.
      const hosts = options.allowedHosts ?? allowedHostNames("localhost");
      app.addHook("onRequest", async (request, reply) => {
        if (PUBLIC_ROUTES.has(request.routeOptions.url ?? "") || request.routeOptions.config?.checksOwnHost === true) return;
        if (clientHostAllowed(hosts, request.headers.host)) return;
        request.log.info({ host: request.headers.host }, "request naming a host the gateway does not answer to refused");
        const names = hosts === "*" ? "" : `${hosts.join(", ")} or an IP address`;
        return refuse(reply, 403, "forbidden_host", `this gateway answers only to the host names ${names} (see --allowed-hosts)`);
      });
    }

    app.addHook("onRequest", async (request, reply) => {
      if (originAllowed(allowlist, request.headers.origin) || request.routeOptions.config?.checksOwnOrigin === true) return;
      request.log.info({ origin: request.headers.origin }, "request from a disallowed Origin refused");
      return refuse(reply, 403, "forbidden", "this Origin is not allowed (see --allowed-origins)");
    });

    if (allowlist === "*" || allowlist.length > 0) {
      // Only allowed origins get this far, so reflecting the request's Origin is safe.
      await app.register(cors, {
        origin: allowlist === "*" ? "*" : true,
        // DELETE: a dialect's HTTP session may be ended by its client (MCP's Streamable HTTP).
        methods: ["GET", "POST", "DELETE", "OPTIONS"],
        exposedHeaders: ["X-Request-Id", ...(options.exposedHeaders ?? [])],
        maxAge: 600,
      });
    }

    const tokens = options.tokens;
    if (!tokens) return;
    app.addHook("onRequest", async (request, reply) => {
      if (PUBLIC_ROUTES.has(request.routeOptions.url ?? "")) return;
      const presented = presentedToken(request);
      const principal = presented === undefined ? undefined : tokens.authenticate(presented);
      if (principal) {
        request.principal = principal;
        request.tenant = principal.tenant;
        return;
      }
      if (presented === undefined && request.routeOptions.config?.tokenOptional === true) return;
      request.log.info({ reason: presented === undefined ? "no token" : "unknown token" }, "unauthenticated request refused");
      reply.header("WWW-Authenticate", presented === undefined ? REALM : `${REALM}, error="invalid_token"`);
      return refuse(reply, 401, "unauthorized", presented === undefined ? "a bearer token is required" : "the bearer token is not valid");
    });
  },
  { name: PLUGIN.accessControl, fastify: "5.x" },
);

/**
 * The token a client presented: `Authorization: Bearer …` (RFC 6750 §2.1), or — for browsers,
 * which cannot set headers on a WebSocket — the `access_token` query parameter (§2.3).
 */
export function presentedToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header === "string") {
    const match = /^Bearer +(\S+) *$/i.exec(header);
    return match ? match[1] : undefined;
  }
  const at = request.url.indexOf("?");
  if (at === -1) return undefined;
  const value = new URLSearchParams(request.url.slice(at + 1)).get("access_token");
  return value === null || value === "" ? undefined : value;
}

function refuse(reply: FastifyReply, status: 401 | 403, error: string, message: string): FastifyReply {
  return reply.code(status).header("Cache-Control", "no-store").send({ error, message });
}
