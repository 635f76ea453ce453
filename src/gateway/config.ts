import type { FastifyRequest } from "fastify";
import type WebSocket from "ws";
import type { AskBridge } from "../bridge/ask-bridge.js";
import type { TauUpstream } from "../tau/upstream.js";
import type { AskCallGate, AskJsonRpcOptions } from "../transports/ask-jsonrpc.js";
import type { OriginAllowlist } from "./auth/origins.js";
import type { TokenRegistry } from "./auth/tokens.js";
import type { DrainController } from "./drain.js";
import type { GatewayLimits } from "./limits.js";

/** Everything `buildGateway` needs; the CLI builds it from flags and environment variables. */
export interface GatewayConfig {
  /** Where `/tau` clients are relayed; every client gets its own upstream connection there. */
  tauUpstream: { url: string; token?: string; connectTimeoutMs?: number };
  /** The gateway's own long-lived upstream connection (the bridge connection); `/readyz` reports on it. */
  upstream: TauUpstream;
  /**
   * Serves one Ask JSON-RPC WebSocket on `/rpc`; without it the route does not exist. `connection.gate`
   * (the in-flight limit and request metrics of this connection) must wrap its calls.
   */
  askRoute?: (socket: WebSocket, request: FastifyRequest, connection: { gate: AskCallGate }) => void;
  /** pino options; false (the default) logs nothing. */
  logger?: GatewayLoggerOptions | false;
  /** Largest message accepted from clients (WebSocket message or HTTP body), in bytes. Default 32 MiB. */
  maxMessageBytes?: number;
  /** Connection, in-flight, send-buffer and keepalive limits (see limits.ts for the defaults). */
  limits?: Partial<GatewayLimits>;
  /** The Ask surface over HTTP: `POST /rpc` and `GET /rpc/events` (server-sent events); without it those routes do not exist. */
  askHttp?: AskHttpConfig;
  /** Graceful drain: while it runs `/readyz` is 503 and new WebSocket connections are closed with 1001. */
  drain?: DrainController;
  /** Bearer tokens and their tenants, checked on every route but /healthz and /readyz; absent = no authentication and no tenants. */
  tokens?: TokenRegistry;
  /** Browser origins allowed for WebSocket upgrades and CORS (`*` = any); requests without Origin always pass. Default none. */
  allowedOrigins?: OriginAllowlist;
  /** Whose X-Forwarded-For is believed (Fastify's trustProxy): every peer (true) or these proxy addresses/CIDRs. Default false. */
  trustProxy?: boolean | string[];
}

export interface AskHttpConfig {
  bridge: AskBridge;
  /** Options of the JSON-RPC connection behind each HTTP request and event stream; the tenant comes from the request. */
  jsonrpc: Omit<AskJsonRpcOptions, "tenant">;
  /** Interval of `: keepalive` comments on event streams. Default 15000. */
  sseHeartbeatMs?: number;
}

export interface GatewayLoggerOptions {
  level: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
  /** Where JSON log lines go (e.g. process.stderr). Default stdout. */
  stream?: NodeJS.WritableStream;
}

/** Room for Tau's largest request, `session.exec` with 16 MiB of stdin (base64: 4/3 of it), plus its envelope. */
export const DEFAULT_MAX_MESSAGE_BYTES = 32 * 1024 * 1024;
